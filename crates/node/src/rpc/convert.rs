//! Stored blocks, transactions, receipts and logs in their RPC shapes (geth's field sets).

use alloy_consensus::{
    transaction::Recovered, Block as ConsensusBlock, ReceiptEnvelope, Sealed, Transaction as _,
    TxEnvelope,
};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{TxKind, U256};
use alloy_rpc_types_eth::{
    Block, BlockTransactions, Header as RpcHeader, Transaction, TransactionReceipt,
};

use crate::storage::StoredBlock;

/// The RPC header of a stored block.
pub(super) fn rpc_header(block: &StoredBlock) -> RpcHeader {
    let size = block_size(block);
    RpcHeader::from_consensus(
        Sealed::new_unchecked(block.header.clone(), block.hash),
        None,
        Some(U256::from(size)),
    )
}

fn block_size(block: &StoredBlock) -> usize {
    let b = ConsensusBlock {
        header: block.header.clone(),
        body: block.body.clone(),
    };
    alloy_rlp::Encodable::length(&b)
}

/// A block with transaction hashes or full transactions.
pub(super) fn rpc_block(block: &StoredBlock, full: bool) -> Block {
    let transactions = if full {
        BlockTransactions::Full(
            (0..block.body.transactions.len())
                .map(|i| rpc_tx_in_block(block, i))
                .collect(),
        )
    } else {
        BlockTransactions::Hashes(
            block
                .body
                .transactions
                .iter()
                .map(|t| t.trie_hash())
                .collect(),
        )
    };
    Block {
        header: rpc_header(block),
        uncles: vec![],
        transactions,
        withdrawals: block.body.withdrawals.clone(),
    }
}

/// Transaction `index` of a block.
pub(super) fn rpc_tx_in_block(block: &StoredBlock, index: usize) -> Transaction {
    let tx = block.body.transactions[index].clone();
    let base_fee = block.header.base_fee_per_gas;
    Transaction {
        effective_gas_price: Some(tx.effective_gas_price(base_fee)),
        inner: Recovered::new_unchecked(tx, block.senders[index]),
        block_hash: Some(block.hash),
        block_number: Some(block.header.number),
        transaction_index: Some(index as u64),
        block_timestamp: Some(block.header.timestamp),
    }
}

/// A pooled (not yet mined) transaction; like geth its `gasPrice` is the fee cap.
pub(super) fn rpc_pending_tx(tx: &Recovered<TxEnvelope>) -> Transaction {
    Transaction {
        inner: tx.clone(),
        block_hash: None,
        block_number: None,
        transaction_index: None,
        effective_gas_price: Some(tx.max_fee_per_gas()),
        block_timestamp: None,
    }
}

/// All receipts of a block in RPC shape.
pub(super) fn rpc_receipts(
    block: &StoredBlock,
    receipts: &[ReceiptEnvelope],
) -> Vec<TransactionReceipt> {
    let mut out = Vec::with_capacity(receipts.len());
    let mut log_index = 0;
    let mut prev_cumulative = 0;
    for (i, r) in receipts.iter().enumerate() {
        let tx = &block.body.transactions[i];
        let from = block.senders[i];
        let logs = crate::logs::tx_logs(block, r, i, log_index);
        log_index += logs.len();
        let cumulative = r.cumulative_gas_used();
        let gas_used = cumulative - prev_cumulative;
        prev_cumulative = cumulative;
        let contract_address = match tx.kind() {
            TxKind::Create => Some(from.create(tx.nonce())),
            TxKind::Call(_) => None,
        };
        let blob_gas_used = tx.blob_gas_used();
        let mut logs = logs.into_iter();
        let inner = r
            .clone()
            .map_logs(|_| logs.next().expect("one rpc log per log"));
        out.push(TransactionReceipt {
            inner,
            transaction_hash: tx.trie_hash(),
            transaction_index: Some(i as u64),
            block_hash: Some(block.hash),
            block_number: Some(block.header.number),
            gas_used,
            effective_gas_price: tx.effective_gas_price(block.header.base_fee_per_gas),
            blob_gas_used,
            blob_gas_price: blob_gas_used.map(|_| blob_gas_price(block)),
            from,
            to: tx.to(),
            contract_address,
        });
    }
    out
}

fn blob_gas_price(block: &StoredBlock) -> u128 {
    block
        .header
        .excess_blob_gas
        .map(alloy_eips::eip4844::calc_blob_gasprice)
        .unwrap_or(1)
}

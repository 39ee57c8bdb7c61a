//! Stored blocks, transactions, receipts and logs in their RPC shapes (geth's field sets).

use alloy_consensus::{
    transaction::Recovered, Block as ConsensusBlock, ReceiptEnvelope, Sealed, Transaction as _,
    TxEnvelope,
};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{TxKind, B256, U256, U64};
use alloy_rpc_types_eth::{
    Block, BlockTransactions, Header as RpcHeader, Transaction, TransactionReceipt,
};

use l2node_storage::StoredBlock;

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
    ConsensusBlock::rlp_length_for(&block.header, &block.body)
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

/// Whether transaction `index` of `block` is the one with `hash` (a location read before the
/// block may be stale).
pub(super) fn holds(block: &StoredBlock, index: usize, hash: &B256) -> bool {
    block
        .body
        .transactions
        .get(index)
        .is_some_and(|t| t.trie_hash() == *hash)
}

/// Transaction `index` of a block (which the caller checked it has).
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
    let mut log_index = 0;
    let mut prev_cumulative = 0;
    receipts
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let rp = rpc_receipt(block, r, i, log_index, prev_cumulative);
            log_index += r.logs().len();
            prev_cumulative = r.cumulative_gas_used();
            rp
        })
        .collect()
}

/// Receipt `i` of a block in RPC shape, converting only that one: its first log index and the
/// gas used before it come from the earlier receipts' counts.
pub(super) fn rpc_receipt_at(
    block: &StoredBlock,
    receipts: &[ReceiptEnvelope],
    i: usize,
) -> Option<TransactionReceipt> {
    let r = receipts.get(i)?;
    let log_index = receipts[..i].iter().map(|r| r.logs().len()).sum();
    let prev_cumulative = i
        .checked_sub(1)
        .map_or(0, |p| receipts[p].cumulative_gas_used());
    Some(rpc_receipt(block, r, i, log_index, prev_cumulative))
}

fn rpc_receipt(
    block: &StoredBlock,
    r: &ReceiptEnvelope,
    i: usize,
    log_index: usize,
    prev_cumulative: u64,
) -> TransactionReceipt {
    let tx = &block.body.transactions[i];
    let from = block.senders[i];
    let mut logs = l2node_node::logs::tx_logs(block, r, i, log_index).into_iter();
    let contract_address = match tx.kind() {
        TxKind::Create => Some(from.create(tx.nonce())),
        TxKind::Call(_) => None,
    };
    let blob_gas_used = tx.blob_gas_used();
    let inner = r
        .clone()
        .map_logs(|_| logs.next().expect("one rpc log per log"));
    TransactionReceipt {
        inner,
        transaction_hash: tx.trie_hash(),
        transaction_index: Some(i as u64),
        block_hash: Some(block.hash),
        block_number: Some(block.header.number),
        gas_used: r.cumulative_gas_used() - prev_cumulative,
        effective_gas_price: tx.effective_gas_price(block.header.base_fee_per_gas),
        blob_gas_used,
        blob_gas_price: blob_gas_used.map(|_| blob_gas_price(block)),
        from,
        to: tx.to(),
        contract_address,
    }
}

fn blob_gas_price(block: &StoredBlock) -> u128 {
    block
        .header
        .excess_blob_gas
        .map(alloy_eips::eip4844::calc_blob_gasprice)
        .unwrap_or(1)
}

/// `eth_syncing` (and the `syncing` subscription's status): `false`, or the progress.
pub(super) fn sync_status(
    sync: Option<l2node_node::p2p::SyncProgress>,
    head: u64,
) -> l2node_api::types::Syncing {
    use l2node_api::types::{SyncProgress, Syncing};
    match sync {
        None => Syncing::No,
        Some(p) => Syncing::Progress(SyncProgress {
            starting_block: U64::from(p.starting),
            current_block: U64::from(head),
            highest_block: U64::from(p.highest.max(head)),
        }),
    }
}

//! The `ots_` namespace: Otterscan's API (level 8), as Erigon and anvil serve it.
//!
//! Traces replay the block through revm-inspectors. Lookups that would scan the chain use the
//! indexes instead: an address's transactions come from the blocks where its account changed
//! or it emitted a log (account history and log index); a sender's nonce and a contract's
//! creation are found by binary search over the account history (O(log chain length) reads).

use alloy_eips::{BlockId, BlockNumberOrTag};
use alloy_primitives::{Address, Bytes, B256, U256, U64};
use alloy_rpc_types_eth::BlockTransactions;
use alloy_rpc_types_trace::otterscan::{
    InternalIssuance, OtsBlock, OtsReceipt, OtsTransactionReceipt,
};
use jsonrpsee::core::{async_trait, RpcResult as JsonRpcResult};
use l2node_api::{
    types::{
        BlockDetails, ContractCreator, InternalOperation, OtsBlockTransactions, TraceEntry,
        TransactionsWithReceipts,
    },
    OtsApiServer,
};
use revm::primitives::KECCAK_EMPTY;

use super::{
    convert,
    error::{RpcError, RpcResult},
    EthRpc,
};
use l2node_node::executor;
use l2node_storage::{Storage, StoredBlock};

/// The Otterscan API level implemented (Otterscan 2 asks for at least 8).
const OTS_API_LEVEL: u64 = 8;

/// Most transactions one search or block page returns (Otterscan asks for 25).
const OTS_MAX_PAGE: u64 = 1_000;

impl EthRpc {
    /// Replays the mined transaction `hash` with `f`; "transaction not found" when unknown.
    async fn ots_replay<T: Send + 'static>(
        &self,
        hash: B256,
        f: impl FnOnce(
                &l2node_node::chainspec::ChainSpec,
                &dyn l2node_storage::StateReader,
                &alloy_consensus::Block<alloy_consensus::TxEnvelope>,
                &[Address],
                Option<usize>,
            ) -> Result<T, executor::ExecError>
            + Send
            + 'static,
    ) -> JsonRpcResult<T> {
        let found = self.parity(BlockId::latest(), Some(hash), f).await?;
        Ok(found.ok_or_else(|| RpcError::NotFound("transaction not found".into()))?)
    }

    /// Block `n` with its receipts, or geth's "header not found".
    fn ots_block(
        storage: &Storage,
        n: u64,
    ) -> RpcResult<(StoredBlock, Vec<alloy_consensus::ReceiptEnvelope>)> {
        storage
            .block_with_receipts(n)?
            .ok_or(RpcError::HeaderNotFound)
    }

    fn ots_details(&self, n: u64) -> RpcResult<BlockDetails> {
        let (block, receipts) = Self::ots_block(self.chain.storage(), n)?;
        let total_fees = convert::rpc_receipts(&block, &receipts)
            .iter()
            .map(|r| U256::from(r.gas_used) * U256::from(r.effective_gas_price))
            .sum();
        Ok(BlockDetails::new(
            convert::rpc_block(&block, false),
            InternalIssuance::default(),
            total_fees,
        ))
    }

    /// ots_getBlockTransactions' page of block `n`.
    fn ots_page(
        storage: &Storage,
        n: u64,
        page: U64,
        page_size: U64,
    ) -> RpcResult<OtsBlockTransactions> {
        let (stored, receipts) = Self::ots_block(storage, n)?;
        let count = stored.body.transactions.len();
        let size = page_size.to::<u64>().clamp(1, OTS_MAX_PAGE) as usize;
        // Erigon's paging: page 0 holds the last `size` transactions of the block.
        let end = count.saturating_sub(page.to::<u64>().saturating_mul(size as u64) as usize);
        let start = end.saturating_sub(size);
        let mut block = convert::rpc_block(&stored, false);
        block.transactions = BlockTransactions::Full(
            (start..end)
                .map(|i| convert::rpc_tx_in_block(&stored, i))
                .collect(),
        );
        let receipts = convert::rpc_receipts(&stored, &receipts)
            .into_iter()
            .skip(start)
            .take(end - start)
            .map(|r| ots_receipt(r, stored.header.timestamp))
            .collect();
        let mut fullblock = OtsBlock::from(block);
        fullblock.transaction_count = count;
        Ok(OtsBlockTransactions {
            fullblock,
            receipts,
        })
    }

    /// The transactions of `block` that involve `address` (sent, received, created, or with a
    /// log it emitted), newest first, with their receipts.
    fn ots_matches(
        storage: &Storage,
        n: u64,
        address: Address,
        txs: &mut Vec<alloy_rpc_types_eth::Transaction>,
        receipts_out: &mut Vec<OtsTransactionReceipt>,
    ) -> RpcResult<()> {
        let (block, receipts) = Self::ots_block(storage, n)?;
        let rpc_receipts = convert::rpc_receipts(&block, &receipts);
        for (i, receipt) in rpc_receipts.into_iter().enumerate().rev() {
            let involved = receipt.from == address
                || receipt.to == Some(address)
                || receipt.contract_address == Some(address)
                || receipt.inner.logs().iter().any(|l| l.address() == address);
            if involved {
                txs.push(convert::rpc_tx_in_block(&block, i));
                receipts_out.push(ots_receipt(receipt, block.header.timestamp));
            }
        }
        Ok(())
    }

    fn ots_search(
        &self,
        address: Address,
        block: u64,
        page_size: u64,
        before: bool,
    ) -> RpcResult<TransactionsWithReceipts> {
        let storage = self.chain.storage();
        let head = self.chain.head().header.number;
        let page = page_size.clamp(1, OTS_MAX_PAGE) as usize;
        let (mut from, mut to) = if before {
            (
                0,
                if block == 0 {
                    head
                } else {
                    block.saturating_sub(1)
                },
            )
        } else {
            (block.saturating_add(1).min(head.saturating_add(1)), head)
        };
        let (mut txs, mut receipts) = (Vec::new(), Vec::new());
        let mut exhausted = false;
        // Whole blocks are taken, as Erigon does: a page may run over the size.
        while txs.len() < page && !exhausted && from <= to {
            let blocks = storage.address_activity(address, from, to, before, page)?;
            exhausted = blocks.len() < page;
            for &n in &blocks {
                if txs.len() >= page {
                    exhausted = false;
                    break;
                }
                if before {
                    to = n.saturating_sub(1);
                    if n == 0 {
                        exhausted = true;
                    }
                } else {
                    from = n + 1;
                }
                if before {
                    Self::ots_matches(storage, n, address, &mut txs, &mut receipts)?;
                } else {
                    let (mut t, mut r) = (Vec::new(), Vec::new());
                    Self::ots_matches(storage, n, address, &mut t, &mut r)?;
                    // Oldest blocks first while searching forward; reversed at the end.
                    t.reverse();
                    r.reverse();
                    txs.extend(t);
                    receipts.extend(r);
                }
            }
        }
        if !before {
            txs.reverse();
            receipts.reverse();
        }
        // Pages run from the newest transactions (first) to the oldest (last).
        let (first_page, last_page) = if before {
            (block == 0, exhausted)
        } else {
            (exhausted, block == 0)
        };
        Ok(TransactionsWithReceipts {
            txs,
            receipts,
            first_page,
            last_page,
        })
    }

    /// [`Self::ots_search`] as a heavy job.
    async fn ots_search_job(
        &self,
        address: Address,
        block: U64,
        page_size: U64,
        before: bool,
    ) -> JsonRpcResult<TransactionsWithReceipts> {
        let this = self.clone();
        let (block, page_size) = (block.to::<u64>(), page_size.to::<u64>());
        Ok(self
            .heavy(move || this.ots_search(address, block, page_size, before))
            .await?)
    }

    /// The first block whose state satisfies `pred` (which must stay true once true), by binary
    /// search over the states held; `None` if the head's state does not satisfy it, the
    /// pruned (or before-snapshot) error if the oldest state held already does.
    fn first_block_where(
        &self,
        pred: impl Fn(&l2node_storage::StateAt) -> RpcResult<bool>,
    ) -> RpcResult<Option<u64>> {
        let storage = self.chain.storage();
        let head = self.chain.head().header.number;
        if !pred(&storage.state_at(Some(head))?)? {
            return Ok(None);
        }
        // The oldest state held: a pruned node's window, or the snapshot a node joined from.
        let mut lo = storage
            .first_state_block()?
            .max(storage.first_block()?.saturating_sub(1))
            .min(head);
        if lo > 0 && pred(&storage.state_at(Some(lo))?)? {
            // Already true there: the block is that one or an older one. Reading the state
            // before it says why that is not held (or it is, after all).
            storage.state_at(Some(lo - 1))?;
            lo = 0;
        }
        let mut hi = head;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&storage.state_at(Some(mid))?)? {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(Some(lo))
    }
}

fn ots_receipt(
    r: alloy_rpc_types_eth::TransactionReceipt,
    timestamp: u64,
) -> OtsTransactionReceipt {
    let receipt = r.map_inner(|envelope| OtsReceipt {
        status: envelope.status(),
        cumulative_gas_used: envelope.cumulative_gas_used(),
        logs: None,
        logs_bloom: None,
        r#type: envelope.tx_type() as u8,
    });
    OtsTransactionReceipt {
        receipt,
        timestamp: Some(timestamp),
    }
}

#[async_trait]
impl OtsApiServer for EthRpc {
    async fn get_api_level(&self) -> JsonRpcResult<u64> {
        Ok(OTS_API_LEVEL)
    }

    async fn has_code(&self, address: Address, block: BlockId) -> JsonRpcResult<bool> {
        let state = self.state_only(Some(block))?;
        let account = state.account_state(address).map_err(RpcError::from)?;
        Ok(account.is_some_and(|a| a.code_hash != KECCAK_EMPTY))
    }

    async fn get_internal_operations(&self, hash: B256) -> JsonRpcResult<Vec<InternalOperation>> {
        self.ots_replay(hash, executor::ots_internal_operations)
            .await
    }

    async fn get_transaction_error(&self, hash: B256) -> JsonRpcResult<Bytes> {
        self.ots_replay(hash, executor::ots_transaction_error).await
    }

    async fn trace_transaction(&self, hash: B256) -> JsonRpcResult<Vec<TraceEntry>> {
        self.ots_replay(hash, executor::ots_trace).await
    }

    async fn get_block_details(&self, block: BlockNumberOrTag) -> JsonRpcResult<BlockDetails> {
        let n = self
            .number_of(BlockId::Number(block))?
            .ok_or(RpcError::HeaderNotFound)?;
        let this = self.clone();
        Ok(self.bounded(move || this.ots_details(n)).await?)
    }

    async fn get_block_details_by_hash(&self, hash: B256) -> JsonRpcResult<BlockDetails> {
        let n = self
            .number_of(BlockId::from(hash))?
            .ok_or(RpcError::HeaderNotFound)?;
        let this = self.clone();
        Ok(self.bounded(move || this.ots_details(n)).await?)
    }

    async fn get_block_transactions(
        &self,
        block: BlockNumberOrTag,
        page: U64,
        page_size: U64,
    ) -> JsonRpcResult<OtsBlockTransactions> {
        let n = self
            .number_of(BlockId::Number(block))?
            .ok_or(RpcError::HeaderNotFound)?;
        let chain = self.chain.clone();
        Ok(self
            .bounded(move || Self::ots_page(chain.storage(), n, page, page_size))
            .await?)
    }

    async fn get_transaction_by_sender_and_nonce(
        &self,
        sender: Address,
        nonce: U64,
    ) -> JsonRpcResult<Option<B256>> {
        let nonce = nonce.to::<u64>();
        let this = self.clone();
        let found = self
            .heavy(move || {
                let Some(n) = this.first_block_where(|state| {
                    Ok(state
                        .account_state(sender)?
                        .is_some_and(|a| a.nonce > nonce))
                })?
                else {
                    return Ok(None);
                };
                let (block, _) = Self::ots_block(this.chain.storage(), n)?;
                let txs = &block.body.transactions;
                let index = (0..txs.len()).find(|&i| {
                    block.senders[i] == sender
                        && alloy_consensus::Transaction::nonce(&txs[i]) == nonce
                });
                Ok(index.map(|i| *txs[i].tx_hash()))
            })
            .await?;
        Ok(found)
    }

    async fn get_contract_creator(
        &self,
        address: Address,
    ) -> JsonRpcResult<Option<ContractCreator>> {
        let this = self.clone();
        let n = self
            .heavy(move || {
                this.first_block_where(|state| {
                    Ok(state
                        .account_state(address)?
                        .is_some_and(|a| a.code_hash != KECCAK_EMPTY))
                })
            })
            .await?;
        let Some(n) = n else { return Ok(None) };
        if n == 0 {
            // In the genesis allocation: no creating transaction.
            return Ok(None);
        }
        let creations = self
            .parity(BlockId::number(n), None, executor::ots_creations)
            .await?
            .unwrap_or_default();
        Ok(creations
            .into_iter()
            .find(|(_, _, created)| *created == address)
            .map(|(hash, creator, _)| ContractCreator { hash, creator }))
    }

    async fn search_transactions_before(
        &self,
        address: Address,
        block: U64,
        page_size: U64,
    ) -> JsonRpcResult<TransactionsWithReceipts> {
        self.ots_search_job(address, block, page_size, true).await
    }

    async fn search_transactions_after(
        &self,
        address: Address,
        block: U64,
        page_size: U64,
    ) -> JsonRpcResult<TransactionsWithReceipts> {
        self.ots_search_job(address, block, page_size, false).await
    }
}

//! The `eth_` namespace: thin handlers that resolve blocks, call a node service and convert.

use std::sync::Arc;

use alloy_consensus::{Header, Transaction as _};
use alloy_eips::{BlockId, BlockNumberOrTag};
use alloy_primitives::{Address, Bytes, B256, U256, U64};
use alloy_rpc_types_eth::{
    state::StateOverride, AccessListResult, Block, BlockOverrides, EIP1186AccountProofResponse,
    FeeHistory, Filter, FilterChanges, Index, Log, SyncStatus, Transaction, TransactionReceipt,
    TransactionRequest,
};
use jsonrpsee::core::{async_trait, RpcResult as JsonRpcResult};
use l2node_api::{
    types::{BlockOrPending, RpcTransaction},
    EthApiServer,
};
use tokio::sync::Semaphore;

use super::{
    convert,
    error::{RpcError, RpcResult},
    fees,
    filters::Filters,
    logs, RpcConfig,
};
use crate::{
    chain::Chain,
    executor,
    node::validation_context,
    pool::Pool,
    state::StateReader,
    storage::{StateAt, StoredBlock},
};

/// Shared state of the eth handlers.
#[derive(Clone)]
pub struct EthRpc {
    pub(super) chain: Arc<Chain>,
    pub(super) pool: Arc<Pool>,
    pub(super) cfg: RpcConfig,
    evm: Arc<Semaphore>,
    pub(super) filters: Arc<Filters>,
}

impl EthRpc {
    /// Handlers over a chain and pool.
    pub fn new(chain: Arc<Chain>, pool: Arc<Pool>, cfg: RpcConfig) -> Self {
        let evm = Arc::new(Semaphore::new(cfg.evm_concurrency.max(1)));
        let filters = Arc::new(Filters::new(std::time::Duration::from_secs(
            cfg.filter_timeout_secs,
        )));
        Self {
            chain,
            pool,
            cfg,
            evm,
            filters,
        }
    }

    /// Resolves a tag or number to a held block number (`None` when beyond the head).
    pub(super) fn number_of_tag(&self, tag: BlockNumberOrTag) -> Option<u64> {
        let head = self.chain.head().header.number;
        match tag {
            BlockNumberOrTag::Earliest => Some(0),
            // One sequencer, instant finality: safe and finalized are the head.
            BlockNumberOrTag::Latest
            | BlockNumberOrTag::Safe
            | BlockNumberOrTag::Finalized
            | BlockNumberOrTag::Pending => Some(head),
            BlockNumberOrTag::Number(n) => (n <= head).then_some(n),
        }
    }

    fn number_of(&self, id: BlockId) -> RpcResult<Option<u64>> {
        match id {
            BlockId::Hash(h) => Ok(self.chain.storage().block_number(&h.block_hash)?),
            BlockId::Number(tag) => Ok(self.number_of_tag(tag)),
        }
    }

    /// The number of a block id for a state read: geth's "header for hash not found" for an
    /// unknown hash, "header not found" for a number beyond the head.
    fn state_number_of(&self, id: BlockId) -> RpcResult<u64> {
        let missing = if id.is_hash() {
            RpcError::HeaderForHashNotFound
        } else {
            RpcError::HeaderNotFound
        };
        self.number_of(id)?.ok_or(missing)
    }

    /// State and header of a block, or "header not found".
    fn state_for(&self, id: Option<BlockId>) -> RpcResult<(StateAt, Header)> {
        let id = id.unwrap_or(BlockId::latest());
        let n = self.state_number_of(id)?;
        let storage = self.chain.storage();
        let head = self.chain.head();
        // The head's header is in memory: decode from storage only for older blocks.
        if n == head.header.number {
            return Ok((storage.state_at(None)?, head.header.clone()));
        }
        let header = storage.header(n)?.ok_or(RpcError::HeaderNotFound)?;
        Ok((storage.state_at(Some(n))?, header))
    }

    fn stored_block(&self, n: Option<u64>) -> RpcResult<Option<StoredBlock>> {
        match n {
            Some(n) => Ok(self.chain.storage().block(n)?),
            None => Ok(None),
        }
    }

    /// The block the sequencer would build next, from the pool on top of the head.
    fn pending_block(&self) -> RpcResult<StoredBlock> {
        Ok(self.pending_block_and_receipts()?.0)
    }

    /// [`Self::pending_block`] with the receipts of its transactions.
    pub(super) fn pending_block_and_receipts(
        &self,
    ) -> RpcResult<(StoredBlock, Vec<alloy_consensus::ReceiptEnvelope>)> {
        let head = self.chain.head();
        let spec = self.chain.spec();
        let state = self.chain.storage().state_at(None)?;
        let base_fee = spec.next_base_fee(&head.header);
        let candidates = self.pool.best(base_fee);
        let attrs = executor::BuildAttributes {
            timestamp: now_secs().max(head.header.timestamp + 1),
            beneficiary: Address::ZERO,
            extra_data: Default::default(),
            gas_limit: head.header.gas_limit,
            ..Default::default()
        };
        let built = executor::build_block(
            spec,
            &state,
            &head.header,
            attrs,
            candidates.iter().map(|t| t.tx.clone()),
        )?;
        let senders = built.transactions.iter().map(|t| t.signer()).collect();
        let receipts = built.receipts;
        let transactions = built
            .transactions
            .into_iter()
            .map(|t| t.into_inner())
            .collect();
        let header = built.header;
        let block = StoredBlock {
            hash: header.hash_slow(),
            header,
            body: alloy_consensus::BlockBody {
                transactions,
                ommers: vec![],
                withdrawals: spec
                    .is_shanghai_active_at(head.header.timestamp + 1)
                    .then(Default::default),
            },
            senders,
        };
        Ok((block, receipts))
    }

    async fn block_for_tag(&self, tag: BlockNumberOrTag) -> RpcResult<Option<StoredBlock>> {
        if tag.is_pending() {
            let this = self.clone();
            return blocking(move || this.pending_block().map(Some)).await;
        }
        self.stored_block(self.number_of_tag(tag))
    }

    async fn evm<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> RpcResult<T> + Send + 'static,
    ) -> RpcResult<T> {
        let _permit = self
            .evm
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| RpcError::Internal(e.to_string()))?;
        blocking(f).await
    }
}

/// Runs blocking work off the async runtime.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> RpcResult<T> + Send + 'static,
) -> RpcResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| RpcError::Internal(e.to_string()))?
}

pub(super) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

fn index_of(index: Index) -> usize {
    usize::from(index)
}

#[async_trait]
impl EthApiServer for EthRpc {
    async fn chain_id(&self) -> JsonRpcResult<U64> {
        Ok(U64::from(self.chain.spec().chain_id))
    }

    async fn syncing(&self) -> JsonRpcResult<SyncStatus> {
        Ok(SyncStatus::None)
    }

    async fn block_number(&self) -> JsonRpcResult<U64> {
        Ok(U64::from(self.chain.head().header.number))
    }

    async fn accounts(&self) -> JsonRpcResult<Vec<Address>> {
        Ok(vec![])
    }

    async fn balance(&self, address: Address, block: Option<BlockId>) -> JsonRpcResult<U256> {
        let (state, _) = self.state_for(block)?;
        Ok(state
            .account(address)
            .map_err(RpcError::from)?
            .map(|a| a.balance)
            .unwrap_or_default())
    }

    async fn transaction_count(
        &self,
        address: Address,
        block: Option<BlockId>,
    ) -> JsonRpcResult<U64> {
        if matches!(block, Some(BlockId::Number(BlockNumberOrTag::Pending))) {
            if let Some(n) = self.pool.pending_nonce(address) {
                return Ok(U64::from(n));
            }
        }
        let (state, _) = self.state_for(block)?;
        Ok(U64::from(
            state
                .account(address)
                .map_err(RpcError::from)?
                .map(|a| a.nonce)
                .unwrap_or_default(),
        ))
    }

    async fn code(&self, address: Address, block: Option<BlockId>) -> JsonRpcResult<Bytes> {
        let (state, _) = self.state_for(block)?;
        let Some(acc) = state.account(address).map_err(RpcError::from)? else {
            return Ok(Bytes::new());
        };
        Ok(state
            .code_by_hash(acc.code_hash)
            .map_err(RpcError::from)?
            .original_bytes())
    }

    async fn storage_at(
        &self,
        address: Address,
        slot: U256,
        block: Option<BlockId>,
    ) -> JsonRpcResult<B256> {
        let (state, _) = self.state_for(block)?;
        Ok(B256::from(
            state.storage(address, slot).map_err(RpcError::from)?,
        ))
    }

    async fn call(
        &self,
        request: TransactionRequest,
        block: Option<BlockId>,
        state_overrides: Option<StateOverride>,
        block_overrides: Option<Box<BlockOverrides>>,
    ) -> JsonRpcResult<Bytes> {
        let (state, header) = self.state_for(block)?;
        let spec = self.chain.spec().clone();
        let cap = self.cfg.gas_cap;
        let out = self
            .evm(move || {
                Ok(executor::call(
                    &spec,
                    &state,
                    &header,
                    &request,
                    state_overrides.as_ref(),
                    block_overrides.as_deref(),
                    cap,
                )?)
            })
            .await?;
        if out.reverted {
            return Err(RpcError::Exec(executor::ExecError::Revert { output: out.output }).into());
        }
        Ok(out.output)
    }

    async fn estimate_gas(
        &self,
        request: TransactionRequest,
        block: Option<BlockId>,
        state_overrides: Option<StateOverride>,
    ) -> JsonRpcResult<U64> {
        let (state, header) = self.state_for(block)?;
        let spec = self.chain.spec().clone();
        let cap = self.cfg.gas_cap;
        let gas = self
            .evm(move || {
                Ok(executor::estimate_gas(
                    &spec,
                    &state,
                    &header,
                    &request,
                    state_overrides.as_ref(),
                    None,
                    cap,
                )?)
            })
            .await?;
        Ok(U64::from(gas))
    }

    async fn create_access_list(
        &self,
        request: TransactionRequest,
        block: Option<BlockId>,
    ) -> JsonRpcResult<AccessListResult> {
        let (state, header) = self.state_for(block)?;
        let spec = self.chain.spec().clone();
        let cap = self.cfg.gas_cap;
        self.evm(move || {
            match executor::create_access_list(&spec, &state, &header, &request, None, None, cap) {
                Ok((access_list, gas_used)) => Ok(AccessListResult {
                    access_list,
                    gas_used: U256::from(gas_used),
                    error: None,
                }),
                // geth answers a failing call with the list so far, its gas and the VM error.
                Err(e @ (executor::ExecError::Revert { .. } | executor::ExecError::Halt(_))) => {
                    let error = match e {
                        executor::ExecError::Revert { .. } => "execution reverted".to_string(),
                        other => other.to_string(),
                    };
                    let out = executor::call(&spec, &state, &header, &request, None, None, cap)?;
                    let access_list = request.access_list.clone().unwrap_or_default();
                    Ok(AccessListResult {
                        access_list,
                        gas_used: U256::from(out.gas_used),
                        error: Some(error),
                    })
                }
                Err(e) => Err(e.into()),
            }
        })
        .await
        .map_err(Into::into)
    }

    async fn send_raw_transaction(&self, bytes: Bytes) -> JsonRpcResult<B256> {
        let pool = self.pool.clone();
        let chain = self.chain.clone();
        let hash = blocking(move || {
            let state = chain.storage().state_at(None)?;
            Ok(pool.add_raw(&bytes, &state, &validation_context(&chain))?)
        })
        .await?;
        Ok(hash)
    }

    async fn transaction_by_hash(&self, hash: B256) -> JsonRpcResult<Option<RpcTransaction>> {
        if let Some((n, i)) = self
            .chain
            .storage()
            .tx_location(&hash)
            .map_err(RpcError::from)?
        {
            let block = self
                .stored_block(Some(n))?
                .ok_or(RpcError::HeaderNotFound)?;
            return Ok(Some(RpcTransaction(convert::rpc_tx_in_block(
                &block, i as usize,
            ))));
        }
        Ok(self
            .pool
            .get(&hash)
            .map(|p| RpcTransaction(convert::rpc_pending_tx(&p.tx))))
    }

    async fn transaction_by_block_hash_and_index(
        &self,
        hash: B256,
        index: Index,
    ) -> JsonRpcResult<Option<Transaction>> {
        let n = self
            .chain
            .storage()
            .block_number(&hash)
            .map_err(RpcError::from)?;
        let block = self.stored_block(n)?;
        Ok(block
            .filter(|b| index_of(index) < b.body.transactions.len())
            .map(|b| convert::rpc_tx_in_block(&b, index_of(index))))
    }

    async fn transaction_by_block_number_and_index(
        &self,
        tag: BlockNumberOrTag,
        index: Index,
    ) -> JsonRpcResult<Option<Transaction>> {
        let block = self.block_for_tag(tag).await?;
        Ok(block
            .filter(|b| index_of(index) < b.body.transactions.len())
            .map(|b| convert::rpc_tx_in_block(&b, index_of(index))))
    }

    async fn transaction_receipt(&self, hash: B256) -> JsonRpcResult<Option<TransactionReceipt>> {
        let storage = self.chain.storage();
        let Some((n, i)) = storage.tx_location(&hash).map_err(RpcError::from)? else {
            return Ok(None);
        };
        let block = self
            .stored_block(Some(n))?
            .ok_or(RpcError::HeaderNotFound)?;
        let receipts = storage
            .receipts(n)
            .map_err(RpcError::from)?
            .unwrap_or_default();
        Ok(convert::rpc_receipts(&block, &receipts)
            .into_iter()
            .nth(i as usize))
    }

    async fn block_receipts(
        &self,
        block: BlockId,
    ) -> JsonRpcResult<Option<Vec<TransactionReceipt>>> {
        let n = self.number_of(block)?;
        let Some(block) = self.stored_block(n)? else {
            return Ok(None);
        };
        let receipts = self
            .chain
            .storage()
            .receipts(block.header.number)
            .map_err(RpcError::from)?
            .unwrap_or_default();
        Ok(Some(convert::rpc_receipts(&block, &receipts)))
    }

    async fn block_by_hash(&self, hash: B256, full: bool) -> JsonRpcResult<Option<Block>> {
        let n = self
            .chain
            .storage()
            .block_number(&hash)
            .map_err(RpcError::from)?;
        Ok(self.stored_block(n)?.map(|b| convert::rpc_block(&b, full)))
    }

    async fn block_by_number(
        &self,
        tag: BlockNumberOrTag,
        full: bool,
    ) -> JsonRpcResult<Option<BlockOrPending>> {
        let Some(block) = self.block_for_tag(tag).await? else {
            return Ok(None);
        };
        let block = convert::rpc_block(&block, full);
        if !tag.is_pending() {
            return Ok(Some(BlockOrPending::Block(Box::new(block))));
        }
        // geth: the pending block has no hash, nonce or miner yet.
        let mut v = serde_json::to_value(block).map_err(|e| RpcError::Internal(e.to_string()))?;
        for key in ["hash", "nonce", "miner"] {
            v[key] = serde_json::Value::Null;
        }
        Ok(Some(BlockOrPending::Pending(v)))
    }

    async fn block_transaction_count_by_hash(&self, hash: B256) -> JsonRpcResult<Option<U64>> {
        let n = self
            .chain
            .storage()
            .block_number(&hash)
            .map_err(RpcError::from)?;
        Ok(self
            .stored_block(n)?
            .map(|b| U64::from(b.body.transactions.len())))
    }

    async fn block_transaction_count_by_number(
        &self,
        tag: BlockNumberOrTag,
    ) -> JsonRpcResult<Option<U64>> {
        Ok(self
            .block_for_tag(tag)
            .await?
            .map(|b| U64::from(b.body.transactions.len())))
    }

    async fn uncle_count_by_block_hash(&self, hash: B256) -> JsonRpcResult<Option<U64>> {
        let n = self
            .chain
            .storage()
            .block_number(&hash)
            .map_err(RpcError::from)?;
        Ok(n.map(|_| U64::ZERO))
    }

    async fn uncle_count_by_block_number(
        &self,
        tag: BlockNumberOrTag,
    ) -> JsonRpcResult<Option<U64>> {
        Ok(self.number_of_tag(tag).map(|_| U64::ZERO))
    }

    async fn gas_price(&self) -> JsonRpcResult<U256> {
        let head = self.chain.head();
        let tip = fees::suggested_tip(&self.chain)?;
        let base = self.chain.spec().next_base_fee(&head.header);
        Ok(U256::from(tip) + U256::from(base))
    }

    async fn max_priority_fee_per_gas(&self) -> JsonRpcResult<U256> {
        Ok(U256::from(fees::suggested_tip(&self.chain)?))
    }

    async fn fee_history(
        &self,
        block_count: U64,
        newest: BlockNumberOrTag,
        percentiles: Option<Vec<f64>>,
    ) -> JsonRpcResult<FeeHistory> {
        let this = self.clone();
        let count = block_count.to::<u64>();
        Ok(
            blocking(move || fees::fee_history(&this, count, newest, percentiles.as_deref()))
                .await?,
        )
    }

    async fn logs(&self, filter: Filter) -> JsonRpcResult<Vec<Log>> {
        let this = self.clone();
        Ok(blocking(move || logs::get_logs(&this, &filter)).await?)
    }

    async fn new_filter(&self, filter: Filter) -> JsonRpcResult<U256> {
        let head = self.chain.head().header.number;
        let (from, _) = logs::resolve_range(self, &filter)?;
        // Like geth, changes are the logs of blocks mined after the filter was installed
        // (eth_getFilterLogs answers the whole range).
        Ok(self.filters.install_logs(filter, from.max(head + 1)))
    }

    async fn new_block_filter(&self) -> JsonRpcResult<U256> {
        Ok(self
            .filters
            .install_blocks(self.chain.head().header.number + 1))
    }

    async fn new_pending_transaction_filter(&self) -> JsonRpcResult<U256> {
        Ok(self.filters.install_pending(self.pool.subscribe()))
    }

    async fn filter_changes(&self, id: U256) -> JsonRpcResult<FilterChanges> {
        let this = self.clone();
        Ok(blocking(move || this.filters.changes(&this, id)).await?)
    }

    async fn filter_logs(&self, id: U256) -> JsonRpcResult<Vec<Log>> {
        let filter = self.filters.log_filter(id)?;
        let this = self.clone();
        Ok(blocking(move || logs::get_logs(&this, &filter)).await?)
    }

    async fn uninstall_filter(&self, id: U256) -> JsonRpcResult<bool> {
        Ok(self.filters.uninstall(id))
    }

    async fn proof(
        &self,
        address: Address,
        keys: Vec<B256>,
        block: BlockId,
    ) -> JsonRpcResult<EIP1186AccountProofResponse> {
        let n = self.number_of(block)?.ok_or(RpcError::HeaderNotFound)?;
        if n != self.chain.head().header.number {
            return Err(RpcError::InvalidParams(format!(
                "eth_getProof serves the latest block only (requested {n}); the node keeps one trie, use \"latest\""
            ))
            .into());
        }
        let chain = self.chain.clone();
        Ok(blocking(move || Ok(chain.storage().proof(address, &keys)?)).await?)
    }
}

/// Effective tip of a mined transaction.
pub(super) fn tip_of(tx: &alloy_consensus::TxEnvelope, base_fee: Option<u64>) -> u128 {
    tx.effective_tip_per_gas(base_fee.unwrap_or_default())
        .unwrap_or_default()
}

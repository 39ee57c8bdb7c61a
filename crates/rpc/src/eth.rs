//! The `eth_` namespace: thin handlers that resolve blocks, call a node service and convert.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use alloy_consensus::Header;
use alloy_eips::{BlockId, BlockNumberOrTag, Encodable2718};
use alloy_hardforks::EthereumHardforks as _;
use alloy_primitives::{Address, Bytes, B256, U256, U64};
use alloy_rpc_types_eth::{
    state::StateOverride, AccessListResult, Block, BlockOverrides, EIP1186AccountProofResponse,
    FeeHistory, Filter, FilterChanges, Index, Log, Transaction, TransactionReceipt,
    TransactionRequest,
};
use jsonrpsee::core::{async_trait, RpcResult as JsonRpcResult};
use jsonrpsee::types::Extensions;
use l2node_api::{
    types::{
        BlockOrPending, Capabilities, CapabilitiesHead, EthConfig, HistoryCapability,
        JsonStorageKey, NumberOrHex, PreparedJson, RpcTransaction, SignedTransaction,
        SimulatePayload, SimulatedBlock as RpcSimulatedBlock, StorageSlot, Syncing,
        MAX_STORAGE_VALUES_SLOTS,
    },
    EthApiServer,
};
use tokio::sync::Semaphore;

use super::{
    call_cache::{self, Answer, CallCache, KeptCalls, SentParams, CALL, ESTIMATE_GAS},
    convert,
    error::{RpcError, RpcResult},
    filters::Filters,
    heavy::HeavyPool,
    RpcConfig,
};
use l2node_node::chain::{Chain, Head};
use l2node_node::constants::{
    MAX_PROOF_KEYS, RPC_LIGHT_LOGS_RANGE, RPC_LIGHT_PROOF_KEYS, TX_SYNC_DEFAULT_TIMEOUT,
    TX_SYNC_MAX_TIMEOUT,
};
use l2node_node::exclusions::Stage;
use l2node_node::executor::{self, CallEnv, CallRequest, ExecError};
use l2node_node::fees::FeeOracle;
use l2node_node::logs::LogSearch;
use l2node_node::miner::PendingBlocks;
use l2node_node::p2p::NetStatus;
use l2node_node::per_head::PerHead;
use l2node_node::pool::Pool;
use l2node_storage::{StateAt, StateReader, StoredBlock};

/// Shared state of the eth handlers.
#[derive(Clone)]
pub struct EthRpc {
    pub(super) chain: Arc<Chain>,
    pub(super) pool: Arc<Pool>,
    pub(super) cfg: RpcConfig,
    /// Permits for blocking jobs (EVM runs, block builds, log searches, proofs, receipt
    /// conversion): bounded concurrency so no flood of reads starves block production.
    jobs: Arc<Semaphore>,
    /// Heavy work (traces, simulations, wide log searches, large proofs) runs apart.
    heavy: Arc<HeavyPool>,
    pending: Arc<PendingBlocks>,
    filters: Arc<Filters>,
    logs: LogSearch,
    fees: Arc<FeeOracle>,
    net: Arc<NetStatus>,
    /// Held from filling to submitting an `eth_sendTransaction`, so concurrent sends from one
    /// unlocked account get consecutive nonces (geth's nonce lock).
    pub(super) send_lock: Arc<tokio::sync::Mutex<()>>,
    /// The head block's eth_getBlockByNumber JSON, with hashes and with full transactions,
    /// made by the first request after each new head.
    head_json: Arc<parking_lot::Mutex<PerHead<HeadJson>>>,
    /// eth_call and eth_estimateGas answers at the head.
    calls: Arc<CallCache>,
}

/// [`EthRpc::head_json`]: the head block's JSON, indexed by `full`.
type HeadJson = [Option<PreparedJson>; 2];

impl EthRpc {
    /// Handlers over a chain and pool.
    pub fn new(chain: Arc<Chain>, pool: Arc<Pool>, cfg: RpcConfig) -> Self {
        let jobs = Arc::new(Semaphore::new(cfg.evm_concurrency.max(1)));
        let heavy = Arc::new(HeavyPool::new(cfg.heavy_concurrency));
        let pending = Arc::new(PendingBlocks::new(chain.clone(), pool.clone()));
        let timeout = std::time::Duration::from_secs(cfg.filter_timeout_secs);
        let filters = Filters::new(timeout, cfg.max_filters);
        let logs = LogSearch::new(chain.clone(), cfg.max_logs_range, cfg.max_logs_per_response);
        let fees = Arc::new(FeeOracle::new(chain.clone(), cfg.fee_sampling));
        Self {
            chain,
            pool,
            jobs,
            heavy,
            pending,
            filters,
            logs,
            fees,
            net: Arc::new(NetStatus::default()),
            send_lock: Default::default(),
            head_json: Default::default(),
            calls: Arc::new(CallCache::new(cfg.call_cache_size)),
            cfg,
        }
    }

    /// Answers `eth_syncing` from the peer-to-peer layer's status.
    pub fn with_net(mut self, net: Arc<NetStatus>) -> Self {
        self.net = net;
        self
    }

    pub(super) fn number_of(&self, id: BlockId) -> RpcResult<Option<u64>> {
        match id {
            BlockId::Hash(h) => Ok(self.chain.storage().block_number(&h.block_hash)?),
            BlockId::Number(tag) => Ok(self.chain.resolve_tag(tag)),
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

    /// The state of a block whose header is not needed, or "header not found".
    pub(super) fn state_only(&self, id: Option<BlockId>) -> RpcResult<StateAt> {
        let n = self.state_number_of(id.unwrap_or(BlockId::latest()))?;
        Ok(self.chain.storage().state_at(Some(n))?)
    }

    /// State and header of a block, or "header not found".
    pub(super) fn state_for(&self, id: Option<BlockId>) -> RpcResult<(StateAt, Header)> {
        let n = self.state_number_of(id.unwrap_or(BlockId::latest()))?;
        self.state_of(n, &self.chain.head())
    }

    /// State and header of block `n`, with `head` a recent head.
    fn state_of(&self, n: u64, head: &Head) -> RpcResult<(StateAt, Header)> {
        let storage = self.chain.storage();
        // The state of exactly block `n`, even if a newer block commits meanwhile (the read
        // snapshot moves before the head does); at the snapshot's head this reads the current
        // tables.
        let state = storage.state_at(Some(n))?;
        // The head's header is in memory: decode from storage only for older blocks.
        let header = if n == head.header.number {
            head.header.clone()
        } else {
            storage.header(n)?.ok_or(RpcError::HeaderNotFound)?
        };
        Ok((state, header))
    }

    /// Block `n`, read and decoded on the worker pool (a block is as large as its transactions).
    pub(super) async fn stored_block(&self, n: Option<u64>) -> RpcResult<Option<StoredBlock>> {
        let Some(n) = n else { return Ok(None) };
        let chain = self.chain.clone();
        self.bounded(move || Ok(chain.storage().block(n)?)).await
    }

    /// eth_getBlockByNumber for a sealed block: the head's JSON is made once per head and
    /// flag, and shared by every request for it until the next head; any other block is read
    /// and converted on the worker pool.
    async fn sealed_block_json(
        &self,
        tag: BlockNumberOrTag,
        full: bool,
    ) -> RpcResult<Option<BlockOrPending>> {
        let Some(number) = self.chain.resolve_tag(tag) else {
            return Ok(None);
        };
        let head = self.chain.head();
        let is_head = number == head.header.number;
        if is_head {
            if let Some(json) = self
                .head_json
                .lock()
                .get(head.hash)
                .and_then(|kept| kept[usize::from(full)].clone())
            {
                return Ok(Some(BlockOrPending::Prepared(json)));
            }
        }
        let (chain, head_json) = (self.chain.clone(), self.head_json.clone());
        self.bounded(move || {
            let Some(block) = chain.storage().block(number)? else {
                return Ok(None);
            };
            let rpc = convert::rpc_block(&block, full);
            if !is_head || block.hash != head.hash {
                return Ok(Some(BlockOrPending::Block(Box::new(rpc))));
            }
            let json = PreparedJson::of(&rpc).map_err(RpcError::Encode)?;
            // Kept only while its block is the head (see `per_head`).
            if chain.head().hash == head.hash {
                head_json.lock().for_head(head.hash).0[usize::from(full)] = Some(json.clone());
            }
            Ok(Some(BlockOrPending::Prepared(json)))
        })
        .await
    }

    async fn block_for_tag(&self, tag: BlockNumberOrTag) -> RpcResult<Option<StoredBlock>> {
        if tag.is_pending() {
            let pending = self.pending.clone();
            return self
                .bounded(move || Ok(Some(pending.get()?.block.clone())))
                .await;
        }
        self.stored_block(self.chain.resolve_tag(tag)).await
    }

    /// Runs `f` on the state of `block`: first here, on the async worker, under the inline
    /// budget (most calls end within it, and a hand-off to a blocking thread and back costs
    /// more than they do); a call that needs more runs again from the start as a blocking job
    /// (see [`Self::bounded`]) with the full deadline.
    pub(super) async fn evm_call<T: Send + 'static>(
        &self,
        block: Option<BlockId>,
        f: impl Fn(CallEnv<'_>) -> RpcResult<T> + Send + 'static,
    ) -> RpcResult<T> {
        let (state, header) = self.state_for(block)?;
        self.run_evm(state, header, f).await
    }

    /// [`Self::evm_call`] for eth_call and eth_estimateGas: at the head, a request asked before
    /// at the same head is answered from the cache (see `call_cache`), and a new answer is kept,
    /// also under `sent` (the params as sent) if the block is the head by name.
    /// `method` is the cache's method byte; `run` answers `req`.
    async fn cached_evm_call(
        &self,
        (block, sent): (Option<BlockId>, Option<&SentParams>),
        method: u8,
        req: Arc<CallRequest>,
        run: fn(CallEnv<'_>, &CallRequest) -> RpcResult<Answer>,
    ) -> RpcResult<Answer> {
        let block = block.unwrap_or(BlockId::latest());
        let sent = sent.filter(|_| block == BlockId::latest());
        let n = self.state_number_of(block)?;
        let head = self.chain.head();
        let key = (n == head.header.number)
            .then(|| self.call_key(method, &req))
            .flatten();
        if let Some(key) = &key {
            if let Some(answer) = self.calls.get(head.hash, key) {
                // Another spelling of a kept request: keep the answer under this one too.
                if sent.is_some() && self.chain.head().hash == head.hash {
                    self.calls
                        .insert(head.hash, (method, key.clone()), sent, answer.clone());
                }
                return Ok(answer);
            }
        }
        let (state, header) = self.state_of(n, &head)?;
        // Kept only if the state read is the head's own: an unwind between reading the head and
        // opening the state would leave the state of another block.
        let key = key.filter(|_| state.block_hash(n).is_ok_and(|h| h == head.hash));
        let answer = self.run_evm(state, header, move |at| run(at, &req)).await?;
        // Not kept once a newer head is in: it would drop that head's answers.
        if let Some(key) = key.filter(|_| self.chain.head().hash == head.hash) {
            self.calls
                .insert(head.hash, (method, key), sent, answer.clone());
        }
        Ok(answer)
    }

    /// eth_estimateGas's gas limit for `req` at `block` (also `l2_estimateGas`'s, which shares
    /// its cached answers).
    pub(super) async fn estimate_gas_at(
        &self,
        block: (Option<BlockId>, Option<&SentParams>),
        req: Arc<CallRequest>,
    ) -> RpcResult<u64> {
        let answer = self
            .cached_evm_call(block, ESTIMATE_GAS, req, |at, req| {
                Ok(Answer::Gas(executor::estimate_gas(at, req)?))
            })
            .await?;
        Ok(gas_answer(answer))
    }

    /// The eth_call and eth_estimateGas answers kept at the head, for the dispatcher.
    pub(super) fn kept_calls(&self) -> KeptCalls {
        KeptCalls {
            cache: self.calls.clone(),
            chain: self.chain.clone(),
        }
    }

    /// What [`Self::cached_evm_call`] keeps an answer to `req` under: what it depends on
    /// besides the block (the gas cap is the node's); `None` when the cache is off or the
    /// request's input is too large to keep.
    fn call_key(&self, method: u8, req: &CallRequest) -> Option<Vec<u8>> {
        let input = req.tx.input.input().map_or(0, |i| i.len());
        if !self.calls.enabled() || input > call_cache::MAX_INPUT {
            return None;
        }
        call_cache::key(
            method,
            &(&req.tx, &req.state_overrides, &req.block_overrides),
        )
    }

    /// [`Self::evm_call`]'s run on a state already resolved.
    async fn run_evm<T: Send + 'static>(
        &self,
        state: StateAt,
        header: Header,
        f: impl Fn(CallEnv<'_>) -> RpcResult<T> + Send + 'static,
    ) -> RpcResult<T> {
        let spec = self.chain.spec();
        match f(CallEnv::new(&spec, &state, &header).inline()) {
            Err(RpcError::Exec(ExecError::OverBudget)) => {}
            done => return done,
        }
        self.bounded(move || f(CallEnv::new(&spec, &state, &header)))
            .await
    }

    /// [`EthRpc::evm_call`] as heavy work (`debug_traceCall`, `trace_call`).
    pub(super) async fn heavy_evm_call<T: Send + 'static>(
        &self,
        block: Option<BlockId>,
        f: impl FnOnce(CallEnv<'_>) -> RpcResult<T> + Send + 'static,
    ) -> RpcResult<T> {
        self.heavy(self.evm_job(block, f)?).await
    }

    /// `f` on the state of `block`, ready to run on either pool.
    fn evm_job<T>(
        &self,
        block: Option<BlockId>,
        f: impl FnOnce(CallEnv<'_>) -> RpcResult<T> + Send + 'static,
    ) -> RpcResult<impl FnOnce() -> RpcResult<T> + Send + 'static> {
        let (state, header) = self.state_for(block)?;
        let spec = self.chain.spec().clone();
        Ok(move || f(CallEnv::new(&spec, &state, &header)))
    }

    /// Runs heavy work on the heavy pool (see `heavy.rs`).
    pub(super) async fn heavy<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> RpcResult<T> + Send + 'static,
    ) -> RpcResult<T> {
        self.heavy.run(f).await
    }

    /// Runs a blocking job: off the async runtime, behind the job semaphore.
    pub(super) async fn bounded<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> RpcResult<T> + Send + 'static,
    ) -> RpcResult<T> {
        let _permit = self
            .jobs
            .clone()
            .acquire_owned()
            .await
            .map_err(RpcError::Closed)?;
        blocking(f).await
    }
}

impl EthRpc {
    /// Adds an encoded transaction to the pool (`eth_sendRawTransaction`'s path, recorded when
    /// refused).
    pub(super) async fn submit_raw(&self, bytes: Bytes) -> RpcResult<B256> {
        let pool = self.pool.clone();
        let chain = self.chain.clone();
        blocking(move || {
            let state = chain.storage().state_at(None)?;
            Ok(pool.add_raw_recorded(&bytes, &state, &chain.next_block(), Stage::Rpc)?)
        })
        .await
    }
}

impl EthRpc {
    /// EIP-7966: submits `bytes`, then waits for its receipt up to `timeout_ms` (the default
    /// when absent or zero, lowered to the cap).
    pub(super) async fn send_and_wait(
        &self,
        bytes: Bytes,
        timeout_ms: Option<u64>,
    ) -> RpcResult<TransactionReceipt> {
        let timeout = match timeout_ms {
            Some(ms) if ms > 0 => Duration::from_millis(ms).min(TX_SYNC_MAX_TIMEOUT),
            _ => TX_SYNC_DEFAULT_TIMEOUT,
        };
        let deadline = tokio::time::Instant::now() + timeout;
        // Subscribed before the submission: no block can slip between the two.
        let mut blocks = self.chain.subscribe();
        let hash = self.submit_raw(bytes).await?;
        loop {
            if let Some(receipt) = self.receipt_of(hash).await? {
                return Ok(receipt);
            }
            match tokio::time::timeout_at(deadline, blocks.recv()).await {
                Err(_) => return Err(RpcError::TxSyncTimeout { hash, timeout }),
                Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) => {
                    return Err(RpcError::Refused(
                        "the node is shutting down; ask eth_getTransactionReceipt later".into(),
                    ))
                }
                Ok(_) => {}
            }
        }
    }
}

/// Runs blocking work off the async runtime.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> RpcResult<T> + Send + 'static,
) -> RpcResult<T> {
    tokio::task::spawn_blocking(f).await?
}

impl EthRpc {
    /// The receipt of the mined transaction `hash`.
    async fn receipt_of(&self, hash: B256) -> RpcResult<Option<TransactionReceipt>> {
        let chain = self.chain.clone();
        self.bounded(move || {
            let storage = chain.storage();
            let Some((n, i)) = storage.tx_location(&hash)? else {
                return Ok(None);
            };
            let (block, receipts) = storage
                .block_with_receipts(n)?
                .ok_or(RpcError::HeaderNotFound)?;
            // A reorganisation between the two reads may have moved the transaction.
            if !convert::holds(&block, i as usize, &hash) {
                return Ok(None);
            }
            Ok(convert::rpc_receipt_at(&block, &receipts, i as usize))
        })
        .await
    }

    /// The oracle's tip: from its per-head cache when it has one, else computed as a heavy job.
    pub(super) async fn suggested_tip(&self) -> RpcResult<u128> {
        if let Some(tip) = self.fees.cached_tip() {
            return Ok(tip);
        }
        let fees = self.fees.clone();
        self.bounded(move || Ok(fees.suggested_tip()?)).await
    }
}

fn index_of(index: Index) -> usize {
    usize::from(index)
}

/// eth_call's result for a cached answer: the return data, or the revert error.
pub(crate) fn call_answer(answer: Answer) -> JsonRpcResult<Bytes> {
    match answer {
        Answer::Call {
            output,
            reverted: true,
        } => Err(RpcError::Exec(ExecError::Revert { output }).into()),
        Answer::Call { output, .. } => Ok(output),
        Answer::Gas(_) => unreachable!("eth_call's entries are calls"),
    }
}

/// eth_estimateGas's result for a cached answer.
pub(crate) fn gas_answer(answer: Answer) -> u64 {
    match answer {
        Answer::Gas(gas) => gas,
        Answer::Call { .. } => unreachable!("eth_estimateGas's entries are gas"),
    }
}

#[async_trait]
impl EthApiServer for EthRpc {
    fn chain_id(&self) -> JsonRpcResult<U64> {
        Ok(U64::from(self.chain.spec().chain_id))
    }

    fn syncing(&self) -> JsonRpcResult<Syncing> {
        Ok(convert::sync_status(
            self.net.sync(),
            self.chain.head().header.number,
        ))
    }

    fn blob_base_fee(&self) -> JsonRpcResult<Option<U256>> {
        let head = self.chain.head();
        Ok(l2node_node::fees::blob_base_fee(&self.chain.spec(), &head.header).map(U256::from))
    }

    fn coinbase(&self) -> JsonRpcResult<Address> {
        Ok(self.cfg.coinbase.ok_or(RpcError::NoEtherbase)?)
    }

    fn config(&self) -> JsonRpcResult<EthConfig> {
        let spec = self.chain.spec();
        let head = self.chain.head();
        Ok(spec
            .eth_config(self.chain.genesis_hash(), head.header.timestamp)
            .ok_or(RpcError::ConfigBeforeCancun)?)
    }

    async fn simulate_v1(
        &self,
        payload: SimulatePayload,
        block: Option<BlockId>,
    ) -> JsonRpcResult<Vec<RpcSimulatedBlock<Block>>> {
        let (state, header) = self.state_for(block)?;
        let chain = self.chain.clone();
        let gas_cap = self.cfg.gas_cap;
        let full = payload.return_full_transactions;
        let blocks = self.heavy(move || -> RpcResult<Vec<_>> {
            let spec = chain.spec();
            let blocks = chain
                .storage()
                .with_trie_at(header.number, |trie| {
                    executor::simulate(&spec, &state, trie, &header, payload, gas_cap)
                })?
                .map_err(|first| {
                    RpcError::NotFound(format!(
                        "cannot simulate on block {}: this node reads the state trie from block {first} on (--rpc-eth-proof-window, {} blocks; a pruned node also keeps the state of --history-window blocks only); use block {first} or later, or restart the node with a wider --rpc-eth-proof-window",
                        header.number, chain.storage().proof_window()
                    ))
                })?
                .map_err(RpcError::from)?;
            Ok(blocks
                .into_iter()
                .map(|b| RpcSimulatedBlock {
                    inner: convert::rpc_block(&b.block, full),
                    calls: b.calls,
                })
                .collect())
        });
        Ok(blocks.await?)
    }

    fn block_number(&self) -> JsonRpcResult<U64> {
        Ok(U64::from(self.chain.head().header.number))
    }

    fn accounts(&self) -> JsonRpcResult<Vec<Address>> {
        Ok(self.cfg.unlocked.iter().map(|k| k.address()).collect())
    }

    fn balance(&self, address: Address, block: Option<BlockId>) -> JsonRpcResult<U256> {
        let state = self.state_only(block)?;
        Ok(state
            .account(address)
            .map_err(RpcError::from)?
            .map(|a| a.balance)
            .unwrap_or_default())
    }

    fn transaction_count(&self, address: Address, block: Option<BlockId>) -> JsonRpcResult<U64> {
        if matches!(block, Some(BlockId::Number(BlockNumberOrTag::Pending))) {
            if let Some(n) = self.pool.pending_nonce(address) {
                return Ok(U64::from(n));
            }
        }
        let state = self.state_only(block)?;
        Ok(U64::from(
            state
                .account(address)
                .map_err(RpcError::from)?
                .map(|a| a.nonce)
                .unwrap_or_default(),
        ))
    }

    fn code(&self, address: Address, block: Option<BlockId>) -> JsonRpcResult<Bytes> {
        let state = self.state_only(block)?;
        let Some(acc) = state.account(address).map_err(RpcError::from)? else {
            return Ok(Bytes::new());
        };
        Ok(state
            .code_by_hash(acc.code_hash)
            .map_err(RpcError::from)?
            .original_bytes())
    }

    fn storage_at(
        &self,
        address: Address,
        slot: StorageSlot,
        block: Option<BlockId>,
    ) -> JsonRpcResult<B256> {
        let state = self.state_only(block)?;
        Ok(B256::from(
            state
                .storage(address, slot.0.into())
                .map_err(RpcError::from)?,
        ))
    }

    async fn call(
        &self,
        ext: &Extensions,
        request: TransactionRequest,
        block: Option<BlockId>,
        state_overrides: Option<StateOverride>,
        block_overrides: Option<Box<BlockOverrides>>,
    ) -> JsonRpcResult<Bytes> {
        let req = CallRequest {
            tx: request,
            state_overrides,
            block_overrides,
            gas_cap: self.cfg.gas_cap,
        };
        let answer = self
            .cached_evm_call((block, ext.get()), CALL, Arc::new(req), |at, req| {
                let out = executor::call(at, req)?;
                Ok(Answer::Call {
                    output: out.output,
                    reverted: out.reverted,
                })
            })
            .await?;
        call_answer(answer)
    }

    async fn estimate_gas(
        &self,
        ext: &Extensions,
        request: TransactionRequest,
        block: Option<BlockId>,
        state_overrides: Option<StateOverride>,
    ) -> JsonRpcResult<U64> {
        let req = CallRequest {
            tx: request,
            state_overrides,
            block_overrides: None,
            gas_cap: self.cfg.gas_cap,
        };
        let gas = self
            .estimate_gas_at((block, ext.get()), Arc::new(req))
            .await?;
        Ok(U64::from(gas))
    }

    async fn create_access_list(
        &self,
        request: TransactionRequest,
        block: Option<BlockId>,
    ) -> JsonRpcResult<AccessListResult> {
        let req = CallRequest::new(request, self.cfg.gas_cap);
        self.evm_call(block, move |at| {
            let out = executor::create_access_list(at, &req)?;
            Ok(AccessListResult {
                access_list: out.access_list,
                gas_used: U256::from(out.gas_used),
                error: out.error,
            })
        })
        .await
        .map_err(Into::into)
    }

    async fn send_raw_transaction(&self, bytes: Bytes) -> JsonRpcResult<B256> {
        Ok(self.submit_raw(bytes).await?)
    }

    async fn send_transaction(&self, transaction: TransactionRequest) -> JsonRpcResult<B256> {
        Ok(self.send_unlocked(transaction).await?)
    }

    async fn sign_transaction(&self, transaction: TransactionRequest) -> JsonRpcResult<Bytes> {
        let signed = self.sign_filled(transaction).await?;
        Ok(signed.encoded_2718().into())
    }

    async fn fill_transaction(
        &self,
        transaction: TransactionRequest,
    ) -> JsonRpcResult<SignedTransaction> {
        Ok(self.fill_unsigned(transaction).await?)
    }

    async fn sign(&self, address: Address, message: Bytes) -> JsonRpcResult<Bytes> {
        Ok(self.sign_message(address, &message)?)
    }

    async fn sign_typed_data_v4(
        &self,
        address: Address,
        typed_data: serde_json::Value,
    ) -> JsonRpcResult<Bytes> {
        Ok(self.sign_typed(address, typed_data)?)
    }

    async fn transaction_by_hash(&self, hash: B256) -> JsonRpcResult<Option<RpcTransaction>> {
        if let Some((n, i)) = self
            .chain
            .storage()
            .tx_location(&hash)
            .map_err(RpcError::from)?
        {
            let block = self
                .stored_block(Some(n))
                .await?
                .ok_or(RpcError::HeaderNotFound)?;
            // A reorganisation between the two reads may have moved the transaction.
            if convert::holds(&block, i as usize, &hash) {
                return Ok(Some(RpcTransaction(convert::rpc_tx_in_block(
                    &block, i as usize,
                ))));
            }
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
        let block = self.stored_block(n).await?;
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
        Ok(self.receipt_of(hash).await?)
    }

    async fn block_receipts(
        &self,
        block: BlockId,
    ) -> JsonRpcResult<Option<Vec<TransactionReceipt>>> {
        let n = self.number_of(block)?;
        let chain = self.chain.clone();
        let receipts = self
            .bounded(move || {
                let storage = chain.storage();
                let Some((block, receipts)) = n
                    .map(|n| storage.block_with_receipts(n))
                    .transpose()?
                    .flatten()
                else {
                    return Ok(None);
                };
                Ok(Some(convert::rpc_receipts(&block, &receipts)))
            })
            .await?;
        Ok(receipts)
    }

    async fn block_by_hash(&self, hash: B256, full: bool) -> JsonRpcResult<Option<Block>> {
        let n = self
            .chain
            .storage()
            .block_number(&hash)
            .map_err(RpcError::from)?;
        let Some(n) = n else { return Ok(None) };
        let chain = self.chain.clone();
        let block = self.bounded(move || {
            let block = chain.storage().block(n)?;
            Ok(block.map(|b| convert::rpc_block(&b, full)))
        });
        Ok(block.await?)
    }

    async fn block_by_number(
        &self,
        tag: BlockNumberOrTag,
        full: bool,
    ) -> JsonRpcResult<Option<BlockOrPending>> {
        if !tag.is_pending() {
            return Ok(self.sealed_block_json(tag, full).await?);
        }
        let pending = self.pending.clone();
        let v = self.bounded(move || {
            let block = convert::rpc_block(&pending.get()?.block, full);
            // geth: the pending block has no hash, nonce or miner yet.
            let mut v = serde_json::to_value(block).map_err(RpcError::Encode)?;
            for key in ["hash", "nonce", "miner"] {
                v[key] = serde_json::Value::Null;
            }
            Ok(v)
        });
        Ok(Some(BlockOrPending::Pending(v.await?)))
    }

    async fn block_transaction_count_by_hash(&self, hash: B256) -> JsonRpcResult<Option<U64>> {
        let n = self
            .chain
            .storage()
            .block_number(&hash)
            .map_err(RpcError::from)?;
        Ok(self
            .stored_block(n)
            .await?
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
        Ok(self.chain.resolve_tag(tag).map(|_| U64::ZERO))
    }

    async fn gas_price(&self) -> JsonRpcResult<U256> {
        let tip = self.suggested_tip().await?;
        let head = self.chain.head();
        let base = self.chain.spec().next_base_fee(&head.header);
        Ok(U256::from(tip) + U256::from(base))
    }

    async fn max_priority_fee_per_gas(&self) -> JsonRpcResult<U256> {
        Ok(U256::from(self.suggested_tip().await?))
    }

    async fn fee_history(
        &self,
        block_count: U64,
        newest: BlockNumberOrTag,
        percentiles: Option<Vec<f64>>,
    ) -> JsonRpcResult<FeeHistory> {
        let (pending, fees) = (self.pending.clone(), self.fees.clone());
        let count = block_count.to::<u64>();
        let history = self
            .bounded(move || {
                let pending = || pending.get();
                Ok(fees.fee_history(count, newest, percentiles.as_deref(), pending)?)
            })
            .await?;
        Ok(history)
    }

    async fn logs(&self, filter: Filter) -> JsonRpcResult<Vec<Log>> {
        let logs = self.logs.clone();
        let (from, to) = logs.resolve_range(&filter).map_err(RpcError::from)?;
        let search = move || Ok(logs.get_logs(&filter)?);
        if to.saturating_sub(from) >= RPC_LIGHT_LOGS_RANGE {
            Ok(self.heavy(search).await?)
        } else {
            Ok(self.bounded(search).await?)
        }
    }

    async fn new_filter(&self, filter: Filter) -> JsonRpcResult<U256> {
        let head = self.chain.head().header.number;
        let (from, _) = self.logs.resolve_range(&filter).map_err(RpcError::from)?;
        // Like geth, changes are the logs of blocks mined after the filter was installed
        // (eth_getFilterLogs answers the whole range).
        Ok(self
            .filters
            .install_logs(filter, from.max(head + 1), self.chain.subscribe_reorgs())?)
    }

    async fn new_block_filter(&self) -> JsonRpcResult<U256> {
        let next = self.chain.head().header.number + 1;
        Ok(self
            .filters
            .install_blocks(next, self.chain.subscribe_reorgs())?)
    }

    async fn new_pending_transaction_filter(&self) -> JsonRpcResult<U256> {
        Ok(self.filters.install_pending(self.pool.subscribe())?)
    }

    async fn filter_changes(&self, id: U256) -> JsonRpcResult<FilterChanges> {
        let (filters, chain, logs) = (self.filters.clone(), self.chain.clone(), self.logs.clone());
        Ok(self
            .bounded(move || filters.changes(&chain, &logs, id))
            .await?)
    }

    async fn filter_logs(&self, id: U256) -> JsonRpcResult<Vec<Log>> {
        // The filter too is read on the pool: an eth_getFilterChanges of the same filter holds
        // it for its whole search.
        let (filters, logs) = (self.filters.clone(), self.logs.clone());
        Ok(self
            .bounded(move || Ok(logs.get_logs(&filters.log_filter(id)?)?))
            .await?)
    }

    async fn uninstall_filter(&self, id: U256) -> JsonRpcResult<bool> {
        Ok(self.filters.uninstall(id))
    }

    async fn proof(
        &self,
        address: Address,
        given: Vec<JsonStorageKey>,
        block: Option<BlockId>,
    ) -> JsonRpcResult<EIP1186AccountProofResponse> {
        let block = block.unwrap_or(BlockId::latest());
        let n = self.number_of(block)?.ok_or(RpcError::HeaderNotFound)?;
        let keys: Vec<B256> = given.iter().map(JsonStorageKey::as_b256).collect();
        if keys.len() > MAX_PROOF_KEYS {
            return Err(RpcError::LimitExceeded(format!(
                "eth_getProof asks for {} storage keys; at most {MAX_PROOF_KEYS} are proved per request: split the keys over several calls",
                keys.len()
            ))
            .into());
        }
        let chain = self.chain.clone();
        // A block before the head sets back what the later blocks changed: heavy work.
        let heavy = keys.len() > RPC_LIGHT_PROOF_KEYS || n < self.chain.head().header.number;
        let prove = move || {
            chain.storage().proof(address, &keys, n)?.map_err(|first| {
                RpcError::NotFound(format!(
                    "no state proof for block {n}: this node proves blocks from {first} on (the last {} blocks, --rpc-eth-proof-window; a pruned node also keeps the state of --history-window blocks only); ask for block {first} or later, or restart the node with a wider --rpc-eth-proof-window",
                    chain.storage().proof_window()
                ))
            })
        };
        let mut proof = if heavy {
            self.heavy(prove).await?
        } else {
            self.bounded(prove).await?
        };
        // Each key as given: a 32-byte hash stays one, a short key stays a quantity (geth).
        for (entry, key) in proof.storage_proof.iter_mut().zip(given) {
            entry.key = key;
        }
        Ok(proof)
    }

    async fn storage_values(
        &self,
        requests: BTreeMap<Address, Vec<StorageSlot>>,
        block: Option<BlockId>,
    ) -> JsonRpcResult<BTreeMap<String, Vec<B256>>> {
        let total: usize = requests.values().map(Vec::len).sum();
        if total == 0 {
            return Err(RpcError::InvalidParams(
                "empty request: give at least one address with one storage slot".into(),
            )
            .into());
        }
        if total > MAX_STORAGE_VALUES_SLOTS {
            return Err(RpcError::InvalidParams(format!(
                "too many slots (max {MAX_STORAGE_VALUES_SLOTS}): the request asks for {total}; \
                 split it over several calls"
            ))
            .into());
        }
        let state = self.state_only(block)?;
        Ok(self
            .bounded(move || {
                requests
                    .into_iter()
                    .map(|(address, slots)| {
                        let values = slots
                            .into_iter()
                            .map(|slot| Ok(B256::from(state.storage(address, slot.0.into())?)))
                            .collect::<RpcResult<Vec<B256>>>()?;
                        Ok((format!("{address:#x}"), values))
                    })
                    .collect()
            })
            .await?)
    }

    fn base_fee(&self) -> JsonRpcResult<Option<U256>> {
        let head = self.chain.head();
        let spec = self.chain.spec();
        Ok(spec
            .is_london_active_at_block(head.header.number + 1)
            .then(|| U256::from(spec.next_base_fee(&head.header))))
    }

    async fn capabilities(&self) -> JsonRpcResult<Capabilities> {
        let head = self.chain.head();
        // Blocks, receipts, transactions and logs are kept from genesis (from the block after
        // the snapshot on a node that joined from one); state from the first block of the
        // history window on a pruned node (genesis on an archive node).
        let storage = self.chain.storage();
        let kept = HistoryCapability {
            disabled: false,
            oldest_block: Some(U64::from(storage.first_block().map_err(RpcError::from)?)),
        };
        let first_proof = storage.first_proof_block().map_err(RpcError::from)?;
        let first_state = storage.first_state_block().map_err(RpcError::from)?;
        Ok(Capabilities {
            head: CapabilitiesHead {
                number: U64::from(head.header.number),
                hash: head.hash,
            },
            state: HistoryCapability {
                disabled: false,
                oldest_block: Some(U64::from(first_state)),
            },
            tx: kept,
            logs: kept,
            receipts: kept,
            blocks: kept,
            stateproofs: HistoryCapability {
                disabled: false,
                oldest_block: Some(U64::from(first_proof)),
            },
        })
    }

    async fn send_raw_transaction_sync(
        &self,
        bytes: Bytes,
        timeout: Option<NumberOrHex>,
    ) -> JsonRpcResult<TransactionReceipt> {
        Ok(self
            .send_and_wait(bytes, timeout.map(NumberOrHex::get))
            .await?)
    }
}

//! The `debug_` methods (geth's `debug_getRaw*` and `debug_trace*`) and `rpc_modules`.

use std::collections::BTreeMap;

use alloy_consensus::{transaction::SignerRecoverable, Block, TxEnvelope};
use alloy_eips::{eip2718::Encodable2718, BlockId, BlockNumberOrTag};
use alloy_primitives::{Bytes, B256};
use alloy_rlp::{Decodable, Encodable};
use alloy_rpc_types_eth::TransactionRequest;
use jsonrpsee::core::{async_trait, RpcResult};
use l2node_api::types::{
    BadBlock, GethDebugTracingCallOptions, GethDebugTracingOptions, GethTrace,
    LocalizedTransactionTrace, TraceResult, TraceResults, TraceResultsWithTransactionHash,
    TraceType,
};
use l2node_api::{DebugApiServer, RpcApiServer, TraceApiServer};

use super::{convert, error::RpcError, EthRpc, Namespace};
use l2node_node::executor::{self, CallRequest};
use l2node_storage::StoredBlock;

impl EthRpc {
    /// The number of `id`, or geth's "header #N not found" / "header 0x.. not found".
    fn held(&self, id: BlockId, what: &str) -> RpcResult<u64> {
        let missing = || match id {
            BlockId::Hash(h) => RpcError::NotFound(format!("{what} {} not found", h.block_hash)),
            BlockId::Number(tag) => RpcError::NotFound(match tag.as_number() {
                Some(n) => format!("{what} #{n} not found"),
                None => format!("{what} {tag} not found"),
            }),
        };
        let n = match id {
            BlockId::Hash(h) => self
                .chain
                .storage()
                .block_number(&h.block_hash)
                .map_err(RpcError::from)?,
            BlockId::Number(tag) => self.chain.resolve_tag(tag),
        };
        Ok(n.ok_or_else(missing)?)
    }

    /// Replays block `n` on its parent's state under the tracer (only transaction `only`, or
    /// all), off the async runtime.
    async fn trace_block_number(
        &self,
        n: u64,
        only: Option<usize>,
        opts: GethDebugTracingOptions,
    ) -> RpcResult<Vec<(B256, GethTrace)>> {
        if n == 0 {
            return Err(RpcError::NotFound("genesis is not traceable".into()).into());
        }
        let chain = self.chain.clone();
        self.heavy(move || {
            let storage = chain.storage();
            let b = storage
                .block(n)?
                .ok_or_else(|| RpcError::NotFound(format!("block #{n} not found")))?;
            let parent = storage.state_at(Some(n - 1))?;
            let block = Block {
                header: b.header,
                body: b.body,
            };
            Ok(executor::trace_block(
                &chain.spec(),
                &parent,
                &block,
                &b.senders,
                only,
                opts,
            )?)
        })
        .await
        .map_err(Into::into)
    }

    async fn trace_block_id(
        &self,
        id: BlockId,
        opts: Option<GethDebugTracingOptions>,
    ) -> RpcResult<Vec<TraceResult>> {
        let n = self.held(id, "block")?;
        Ok(self
            .trace_block_number(n, None, opts.unwrap_or_default())
            .await?
            .into_iter()
            .map(|(hash, result)| TraceResult::Success {
                result,
                tx_hash: Some(hash),
            })
            .collect())
    }
}

fn rlp(value: &impl Encodable) -> Bytes {
    let mut out = Vec::with_capacity(value.length());
    value.encode(&mut out);
    out.into()
}

#[async_trait]
impl DebugApiServer for EthRpc {
    async fn raw_header(&self, block: BlockId) -> RpcResult<Bytes> {
        let n = self.held(block, "header")?;
        let header = self.chain.storage().header(n).map_err(RpcError::from)?;
        Ok(rlp(&header.ok_or_else(|| {
            RpcError::NotFound(format!("header #{n} not found"))
        })?))
    }

    async fn raw_block(&self, block: BlockId) -> RpcResult<Bytes> {
        let n = self.held(block, "block")?;
        let b = self
            .stored_block(Some(n))
            .await?
            .ok_or_else(|| RpcError::NotFound(format!("block #{n} not found")))?;
        Ok(rlp(&Block {
            header: b.header,
            body: b.body,
        }))
    }

    async fn raw_receipts(&self, block: BlockId) -> RpcResult<Vec<Bytes>> {
        let n = self.held(block, "block")?;
        let chain = self.chain.clone();
        self.bounded(move || {
            let receipts = chain.storage().receipts(n)?.unwrap_or_default();
            Ok(receipts.iter().map(|r| r.encoded_2718().into()).collect())
        })
        .await
        .map_err(Into::into)
    }

    async fn raw_transaction(&self, hash: B256) -> RpcResult<Option<Bytes>> {
        let location = self
            .chain
            .storage()
            .tx_location(&hash)
            .map_err(RpcError::from)?;
        if let Some((n, i)) = location {
            let block = self.stored_block(Some(n)).await?;
            if let Some(tx) = block.and_then(|b| b.body.transactions.into_iter().nth(i as usize)) {
                return Ok(Some(tx.encoded_2718().into()));
            }
        }
        Ok(self.pool.get(&hash).map(|t| t.raw.clone()))
    }

    async fn bad_blocks(&self) -> RpcResult<Vec<BadBlock>> {
        let raw = self.chain.bad_blocks();
        Ok(self
            .bounded(move || {
                Ok(raw
                    .into_iter()
                    .filter_map(|rlp| {
                        let block = Block::<TxEnvelope>::decode(&mut rlp.as_ref()).ok()?;
                        // A bad block may carry a bad signature: its sender shows as zero.
                        let senders = block
                            .body
                            .transactions
                            .iter()
                            .map(|t| t.recover_signer().unwrap_or_default())
                            .collect();
                        let stored = StoredBlock {
                            hash: block.header.hash_slow(),
                            header: block.header,
                            body: block.body,
                            senders,
                        };
                        Some(BadBlock {
                            hash: stored.hash,
                            block: convert::rpc_block(&stored, true),
                            rlp,
                        })
                    })
                    .collect())
            })
            .await?)
    }

    async fn trace_transaction(
        &self,
        hash: B256,
        opts: Option<GethDebugTracingOptions>,
    ) -> RpcResult<GethTrace> {
        let (n, i) = self
            .chain
            .storage()
            .tx_location(&hash)
            .map_err(RpcError::from)?
            .ok_or_else(|| RpcError::NotFound("transaction not found".into()))?;
        let mut traces = self
            .trace_block_number(n, Some(i as usize), opts.unwrap_or_default())
            .await?;
        Ok(traces
            .pop()
            .ok_or_else(|| RpcError::NotFound("transaction not found".into()))?
            .1)
    }

    async fn trace_call(
        &self,
        call: TransactionRequest,
        block: Option<BlockId>,
        opts: Option<GethDebugTracingCallOptions>,
    ) -> RpcResult<GethTrace> {
        let opts = opts.unwrap_or_default();
        let req = CallRequest {
            tx: call,
            state_overrides: opts.state_overrides,
            block_overrides: opts.block_overrides.map(Box::new),
            gas_cap: self.cfg.gas_cap,
        };
        let tracing = opts.tracing_options;
        Ok(self
            .heavy_evm_call(block, move |at| {
                Ok(executor::trace_call(at, &req, tracing)?)
            })
            .await?)
    }

    async fn trace_block_by_number(
        &self,
        block: BlockNumberOrTag,
        opts: Option<GethDebugTracingOptions>,
    ) -> RpcResult<Vec<TraceResult>> {
        self.trace_block_id(BlockId::Number(block), opts).await
    }

    async fn trace_block_by_hash(
        &self,
        hash: B256,
        opts: Option<GethDebugTracingOptions>,
    ) -> RpcResult<Vec<TraceResult>> {
        self.trace_block_id(BlockId::from(hash), opts).await
    }
}

impl EthRpc {
    /// Block `id`'s number, its parent's state and the block, for a Parity trace; `None` for
    /// a block not held.
    pub(super) async fn parity<T: Send + 'static>(
        &self,
        id: BlockId,
        only: Option<B256>,
        f: impl FnOnce(
                &l2node_node::chainspec::ChainSpec,
                &dyn l2node_storage::StateReader,
                &Block<alloy_consensus::TxEnvelope>,
                &[alloy_primitives::Address],
                Option<usize>,
            ) -> Result<T, l2node_node::executor::ExecError>
            + Send
            + 'static,
    ) -> RpcResult<Option<T>> {
        let storage = self.chain.storage();
        let (n, index) = match only {
            Some(hash) => match storage.tx_location(&hash).map_err(RpcError::from)? {
                Some((n, i)) => (n, Some(i as usize)),
                None => return Ok(None),
            },
            None => match self.number_of(id)? {
                Some(n) => (n, None),
                None => return Ok(None),
            },
        };
        let chain = self.chain.clone();
        Ok(self
            .heavy(move || {
                let storage = chain.storage();
                let Some(b) = storage.block(n)? else {
                    return Ok(None);
                };
                let block = Block {
                    header: b.header,
                    body: b.body,
                };
                if n == 0 {
                    // The genesis block has no transactions to replay.
                    return Ok(Some(f(
                        &chain.spec(),
                        &storage.state_at(Some(0))?,
                        &block,
                        &[],
                        None,
                    )?));
                }
                let parent = storage.state_at(Some(n - 1))?;
                Ok(Some(f(&chain.spec(), &parent, &block, &b.senders, index)?))
            })
            .await?)
    }
}

#[async_trait]
impl TraceApiServer for EthRpc {
    async fn transaction(&self, hash: B256) -> RpcResult<Option<Vec<LocalizedTransactionTrace>>> {
        self.parity(BlockId::latest(), Some(hash), executor::parity_block_traces)
            .await
    }

    async fn block(&self, block: BlockId) -> RpcResult<Option<Vec<LocalizedTransactionTrace>>> {
        self.parity(block, None, executor::parity_block_traces)
            .await
    }

    async fn call(
        &self,
        call: TransactionRequest,
        trace_types: Vec<TraceType>,
        block: Option<BlockId>,
    ) -> RpcResult<TraceResults> {
        let req = CallRequest::new(call, self.cfg.gas_cap);
        let types = trace_types.into_iter().collect();
        Ok(self
            .heavy_evm_call(block, move |at| {
                Ok(executor::parity_call(at, &req, &types)?)
            })
            .await?)
    }

    async fn replay_block_transactions(
        &self,
        block: BlockId,
        trace_types: Vec<TraceType>,
    ) -> RpcResult<Option<Vec<TraceResultsWithTransactionHash>>> {
        let types: alloy_primitives::map::HashSet<TraceType> = trace_types.into_iter().collect();
        self.parity(block, None, move |spec, parent, block, senders, _| {
            executor::parity_replay_block(spec, parent, block, senders, &types)
        })
        .await
    }
}

/// `rpc_modules` of one transport: the namespaces it serves.
pub(super) struct RpcModules(pub(super) Vec<Namespace>);

impl RpcApiServer for RpcModules {
    fn modules(&self) -> RpcResult<BTreeMap<String, String>> {
        Ok(self
            .0
            .iter()
            .map(|n| n.prefix().to_owned())
            .chain(["rpc".to_owned()])
            .map(|n| (n, "1.0".to_owned()))
            .collect())
    }
}

//! geth's debug tracers (the struct logger, `callTracer`, `prestateTracer`, `4byteTracer`,
//! `noopTracer`, `flatCallTracer`, `muxTracer`) through revm-inspectors' `DebugInspector`:
//! [`trace_call`] for `debug_traceCall`, [`trace_block`] for `debug_traceTransaction` and
//! `debug_traceBlockBy*` (the block is replayed on its parent's state; the traced transaction
//! runs after the ones before it, as in the block); and the Parity-style traces of the `trace_`
//! namespace (call frames, `vmTrace`, `stateDiff`) through its `TracingInspector`.

use alloy_primitives::map::HashSet;

use alloy_consensus::{transaction::Recovered, Block, TxEnvelope};
use alloy_evm::{
    block::BlockExecutor,
    eth::{receipt_builder::AlloyReceiptBuilder, EthBlockExecutor, EthEvmContext},
    EthEvmFactory, Evm, EvmFactory, IntoTxEnv,
};
use alloy_primitives::{Address, B256};
use alloy_rpc_types_eth::TransactionInfo;
use alloy_rpc_types_trace::{
    geth::{GethDebugTracingOptions, GethTrace},
    parity::{LocalizedTransactionTrace, TraceResults, TraceResultsWithTransactionHash, TraceType},
};
use revm::{
    context::{BlockEnv, TxEnv},
    context_interface::result::ResultAndState,
    Inspector,
};
use revm_inspectors::tracing::{
    DebugInspector, TracingInspector, TracingInspectorConfig, TransactionContext,
};

use super::{
    block::{block_err, evm_env, execution_ctx, new_state, Db, ExecutorSpec},
    call::{call_evm, prepare, Deadline},
    CallEnv, CallRequest, ExecError,
};
use crate::chainspec::ChainSpec;
use l2node_storage::StateReader;

fn tracer_err(e: impl std::fmt::Display) -> ExecError {
    ExecError::Tracer(e.to_string())
}

/// `debug_traceCall`: `req` like `eth_call` on the state after `at.header`, traced.
pub fn trace_call(
    at: CallEnv<'_>,
    req: &CallRequest,
    opts: GethDebugTracingOptions,
) -> Result<GethTrace, ExecError> {
    let mut prepared = prepare(at, req)?;
    let mut inspector = DebugInspector::new(opts).map_err(tracer_err)?;
    let mut deadline = Deadline::of(&at);
    let res = {
        let mut evm = call_evm(
            &mut prepared.db,
            prepared.env.clone(),
            (&mut inspector, &mut deadline),
        );
        evm.transact(prepared.tx.clone())?
    };
    deadline.check()?;
    inspector
        .get_result(
            None,
            &prepared.tx,
            &prepared.env.block_env,
            &res,
            &mut prepared.db,
        )
        .map_err(tracer_err)
}

/// A transaction of a replayed block, as a tracer's result needs it.
pub(crate) struct Replayed<'r, 'a> {
    /// Position in the block.
    pub index: usize,
    /// Transaction hash.
    pub hash: B256,
    /// The block's hash and number.
    pub block_hash: B256,
    /// The transaction environment it ran with.
    pub tx_env: &'r TxEnv,
    /// The block environment.
    pub block_env: &'r BlockEnv,
    /// Its result and state changes (not committed yet).
    pub result: &'r ResultAndState,
    /// The state before it.
    pub db: &'r mut Db<'a>,
}

/// A block to replay: the chain, the state before the block, the block and its senders, and
/// which transaction to trace (`None`: all).
pub(crate) struct Replay<'a, 'b> {
    pub spec: &'b ChainSpec,
    pub parent: &'a dyn StateReader,
    pub block: &'b Block<TxEnvelope>,
    pub senders: &'b [Address],
    pub only: Option<usize>,
}

/// Replays `block` on `parent` (the state before it): the transactions before the traced ones
/// run plainly, each traced one (all, or only `only`) runs under `inspector`, reset by `reset`
/// first, and `finish` turns inspector and outcome into a result.
pub(crate) fn replay_block<'a, I, T>(
    Replay {
        spec,
        parent,
        block,
        senders,
        only,
    }: Replay<'a, '_>,
    mut inspector: I,
    mut reset: impl FnMut(&mut I) -> Result<(), ExecError>,
    mut finish: impl FnMut(&mut I, Replayed<'_, 'a>) -> Result<T, ExecError>,
) -> Result<Vec<T>, ExecError>
where
    I: Inspector<EthEvmContext<Db<'a>>>,
{
    let txs = &block.body.transactions;
    if senders.len() != txs.len() {
        return Err(ExecError::SendersMismatch {
            senders: senders.len(),
            transactions: txs.len(),
        });
    }
    let env = evm_env(spec, &block.header);
    let block_hash = block.header.hash_slow();
    let mut deadline = Deadline::after_timeout();
    let mut evm = EthEvmFactory::default().create_evm_with_inspector(
        new_state(parent),
        env.clone(),
        (&mut inspector, &mut deadline),
    );
    // Only the traced transactions run under the tracer.
    evm.disable_inspector();
    let mut executor = EthBlockExecutor::new(
        evm,
        execution_ctx(block),
        ExecutorSpec(spec),
        AlloyReceiptBuilder::default(),
    );
    executor.apply_pre_execution_changes().map_err(block_err)?;
    let mut out = Vec::new();
    for (index, (tx, sender)) in txs.iter().zip(senders).enumerate() {
        let recovered = Recovered::new_unchecked(tx, *sender);
        if only.is_none_or(|k| k == index) {
            let tx_env: TxEnv = recovered.into_tx_env();
            let evm = executor.evm_mut();
            reset(evm.components_mut().1 .0)?;
            evm.enable_inspector();
            let result = evm.transact(tx_env.clone())?;
            evm.disable_inspector();
            let (db, (tracer, deadline), _) = evm.components_mut();
            deadline.check()?;
            out.push(finish(
                tracer,
                Replayed {
                    index,
                    hash: *tx.tx_hash(),
                    block_hash,
                    tx_env: &tx_env,
                    block_env: &env.block_env,
                    result: &result,
                    db,
                },
            )?);
            if only == Some(index) {
                break;
            }
        }
        executor.execute_transaction(recovered).map_err(block_err)?;
    }
    Ok(out)
}

/// [`replay_block`] under revm-inspectors' call tracer with `config`, a fresh tracer per traced
/// transaction, handed to `finish` with its outcome.
pub(crate) fn replay_traced<'a, T>(
    replay: Replay<'a, '_>,
    config: TracingInspectorConfig,
    mut finish: impl FnMut(TracingInspector, Replayed<'_, 'a>) -> Result<T, ExecError>,
) -> Result<Vec<T>, ExecError> {
    replay_block(
        replay,
        TracingInspector::new(config),
        |t| {
            t.fuse();
            Ok(())
        },
        |t, r| finish(std::mem::replace(t, TracingInspector::new(config)), r),
    )
}

/// geth's tracers over the transactions of `block` (all of them, or only the one at `only`)
/// on `parent`, the state before the block. Returns each traced transaction's hash and trace.
pub fn trace_block(
    spec: &ChainSpec,
    parent: &dyn StateReader,
    block: &Block<TxEnvelope>,
    senders: &[Address],
    only: Option<usize>,
    opts: GethDebugTracingOptions,
) -> Result<Vec<(B256, GethTrace)>, ExecError> {
    let inspector = DebugInspector::new(opts).map_err(tracer_err)?;
    replay_block(
        Replay {
            spec,
            parent,
            block,
            senders,
            only,
        },
        inspector,
        |t| t.fuse().map_err(tracer_err),
        |t, r| {
            let context = TransactionContext {
                block_hash: Some(r.block_hash),
                tx_index: Some(r.index),
                tx_hash: Some(r.hash),
            };
            let trace = t
                .get_result(Some(context), r.tx_env, r.block_env, r.result, r.db)
                .map_err(tracer_err)?;
            Ok((r.hash, trace))
        },
    )
}

/// Parity-style traces (`trace_block`, `trace_transaction`) of `block`'s transactions (all, or
/// only `only`): every call frame, localized in the block.
pub fn parity_block_traces(
    spec: &ChainSpec,
    parent: &dyn StateReader,
    block: &Block<TxEnvelope>,
    senders: &[Address],
    only: Option<usize>,
) -> Result<Vec<LocalizedTransactionTrace>, ExecError> {
    let number = block.header.number;
    let traces = replay_traced(
        Replay {
            spec,
            parent,
            block,
            senders,
            only,
        },
        TracingInspectorConfig::default_parity(),
        |inspector, r| {
            let info = TransactionInfo {
                hash: Some(r.hash),
                index: Some(r.index as u64),
                block_hash: Some(r.block_hash),
                block_number: Some(number),
                base_fee: None,
                ..Default::default()
            };
            Ok(inspector
                .into_parity_builder()
                .with_transaction_gas_used(r.result.result.tx_gas_used())
                .into_localized_transaction_traces(info))
        },
    )?;
    Ok(traces.into_iter().flatten().collect())
}

/// `trace_replayBlockTransactions`: each transaction of `block` with the asked trace types
/// (`trace`, `vmTrace`, `stateDiff`).
pub fn parity_replay_block(
    spec: &ChainSpec,
    parent: &dyn StateReader,
    block: &Block<TxEnvelope>,
    senders: &[Address],
    types: &HashSet<TraceType>,
) -> Result<Vec<TraceResultsWithTransactionHash>, ExecError> {
    replay_traced(
        Replay {
            spec,
            parent,
            block,
            senders,
            only: None,
        },
        TracingInspectorConfig::from_parity_config(types),
        |inspector, r| {
            let full_trace = inspector
                .into_parity_builder()
                .into_trace_results_with_state(r.result, types, &*r.db)
                .map_err(|e| ExecError::Evm(e.to_string()))?;
            Ok(TraceResultsWithTransactionHash {
                full_trace,
                transaction_hash: r.hash,
            })
        },
    )
}

/// `trace_call`: `req` like `eth_call` on the state after `at.header`, with the asked trace
/// types.
pub fn parity_call(
    at: CallEnv<'_>,
    req: &CallRequest,
    types: &HashSet<TraceType>,
) -> Result<TraceResults, ExecError> {
    let mut prepared = prepare(at, req)?;
    let mut inspector = TracingInspector::new(TracingInspectorConfig::from_parity_config(types));
    let mut deadline = Deadline::of(&at);
    let res = {
        let mut evm = call_evm(
            &mut prepared.db,
            prepared.env.clone(),
            (&mut inspector, &mut deadline),
        );
        evm.transact(prepared.tx.clone())?
    };
    deadline.check()?;
    inspector
        .into_parity_builder()
        .into_trace_results_with_state(&res, types, &prepared.db)
        .map_err(|e| ExecError::Evm(e.to_string()))
}

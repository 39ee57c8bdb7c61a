//! geth's debug tracers (the struct logger, `callTracer`, `prestateTracer`, `4byteTracer`,
//! `noopTracer`, `flatCallTracer`, `muxTracer`) through revm-inspectors' `DebugInspector`:
//! [`trace_call`] for `debug_traceCall`, [`trace_block`] for `debug_traceTransaction` and
//! `debug_traceBlockBy*` (the block is replayed on its parent's state; the traced transaction
//! runs after the ones before it, as in the block).

use alloy_consensus::{transaction::Recovered, Block, TxEnvelope};
use alloy_evm::{
    block::BlockExecutor, eth::receipt_builder::AlloyReceiptBuilder, eth::EthBlockExecutor,
    EthEvmFactory, Evm, EvmFactory, IntoTxEnv,
};
use alloy_primitives::{Address, B256};
use alloy_rpc_types_trace::geth::{GethDebugTracingOptions, GethTrace};
use revm_inspectors::tracing::{DebugInspector, TransactionContext};

use super::{
    block::{block_err, evm_env, execution_ctx, new_state, ExecutorSpec},
    call::{prepare, Deadline},
    CallEnv, CallRequest, ExecError,
};
use crate::{chainspec::ChainSpec, constants::EVM_CALL_TIMEOUT, storage::StateReader};

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
    let mut deadline = Deadline::after_timeout();
    let res = {
        let mut evm = EthEvmFactory::default().create_evm_with_inspector(
            &mut prepared.db,
            prepared.env.clone(),
            (&mut inspector, &mut deadline),
        );
        evm.transact(prepared.tx.clone())?
    };
    if deadline.expired {
        return Err(ExecError::Timeout(EVM_CALL_TIMEOUT));
    }
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

/// Traces the transactions of `block` (all of them, or only the one at `only`) on `parent`,
/// the state before the block. Returns each traced transaction's hash and trace.
pub fn trace_block(
    spec: &ChainSpec,
    parent: &dyn StateReader,
    block: &Block<TxEnvelope>,
    senders: &[Address],
    only: Option<usize>,
    opts: GethDebugTracingOptions,
) -> Result<Vec<(B256, GethTrace)>, ExecError> {
    let txs = &block.body.transactions;
    if senders.len() != txs.len() {
        return Err(ExecError::SendersMismatch {
            senders: senders.len(),
            transactions: txs.len(),
        });
    }
    let env = evm_env(spec, &block.header);
    let block_hash = block.header.hash_slow();
    let mut inspector = DebugInspector::new(opts).map_err(tracer_err)?;
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
    for (i, (tx, sender)) in txs.iter().zip(senders).enumerate() {
        let recovered = Recovered::new_unchecked(tx, *sender);
        if only.is_none_or(|k| k == i) {
            let tx_env: revm::context::TxEnv = recovered.into_tx_env();
            let evm = executor.evm_mut();
            evm.enable_inspector();
            evm.components_mut().1 .0.fuse().map_err(tracer_err)?;
            let res = evm.transact(tx_env.clone())?;
            evm.disable_inspector();
            let (db, (tracer, deadline), _) = evm.components_mut();
            if deadline.expired {
                return Err(ExecError::Timeout(EVM_CALL_TIMEOUT));
            }
            let context = TransactionContext {
                block_hash: Some(block_hash),
                tx_index: Some(i),
                tx_hash: Some(*tx.tx_hash()),
            };
            let trace = tracer
                .get_result(Some(context), &tx_env, &env.block_env, &res, db)
                .map_err(tracer_err)?;
            out.push((*tx.tx_hash(), trace));
            if only == Some(i) {
                break;
            }
        }
        executor.execute_transaction(recovered).map_err(block_err)?;
    }
    Ok(out)
}

//! Replays for Otterscan's `ots_` methods, through revm-inspectors (its Otterscan internal
//! operations inspector and its call tracer), on the same block replay as the other tracers.

use alloy_consensus::{Block, TxEnvelope};
use alloy_primitives::{Address, Bytes, B256};
use alloy_rpc_types_trace::otterscan::{InternalOperation, TraceEntry};
use revm::{context_interface::result::ExecutionResult, inspector::NoOpInspector};
use revm_inspectors::{
    otterscan::InternalOperationsInspector,
    tracing::{types::CallTraceNode, TracingInspectorConfig},
};

use super::{
    error::ExecError,
    trace::{replay_block, replay_traced, Replay},
};
use crate::chainspec::ChainSpec;
use l2node_storage::StateReader;

/// The call frames of each replayed transaction (all of `block`'s, or only `only`).
fn call_nodes(
    spec: &ChainSpec,
    parent: &dyn StateReader,
    block: &Block<TxEnvelope>,
    senders: &[Address],
    only: Option<usize>,
) -> Result<Vec<(B256, Vec<CallTraceNode>)>, ExecError> {
    replay_traced(
        Replay {
            spec,
            parent,
            block,
            senders,
            only,
        },
        TracingInspectorConfig::default_parity(),
        |inspector, r| Ok((r.hash, inspector.into_traces().into_nodes())),
    )
}

/// `ots_traceTransaction`: every call frame of transaction `only` of `block`, depth-first,
/// creations and self-destructs included (as Erigon and reth list them).
pub fn ots_trace(
    spec: &ChainSpec,
    parent: &dyn StateReader,
    block: &Block<TxEnvelope>,
    senders: &[Address],
    only: Option<usize>,
) -> Result<Vec<TraceEntry>, ExecError> {
    let nodes = call_nodes(spec, parent, block, senders, only)?;
    Ok(nodes
        .into_iter()
        .flat_map(|(_, nodes)| nodes)
        .map(|node| TraceEntry {
            r#type: if node.is_selfdestruct() {
                "SELFDESTRUCT".to_string()
            } else {
                node.kind().to_string()
            },
            depth: node.trace.depth as u32,
            from: node.trace.caller,
            to: node.trace.address,
            value: Some(node.trace.value),
            input: node.trace.data,
            output: node.trace.output,
        })
        .collect())
}

/// The contracts `block` created, as (transaction hash, creating address, created address),
/// top-level deployments and creations by contracts alike; failed creations are left out.
pub fn ots_creations(
    spec: &ChainSpec,
    parent: &dyn StateReader,
    block: &Block<TxEnvelope>,
    senders: &[Address],
    only: Option<usize>,
) -> Result<Vec<(B256, Address, Address)>, ExecError> {
    let nodes = call_nodes(spec, parent, block, senders, only)?;
    Ok(nodes
        .into_iter()
        .flat_map(|(hash, nodes)| {
            nodes
                .into_iter()
                .filter(|n| n.kind().is_any_create() && n.trace.success)
                .map(move |n| (hash, n.trace.caller, n.trace.address))
        })
        .collect())
}

/// `ots_getInternalOperations`: the ether transfers, creations and self-destructs inside
/// transaction `only` (not its top-level call).
pub fn ots_internal_operations(
    spec: &ChainSpec,
    parent: &dyn StateReader,
    block: &Block<TxEnvelope>,
    senders: &[Address],
    only: Option<usize>,
) -> Result<Vec<InternalOperation>, ExecError> {
    let ops = replay_block(
        Replay {
            spec,
            parent,
            block,
            senders,
            only,
        },
        InternalOperationsInspector::default(),
        |t| {
            *t = InternalOperationsInspector::default();
            Ok(())
        },
        |t, _| Ok(std::mem::take(t).into_operations()),
    )?;
    Ok(ops.into_iter().flatten().collect())
}

/// `ots_getTransactionError`: the revert data of transaction `only` (`0x` when it did not
/// revert).
pub fn ots_transaction_error(
    spec: &ChainSpec,
    parent: &dyn StateReader,
    block: &Block<TxEnvelope>,
    senders: &[Address],
    only: Option<usize>,
) -> Result<Bytes, ExecError> {
    let outputs = replay_block(
        Replay {
            spec,
            parent,
            block,
            senders,
            only,
        },
        NoOpInspector,
        |_| Ok(()),
        |_, r| {
            Ok(match &r.result.result {
                ExecutionResult::Revert { output, .. } => output.clone(),
                _ => Bytes::new(),
            })
        },
    )?;
    Ok(outputs.into_iter().next().unwrap_or_default())
}

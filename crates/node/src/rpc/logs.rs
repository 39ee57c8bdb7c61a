//! eth_getLogs: range checks, the log index, exact matching and the result limit.

use alloy_eips::BlockNumberOrTag;
use alloy_rpc_types_eth::{Filter, FilterBlockOption, Log};

use super::{
    convert,
    error::{RpcError, RpcResult},
    eth::EthRpc,
};
use crate::storage::{LogQuery, StoredBlock};

/// Resolves a filter's block range to numbers (`to` is clamped to the head).
pub fn resolve_range(rpc: &EthRpc, filter: &Filter) -> RpcResult<(u64, u64)> {
    let head = rpc.chain.head().header.number;
    match &filter.block_option {
        FilterBlockOption::AtBlockHash(hash) => {
            let n = rpc.chain.storage().block_number(hash)?.ok_or_else(|| {
                RpcError::InvalidParams(format!("blockHash {hash} is not a known block"))
            })?;
            Ok((n, n))
        }
        FilterBlockOption::Range {
            from_block,
            to_block,
        } => {
            let resolve = |b: Option<BlockNumberOrTag>| match b.unwrap_or_default() {
                BlockNumberOrTag::Number(n) => n,
                other => rpc.number_of_tag(other).unwrap_or(head),
            };
            let from = resolve(*from_block);
            let to = resolve(*to_block).min(head);
            if from_block.is_some_and(|b| {
                b.as_number()
                    .is_some_and(|f| f > to_block.and_then(|t| t.as_number()).unwrap_or(u64::MAX))
            }) {
                return Err(RpcError::InvalidParams(
                    "invalid block range params: fromBlock is after toBlock".into(),
                ));
            }
            Ok((from, to))
        }
    }
}

/// Logs matching `filter`, oldest first.
pub fn get_logs(rpc: &EthRpc, filter: &Filter) -> RpcResult<Vec<Log>> {
    let (from, to) = resolve_range(rpc, filter)?;
    if from > to {
        return Ok(vec![]);
    }
    let max_range = rpc.cfg.max_logs_range;
    if max_range > 0 && to - from + 1 > max_range {
        return Err(RpcError::LimitExceeded(format!(
            "query exceeds max block range {max_range} (--rpc-max-logs-range): retry with fromBlock {from:#x} and toBlock {:#x}, then continue from there",
            from + max_range - 1
        )));
    }
    logs_in_range(rpc, filter, from, to)
}

/// Logs of held blocks `from..=to` matching `filter` (no range limit).
pub fn logs_in_range(rpc: &EthRpc, filter: &Filter, from: u64, to: u64) -> RpcResult<Vec<Log>> {
    let storage = rpc.chain.storage();
    let mut topics: [Vec<alloy_primitives::B256>; 4] = Default::default();
    for (i, t) in filter.topics.iter().enumerate() {
        topics[i] = t.iter().copied().collect();
    }
    let query = LogQuery {
        from,
        to,
        addresses: filter.address.iter().copied().collect(),
        topics,
    };
    let mut out = Vec::new();
    for n in storage.log_candidate_blocks(&query)? {
        let Some(block) = storage.block(n)? else {
            continue;
        };
        if !filter.matches_bloom(block.header.logs_bloom) {
            continue;
        }
        let receipts = storage.receipts(n)?.unwrap_or_default();
        collect_block_logs(filter, &block, &receipts, &mut out);
        let max = rpc.cfg.max_logs_per_response;
        if max > 0 && out.len() > max {
            let last_ok = n.saturating_sub(1).max(from);
            return Err(RpcError::LimitExceeded(format!(
                "query returned more than {max} logs: retry with the range fromBlock {from:#x} toBlock {last_ok:#x}, then continue from {:#x}",
                last_ok + 1
            )));
        }
    }
    Ok(out)
}

/// Appends the logs of one block that match `filter`.
pub fn collect_block_logs(
    filter: &Filter,
    block: &StoredBlock,
    receipts: &[alloy_consensus::ReceiptEnvelope],
    out: &mut Vec<Log>,
) {
    let mut log_index = 0;
    for (i, r) in receipts.iter().enumerate() {
        let logs = convert::rpc_logs(block, r, i, log_index);
        log_index += logs.len();
        out.extend(logs.into_iter().filter(|l| {
            filter.matches_address(l.inner.address) && filter.matches_topics(l.inner.topics())
        }));
    }
}

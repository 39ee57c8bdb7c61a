//! Log search (eth_getLogs, log filters, the `logs` subscription): range resolution and limits,
//! candidate blocks from the storage's log index, exact matching.

use std::{sync::Arc, time::Instant};

use alloy_consensus::ReceiptEnvelope;
use alloy_eips::{eip2718::Encodable2718, BlockNumberOrTag};
use alloy_primitives::B256;
use alloy_rpc_types_eth::{Filter, FilterBlockOption, Log};

use crate::chain::Chain;
use crate::constants::LOG_SEARCH_TIMEOUT;
use l2node_storage::{LogQuery, StorageError, StoredBlock};

/// Why a log query was refused.
#[derive(Debug, thiserror::Error)]
pub enum LogsError {
    /// A `blockHash` filter names a block this node does not hold (geth's wording).
    #[error("unknown block")]
    UnknownBlock,
    /// `fromBlock` is after `toBlock` (geth's wording, which conformance suites compare).
    #[error("invalid block range params")]
    InvalidRange,
    /// An explicit `toBlock` is past the head (geth's wording).
    #[error("block range extends beyond current head block")]
    BeyondHead,
    /// The range spans more blocks than allowed.
    #[error("query exceeds max block range {max} (--rpc-max-logs-range): retry with fromBlock {from:#x} and toBlock {:#x}, then continue from there", from + max - 1)]
    RangeTooLarge {
        /// The limit.
        max: u64,
        /// First block of the query.
        from: u64,
    },
    /// More logs matched than one answer may carry.
    #[error("query returned more than {max} logs: retry with the range fromBlock {from:#x} toBlock {last_ok:#x}, then continue from {:#x}", last_ok + 1)]
    TooManyLogs {
        /// The limit.
        max: usize,
        /// First block of the query.
        from: u64,
        /// Last block whose logs still fit.
        last_ok: u64,
    },
    /// The search ran past [`LOG_SEARCH_TIMEOUT`].
    #[error("query timed out after {:?}: retry with the range fromBlock {from:#x} toBlock {last_ok:#x}, then continue from {:#x}", LOG_SEARCH_TIMEOUT, last_ok + 1)]
    Timeout {
        /// First block of the query.
        from: u64,
        /// Last block searched in time.
        last_ok: u64,
    },
    /// Storage failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// One page of a log search: the logs of blocks `from..next`.
#[derive(Debug)]
pub struct LogPage {
    /// The matching logs, oldest first.
    pub logs: Vec<Log>,
    /// The first block not searched yet (`to + 1` when the range is done).
    pub next: u64,
}

/// The log search service over the chain, with the node's result limits.
#[derive(Debug, Clone)]
pub struct LogSearch {
    chain: Arc<Chain>,
    /// Largest block range of one query (0 = unlimited).
    max_range: u64,
    /// Most logs in one answer (0 = unlimited).
    max_logs: usize,
}

impl LogSearch {
    /// Log search over `chain` with the given limits (0 = unlimited).
    pub fn new(chain: Arc<Chain>, max_range: u64, max_logs: usize) -> Self {
        Self {
            chain,
            max_range,
            max_logs,
        }
    }

    /// Resolves a filter's block range to numbers (`to` is clamped to the head).
    pub fn resolve_range(&self, filter: &Filter) -> Result<(u64, u64), LogsError> {
        let head = self.chain.head().header.number;
        match &filter.block_option {
            FilterBlockOption::AtBlockHash(hash) => {
                let n = self
                    .chain
                    .storage()
                    .block_number(hash)?
                    .ok_or(LogsError::UnknownBlock)?;
                Ok((n, n))
            }
            FilterBlockOption::Range {
                from_block,
                to_block,
            } => {
                let resolve = |b: Option<BlockNumberOrTag>| match b.unwrap_or_default() {
                    BlockNumberOrTag::Number(n) => n,
                    other => self.chain.resolve_tag(other).unwrap_or(head),
                };
                let from = resolve(*from_block);
                let to = resolve(*to_block).min(head);
                let explicit_to = to_block.and_then(|t| t.as_number()).unwrap_or(u64::MAX);
                if from_block.is_some_and(|b| b.as_number().is_some_and(|f| f > explicit_to)) {
                    return Err(LogsError::InvalidRange);
                }
                Ok((from, to))
            }
        }
    }

    /// Logs matching `filter`, oldest first, within the range and result limits.
    pub fn get_logs(&self, filter: &Filter) -> Result<Vec<Log>, LogsError> {
        // geth refuses a range that reaches past the head rather than clamp it.
        if let FilterBlockOption::Range {
            to_block: Some(BlockNumberOrTag::Number(to)),
            ..
        } = &filter.block_option
        {
            if *to > self.chain.head().header.number {
                return Err(LogsError::BeyondHead);
            }
        }
        let (from, to) = self.resolve_range(filter)?;
        if from > to {
            return Err(LogsError::InvalidRange);
        }
        let max = self.max_range;
        if max > 0 && to - from + 1 > max {
            return Err(LogsError::RangeTooLarge { max, from });
        }
        self.logs_in_range(filter, from, to)
    }

    /// Logs of held blocks `from..=to` matching `filter` (no range limit; over the result
    /// limit or the time limit it is an error naming the range to retry).
    pub fn logs_in_range(
        &self,
        filter: &Filter,
        from: u64,
        to: u64,
    ) -> Result<Vec<Log>, LogsError> {
        let page = self.scan(filter, from, to, false)?;
        Ok(page.logs)
    }

    /// Like [`Self::logs_in_range`], but over the result or time limit it stops at a block
    /// boundary and returns what it has, with the block to continue from: a polling filter
    /// pages through a long backlog instead of failing on every poll.
    pub fn logs_page(&self, filter: &Filter, from: u64, to: u64) -> Result<LogPage, LogsError> {
        self.scan(filter, from, to, true)
    }

    fn scan(&self, filter: &Filter, from: u64, to: u64, paged: bool) -> Result<LogPage, LogsError> {
        let started = Instant::now();
        let storage = self.chain.storage();
        let mut topics: [Vec<B256>; 4] = Default::default();
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
            let last_ok = n.saturating_sub(1).max(from);
            if started.elapsed() > LOG_SEARCH_TIMEOUT {
                if paged && n > from {
                    return Ok(LogPage { logs: out, next: n });
                }
                return Err(LogsError::Timeout { from, last_ok });
            }
            let Some(block) = storage.block(n)? else {
                continue;
            };
            if !filter.matches_bloom(block.header.logs_bloom) {
                continue;
            }
            let receipts = storage.receipt_logs(n)?.unwrap_or_default();
            let before = out.len();
            collect_block_logs(filter, &block, receipts.iter().map(Vec::as_slice), &mut out);
            let max = self.max_logs;
            if max > 0 && out.len() > max {
                if paged {
                    // Whole blocks only; a block over the limit on its own is served whole.
                    if before > 0 {
                        out.truncate(before);
                        return Ok(LogPage { logs: out, next: n });
                    }
                    return Ok(LogPage {
                        logs: out,
                        next: n + 1,
                    });
                }
                return Err(LogsError::TooManyLogs { max, from, last_ok });
            }
        }
        Ok(LogPage {
            logs: out,
            next: to + 1,
        })
    }
}

/// Appends the logs of one block that match `filter`; `receipts` are the logs of each of its
/// transactions (receipt order). A transaction's hash is computed only when one of its logs
/// matches.
pub fn collect_block_logs<'r>(
    filter: &Filter,
    block: &StoredBlock,
    receipts: impl IntoIterator<Item = &'r [alloy_primitives::Log]>,
    out: &mut Vec<Log>,
) {
    let mut log_index = 0;
    for (i, logs) in receipts.into_iter().enumerate() {
        let mut tx_hash = None;
        for (j, l) in logs.iter().enumerate() {
            if filter.matches_address(l.address) && filter.matches_topics(l.topics()) {
                let hash = *tx_hash.get_or_insert_with(|| block.body.transactions[i].trie_hash());
                out.push(rpc_log(block, hash, i, log_index + j, l));
            }
        }
        log_index += logs.len();
    }
}

fn rpc_log(
    block: &StoredBlock,
    tx_hash: B256,
    index: usize,
    log_index: usize,
    log: &alloy_primitives::Log,
) -> Log {
    Log {
        inner: log.clone(),
        block_hash: Some(block.hash),
        block_number: Some(block.header.number),
        block_timestamp: Some(block.header.timestamp),
        transaction_hash: Some(tx_hash),
        transaction_index: Some(index as u64),
        log_index: Some(log_index as u64),
        removed: false,
    }
}

/// The logs of transaction `index` of `block` in RPC shape; `first_log_index` is the block-wide
/// index of its first log.
pub fn tx_logs(
    block: &StoredBlock,
    receipt: &ReceiptEnvelope,
    index: usize,
    first_log_index: usize,
) -> Vec<Log> {
    let tx_hash = block.body.transactions[index].trie_hash();
    receipt
        .logs()
        .iter()
        .enumerate()
        .map(|(i, l)| rpc_log(block, tx_hash, index, first_log_index + i, l))
        .collect()
}

//! Polling filters (eth_newFilter & co.) for HTTP clients: a bounded number at a time,
//! idle ones expired by a background sweep, and each polled under its own lock so a slow log
//! query never blocks other filters.

use std::{
    collections::HashMap,
    sync::{Arc, Weak},
    time::{Duration, Instant},
};

use alloy_primitives::{B256, U256};
use alloy_rpc_types_eth::{Filter, FilterChanges};
use parking_lot::Mutex;
use tokio::sync::broadcast;

use super::error::{RpcError, RpcResult};
use l2node_node::chain::{Chain, Reorg};
use l2node_node::logs::{collect_block_logs, LogSearch};
use l2node_storage::StoredBlock;

enum Kind {
    Logs {
        filter: Box<Filter>,
        next: u64,
        reorgs: broadcast::Receiver<Arc<Reorg>>,
    },
    Blocks {
        next: u64,
        reorgs: broadcast::Receiver<Arc<Reorg>>,
    },
    Pending(broadcast::Receiver<B256>),
}

/// The reorganisations since the last poll, each with the blocks it took back that the filter
/// had already reported (below `next` at that point), oldest first; `next` moves back to the
/// first block taken back (not below `floor`, the filter's own first block), so the blocks that
/// replaced them are reported next, as geth's filters do.
fn taken_back(
    reorgs: &mut broadcast::Receiver<Arc<Reorg>>,
    next: &mut u64,
    floor: u64,
) -> Vec<(StoredBlock, Vec<alloy_consensus::ReceiptEnvelope>)> {
    let mut reported = Vec::new();
    loop {
        match reorgs.try_recv() {
            Ok(reorg) => {
                reported.extend(
                    reorg
                        .removed
                        .iter()
                        .filter(|(b, _)| b.header.number < *next)
                        .cloned(),
                );
                if let Some((first, _)) = reorg.removed.first() {
                    *next = (*next).min(first.header.number.max(floor));
                }
            }
            Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
            Err(_) => return reported,
        }
    }
}

struct Entry {
    kind: Kind,
    last_poll: Instant,
}

type Shared = Arc<Mutex<Entry>>;

/// Installed filters by id.
pub(super) struct Filters {
    entries: Mutex<HashMap<U256, Shared>>,
    timeout: Duration,
    max: usize,
}

impl Filters {
    /// An empty registry of at most `max` filters, which expire after `timeout` without a
    /// poll; the expiry sweep runs on the current tokio runtime (if any) for as long as the
    /// registry lives.
    pub(super) fn new(timeout: Duration, max: usize) -> Arc<Self> {
        let filters = Arc::new(Self {
            entries: Mutex::new(HashMap::new()),
            timeout,
            max,
        });
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(sweep(Arc::downgrade(&filters), timeout));
        }
        filters
    }

    /// Drops filters idle for longer than the timeout.
    fn expire(&self) {
        let timeout = self.timeout;
        // A filter being polled right now is not idle: skip it rather than wait for its lock.
        self.entries
            .lock()
            .retain(|_, e| e.try_lock().is_none_or(|e| e.last_poll.elapsed() < timeout));
    }

    fn install(&self, kind: Kind) -> RpcResult<U256> {
        let id = U256::from_be_bytes(rand_id());
        let mut entries = self.entries.lock();
        if entries.len() >= self.max {
            return Err(RpcError::LimitExceeded(format!(
                "too many filters installed ({}): uninstall unused ones with eth_uninstallFilter, or let idle ones expire after {} s",
                self.max,
                self.timeout.as_secs()
            )));
        }
        let entry = Entry {
            kind,
            last_poll: Instant::now(),
        };
        entries.insert(id, Arc::new(Mutex::new(entry)));
        Ok(id)
    }

    /// A log filter starting at block `next`.
    pub(super) fn install_logs(
        &self,
        filter: Filter,
        next: u64,
        reorgs: broadcast::Receiver<Arc<Reorg>>,
    ) -> RpcResult<U256> {
        self.install(Kind::Logs {
            filter: Box::new(filter),
            next,
            reorgs,
        })
    }

    /// A new-block filter starting at block `next`.
    pub(super) fn install_blocks(
        &self,
        next: u64,
        reorgs: broadcast::Receiver<Arc<Reorg>>,
    ) -> RpcResult<U256> {
        self.install(Kind::Blocks { next, reorgs })
    }

    /// A pending-transaction filter fed by the pool.
    pub(super) fn install_pending(&self, rx: broadcast::Receiver<B256>) -> RpcResult<U256> {
        self.install(Kind::Pending(rx))
    }

    /// Removes a filter; `false` if it did not exist.
    pub(super) fn uninstall(&self, id: U256) -> bool {
        self.entries.lock().remove(&id).is_some()
    }

    /// The filter `id`, if installed and not expired; the registry lock is released on return.
    fn get(&self, id: U256) -> RpcResult<Shared> {
        let entry = self.entries.lock().get(&id).cloned();
        entry
            .filter(|e| e.lock().last_poll.elapsed() < self.timeout)
            .ok_or(RpcError::FilterNotFound)
    }

    /// The filter object of a log filter.
    pub(super) fn log_filter(&self, id: U256) -> RpcResult<Filter> {
        let entry = self.get(id)?;
        let mut entry = entry.lock();
        entry.last_poll = Instant::now();
        match &entry.kind {
            Kind::Logs { filter, .. } => Ok((**filter).clone()),
            _ => Err(RpcError::FilterNotFound),
        }
    }

    /// What happened since the last poll. A log filter with more matching logs than one answer
    /// may carry returns them a page at a time, oldest first.
    pub(super) fn changes(
        &self,
        chain: &Chain,
        logs: &LogSearch,
        id: U256,
    ) -> RpcResult<FilterChanges> {
        let head = chain.head().header.number;
        let entry = self.get(id)?;
        let mut entry = entry.lock();
        entry.last_poll = Instant::now();
        match &mut entry.kind {
            Kind::Blocks { next, reorgs } => {
                taken_back(reorgs, next, 0);
                let mut hashes = Vec::new();
                while *next <= head {
                    if let Some(h) = chain.storage().header(*next)? {
                        hashes.push(h.hash_slow());
                    }
                    *next += 1;
                }
                Ok(FilterChanges::Hashes(hashes))
            }
            Kind::Pending(rx) => {
                let mut hashes = Vec::new();
                loop {
                    match rx.try_recv() {
                        Ok(h) => hashes.push(h),
                        Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                        Err(_) => break,
                    }
                }
                Ok(FilterChanges::Hashes(hashes))
            }
            Kind::Logs {
                filter,
                next,
                reorgs,
            } => {
                // The logs already reported of blocks taken back, again with `removed: true`
                // (within the filter's numeric bounds; a tag bound is the moving head).
                let from = filter.get_from_block().unwrap_or(0);
                let to = filter.get_to_block().unwrap_or(u64::MAX);
                let mut out = Vec::new();
                for (block, receipts) in taken_back(reorgs, next, from) {
                    let n = block.header.number;
                    if n >= from && n <= to {
                        collect_block_logs(
                            filter,
                            &block,
                            receipts.iter().map(|r| r.logs()),
                            &mut out,
                        );
                    }
                }
                out.iter_mut().for_each(|l| l.removed = true);
                let (_, to) = logs.resolve_range(filter)?;
                let to = to.min(head);
                if *next > to {
                    return Ok(FilterChanges::Logs(out));
                }
                let page = logs.logs_page(filter, *next, to)?;
                *next = page.next;
                out.extend(page.logs);
                Ok(FilterChanges::Logs(out))
            }
        }
    }
}

/// Expires idle filters every quarter of the timeout until the registry is dropped.
async fn sweep(filters: Weak<Filters>, timeout: Duration) {
    let mut tick = tokio::time::interval((timeout / 4).max(Duration::from_secs(1)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match filters.upgrade() {
            Some(filters) => filters.expire(),
            None => return,
        }
    }
}

/// 16 random bytes from the OS-seeded std hasher (ids need uniqueness, not secrecy).
fn rand_id() -> [u8; 32] {
    use std::hash::{BuildHasher, Hasher};
    let mut out = [0u8; 32];
    for chunk in out[16..].chunks_mut(8) {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(Instant::now().elapsed().as_nanos());
        chunk.copy_from_slice(&h.finish().to_be_bytes());
    }
    out
}

//! Polling filters (eth_newFilter & co.) for HTTP clients; idle filters expire.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use alloy_primitives::{B256, U256};
use alloy_rpc_types_eth::{Filter, FilterChanges};
use parking_lot::Mutex;
use tokio::sync::broadcast;

use super::error::{RpcError, RpcResult};
use crate::{chain::Chain, logs::LogSearch};

enum Kind {
    Logs { filter: Box<Filter>, next: u64 },
    Blocks { next: u64 },
    Pending(broadcast::Receiver<B256>),
}

struct Entry {
    kind: Kind,
    last_poll: Instant,
}

/// Installed filters by id.
pub(super) struct Filters {
    entries: Mutex<HashMap<U256, Entry>>,
    timeout: Duration,
}

impl Filters {
    /// An empty registry whose filters expire after `timeout` without a poll.
    pub(super) fn new(timeout: Duration) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            timeout,
        }
    }

    fn install(&self, kind: Kind) -> U256 {
        let id = U256::from_be_bytes(rand_id());
        let mut entries = self.entries.lock();
        let timeout = self.timeout;
        entries.retain(|_, e| e.last_poll.elapsed() < timeout);
        entries.insert(
            id,
            Entry {
                kind,
                last_poll: Instant::now(),
            },
        );
        id
    }

    /// A log filter starting at block `next`.
    pub(super) fn install_logs(&self, filter: Filter, next: u64) -> U256 {
        self.install(Kind::Logs {
            filter: Box::new(filter),
            next,
        })
    }

    /// A new-block filter starting at block `next`.
    pub(super) fn install_blocks(&self, next: u64) -> U256 {
        self.install(Kind::Blocks { next })
    }

    /// A pending-transaction filter fed by the pool.
    pub(super) fn install_pending(&self, rx: broadcast::Receiver<B256>) -> U256 {
        self.install(Kind::Pending(rx))
    }

    /// Removes a filter; `false` if it did not exist.
    pub(super) fn uninstall(&self, id: U256) -> bool {
        self.entries.lock().remove(&id).is_some()
    }

    /// The filter object of a log filter.
    pub(super) fn log_filter(&self, id: U256) -> RpcResult<Filter> {
        let mut entries = self.entries.lock();
        match entries.get_mut(&id) {
            Some(Entry {
                kind: Kind::Logs { filter, .. },
                last_poll,
            }) => {
                *last_poll = Instant::now();
                Ok((**filter).clone())
            }
            _ => Err(RpcError::FilterNotFound),
        }
    }

    /// What happened since the last poll.
    pub(super) fn changes(
        &self,
        chain: &Chain,
        logs: &LogSearch,
        id: U256,
    ) -> RpcResult<FilterChanges> {
        let head = chain.head().header.number;
        let mut entries = self.entries.lock();
        let timeout = self.timeout;
        entries.retain(|_, e| e.last_poll.elapsed() < timeout);
        let entry = entries.get_mut(&id).ok_or(RpcError::FilterNotFound)?;
        entry.last_poll = Instant::now();
        match &mut entry.kind {
            Kind::Blocks { next } => {
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
            Kind::Logs { filter, next } => {
                let (_, to) = logs.resolve_range(filter)?;
                let to = to.min(head);
                if *next > to {
                    return Ok(FilterChanges::Logs(vec![]));
                }
                let found = logs.logs_in_range(filter, *next, to)?;
                *next = to + 1;
                Ok(FilterChanges::Logs(found))
            }
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

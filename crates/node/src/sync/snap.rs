//! Serving state snapshots to joining followers (the joining side is `p2p::snap`).
//!
//! A node offers the state of a recent block H: the last multiple of
//! [`SNAPSHOT_INTERVAL`] at or below its head, so that peers in step offer the same block and a
//! follower can fetch chunks from all of them. Indexing H reads every account key once; the
//! index (and the read snapshot it pins) is kept while followers use it, even once its block
//! left the proof window, and dropped after [`SNAPSHOT_INDEX_IDLE`] without a request.

use std::{sync::Arc, time::Instant};

use alloy_primitives::{Bytes, B256};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::chain::Chain;
use crate::constants::{
    SNAPSHOT_HEADERS, SNAPSHOT_INDEX_IDLE, SNAPSHOT_INTERVAL, SNAPSHOT_PAGE_BYTES,
};
use l2node_storage::SnapIndex;

/// What a node offers: the block, and the top of its account trie (which fixes every chunk's
/// subtrie, see `l2node_trie::snap`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapManifest {
    /// The snapshot's block.
    pub number: u64,
    /// Its hash.
    pub hash: B256,
    /// `(nibble path, node RLP)` of the root and the branches one nibble below it.
    pub top: Vec<(Bytes, Bytes)>,
    /// The Karma tiers record in force at the block: (the block that set it, its JSON).
    pub tiers: Option<(u64, Bytes)>,
}

/// The index a node serves, shared by the requests for its chunks.
#[derive(Default)]
pub struct SnapServer {
    /// The index, when it was built, when it was last used.
    index: Mutex<Option<Served>>,
    /// Held while an index is built (seconds on a large state), so that two requests do not
    /// build one each; the index itself is only locked to read or swap it.
    building: Mutex<()>,
}

struct Served {
    index: Arc<SnapIndex>,
    used: Instant,
}

impl std::fmt::Debug for SnapServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapServer").finish_non_exhaustive()
    }
}

impl SnapServer {
    /// The snapshot this node offers now, indexing it if needed (blocking: seconds on a large
    /// state); `None` when it has none to offer: a chain younger than one interval, a block
    /// whose trie it cannot read any more, or one whose 256 earlier headers it does not hold
    /// (it joined from a snapshot itself not long ago).
    pub fn manifest(&self, chain: &Chain) -> Option<SnapManifest> {
        let _building = self.building.lock();
        let index = match self.current() {
            Some(index) => index,
            None => {
                let head = chain.head().header.number;
                let number = head - head % SNAPSHOT_INTERVAL;
                // The blocks a joining follower takes the headers of (they are served whole).
                let oldest_needed = number.saturating_sub(SNAPSHOT_HEADERS - 1).max(1);
                let first = chain.storage().first_block().ok()?;
                if number == 0 || oldest_needed < first {
                    return None;
                }
                let index = match chain.storage().snapshot_index(number) {
                    Ok(Ok(index)) => Arc::new(index),
                    Ok(Err(first)) => {
                        tracing::debug!(target: "l2node::p2p", number, first, "no snapshot to offer: the block's trie is not readable");
                        return None;
                    }
                    Err(e) => {
                        tracing::warn!(target: "l2node::p2p", number, error = %e, "cannot index a snapshot");
                        return None;
                    }
                };
                *self.index.lock() = Some(Served {
                    index: index.clone(),
                    used: Instant::now(),
                });
                index
            }
        };
        Some(SnapManifest {
            number: index.number,
            hash: index.hash,
            top: index
                .top
                .iter()
                .map(|(p, n)| (p.clone().into(), n.clone().into()))
                .collect(),
            tiers: index.tiers.clone().map(|(b, t)| (b, t.into())),
        })
    }

    /// The index in use, if it is still offered (used lately); marked used.
    fn current(&self) -> Option<Arc<SnapIndex>> {
        let mut current = self.index.lock();
        let served = current
            .as_mut()
            .filter(|s| s.used.elapsed() < SNAPSHOT_INDEX_IDLE)?;
        served.used = Instant::now();
        Some(served.index.clone())
    }

    /// A page of the chunk at nibble `path` of the snapshot of block `number`, from `from`, if
    /// that is the snapshot this node serves (blocking).
    pub fn chunk(
        &self,
        number: u64,
        path: &[u8],
        from: Option<l2node_storage::PageCursor>,
    ) -> Option<Bytes> {
        let index = self.current().filter(|i| i.number == number)?;
        index
            .chunk(path, from, SNAPSHOT_PAGE_BYTES)
            .inspect_err(|e| tracing::warn!(target: "l2node::p2p", number, error = %e, "cannot read a snapshot chunk"))
            .ok()
            .flatten()
    }

    /// Drops an index no request used for [`SNAPSHOT_INDEX_IDLE`] (it pins a read snapshot),
    /// freeing it on the blocking pool (called from the swarm task).
    pub fn expire(&self) {
        let mut current = self.index.lock();
        if current
            .as_ref()
            .is_some_and(|s| s.used.elapsed() >= SNAPSHOT_INDEX_IDLE)
        {
            let idle = current.take();
            tokio::task::spawn_blocking(move || drop(idle));
        }
    }
}

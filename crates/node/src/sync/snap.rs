//! Serving state snapshots to joining followers (the joining side is `p2p::snap`).
//!
//! A node offers the state of a recent block H: the last multiple of
//! [`SNAPSHOT_INTERVAL`] at or below its head, so that peers in step offer the same block and a
//! follower can fetch chunks from all of them. Indexing H reads every account key once; the
//! index (and the read snapshot it pins) is kept while followers use it, and dropped after
//! [`SNAPSHOT_INDEX_IDLE`] without a request.

use std::{sync::Arc, time::Instant};

use alloy_primitives::{Bytes, B256};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::chain::Chain;
use crate::constants::{SNAPSHOT_INDEX_IDLE, SNAPSHOT_INTERVAL};
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
    index: Mutex<Option<(Arc<SnapIndex>, Instant)>>,
}

impl std::fmt::Debug for SnapServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapServer").finish_non_exhaustive()
    }
}

impl SnapServer {
    /// The snapshot this node offers now, indexing it if needed (blocking: seconds on a large
    /// state); `None` when it has none to offer (a chain younger than one interval, or a
    /// block whose trie it cannot read any more).
    pub fn manifest(&self, chain: &Chain) -> Option<SnapManifest> {
        let mut current = self.index.lock();
        let head = chain.head().header.number;
        // The index in use stays offered while followers fetch it and its trie is readable.
        let keep = current.as_ref().is_some_and(|(index, used)| {
            used.elapsed() < SNAPSHOT_INDEX_IDLE
                && chain
                    .storage()
                    .first_proof_block()
                    .is_ok_and(|first| index.number >= first)
        });
        if !keep {
            *current = None;
            let number = head - head % SNAPSHOT_INTERVAL;
            if number == 0 {
                return None;
            }
            match chain.storage().snapshot_index(number) {
                Ok(Ok(index)) => *current = Some((Arc::new(index), Instant::now())),
                Ok(Err(first)) => {
                    tracing::debug!(target: "l2node::p2p", number, first, "no snapshot to offer: the block's trie is not readable");
                    return None;
                }
                Err(e) => {
                    tracing::warn!(target: "l2node::p2p", number, error = %e, "cannot index a snapshot");
                    return None;
                }
            }
        }
        let (index, used) = current.as_mut().expect("set above");
        *used = Instant::now();
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

    /// The chunk at nibble `path` of the snapshot of block `number`, if that is the one this
    /// node serves (blocking).
    pub fn chunk(&self, number: u64, path: &[u8]) -> Option<Bytes> {
        let index = {
            let mut current = self.index.lock();
            let (index, used) = current.as_mut().filter(|(i, _)| i.number == number)?;
            *used = Instant::now();
            index.clone()
        };
        index
            .chunk(path)
            .inspect_err(|e| tracing::warn!(target: "l2node::p2p", number, error = %e, "cannot read a snapshot chunk"))
            .ok()
    }

    /// Drops an index no request used for [`SNAPSHOT_INDEX_IDLE`] (it pins a read snapshot).
    pub fn expire(&self) {
        let mut current = self.index.lock();
        if current
            .as_ref()
            .is_some_and(|(_, used)| used.elapsed() >= SNAPSHOT_INDEX_IDLE)
        {
            *current = None;
        }
    }
}

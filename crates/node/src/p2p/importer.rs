//! The work that blocks, kept off the swarm task: block imports (gossiped blocks and synced
//! ranges) on the importer thread, and pool validation of gossiped transactions and block
//! serving on the blocking pool. Each result comes back to the swarm loop as a [`Done`].

use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::sync::Arc;

use alloy_primitives::Bytes;
use libp2p::{gossipsub, request_response::ResponseChannel, PeerId};
use tokio::sync::mpsc;

use crate::chain::Chain;
use crate::constants::SYNC_IDLE_BEFORE_DURABLE;
use crate::exclusions::Stage;
use crate::pool::Pool;
use crate::sync::{self, ImportRefusal, Imported, SyncDurability, SyncResponse};

/// Work for the importer thread; blocks are imported one at a time, in arrival order.
pub(super) enum ImportJob {
    /// A synced range from `peer`.
    Range {
        /// Who sent it.
        peer: PeerId,
        /// Its blocks in order, prepared from the moment they arrived.
        blocks: sync::PreparedRange,
    },
    /// A gossiped block; gossipsub waits for its verdict before relaying it.
    Gossip {
        /// Who relayed it to us.
        peer: PeerId,
        /// The gossip message.
        id: gossipsub::MessageId,
        /// The RLP-encoded block.
        raw: Bytes,
    },
}

/// Results of work done off the swarm task.
pub(super) enum Done {
    /// A range went through the importer.
    Range {
        /// Who sent it.
        peer: PeerId,
        /// Why it stopped short, if it did.
        refusal: Option<ImportRefusal>,
    },
    /// A gossiped block went through the importer.
    Gossip {
        /// Who relayed it to us.
        peer: PeerId,
        /// The gossip message.
        id: gossipsub::MessageId,
        /// What importing it did.
        result: Result<Imported, ImportRefusal>,
    },
    /// A gossiped transaction went through the pool.
    Tx {
        /// Who relayed it to us.
        peer: PeerId,
        /// The gossip message.
        id: gossipsub::MessageId,
        /// Whether the pool took it.
        accepted: bool,
    },
    /// Blocks a peer asked for were read.
    Served {
        /// Where the answer goes.
        channel: ResponseChannel<SyncResponse>,
        /// The answer.
        response: SyncResponse,
    },
}

/// Starts the importer thread; it ends once the returned job sender is dropped.
pub(super) fn spawn_importer(
    chain: Arc<Chain>,
    pool: Arc<Pool>,
    done: mpsc::UnboundedSender<Done>,
) -> std::io::Result<(
    std::sync::mpsc::Sender<ImportJob>,
    std::thread::JoinHandle<()>,
)> {
    let (import_tx, import_rx) = std::sync::mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("l2node-import".into())
        .spawn(move || run_importer(&chain, &pool, import_rx, done))?;
    Ok((import_tx, thread))
}

fn run_importer(
    chain: &Arc<Chain>,
    pool: &Pool,
    jobs: std::sync::mpsc::Receiver<ImportJob>,
    done: mpsc::UnboundedSender<Done>,
) {
    let mut durability = SyncDurability::default();
    loop {
        let job = match jobs.try_recv() {
            Ok(job) => job,
            Err(TryRecvError::Disconnected) => break,
            // No work for a moment: caught up, or the peer is slower than the import.
            Err(TryRecvError::Empty) => match jobs.recv_timeout(SYNC_IDLE_BEFORE_DURABLE) {
                Ok(job) => job,
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    durability.idle(chain);
                    match jobs.recv() {
                        Ok(job) => job,
                        Err(_) => break,
                    }
                }
            },
        };
        let result = match job {
            ImportJob::Range { peer, blocks } => Done::Range {
                peer,
                refusal: durability.import_range(chain, blocks).err(),
            },
            ImportJob::Gossip { peer, id, raw } => {
                let result = sync::import_gossiped(chain, pool, &raw);
                if matches!(result, Ok(Imported::New(_))) {
                    durability.waited();
                }
                Done::Gossip { peer, id, result }
            }
        };
        if done.send(result).is_err() {
            break;
        }
    }
    durability.idle(chain);
}

/// Validates a gossiped transaction against the pool and our head state, on the blocking
/// pool; the verdict comes back as [`Done::Tx`].
pub(super) fn validate_tx(
    chain: Arc<Chain>,
    pool: Arc<Pool>,
    done: mpsc::UnboundedSender<Done>,
    peer: PeerId,
    id: gossipsub::MessageId,
    raw: Bytes,
) {
    tokio::task::spawn_blocking(move || {
        let accepted = chain
            .storage()
            .state_at(None)
            .map_err(|e| e.to_string())
            .and_then(|state| {
                pool.add_raw_recorded(&raw, &state, &chain.next_block(), Stage::P2p)
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = &accepted {
            tracing::debug!(target: "l2node::p2p", %peer, error = %e, "gossiped transaction not pooled");
        }
        let _ = done.send(Done::Tx {
            peer,
            id,
            accepted: accepted.is_ok(),
        });
    });
}

/// Answers a peer's [`sync::SyncRequest::PooledTransactions`] on the blocking pool (nothing
/// unless `send`: a peer's first ask on its connection), through [`Done::Served`].
pub(super) fn serve_pool(
    pool: Arc<Pool>,
    done: mpsc::UnboundedSender<Done>,
    send: bool,
    channel: ResponseChannel<SyncResponse>,
) {
    tokio::task::spawn_blocking(move || {
        let txs = if send {
            sync::pooled_transactions(&pool)
        } else {
            Vec::new()
        };
        let _ = done.send(Done::Served {
            channel,
            response: SyncResponse::PooledTransactions(txs),
        });
    });
}

/// Answers a peer's request with `answer`, run on the blocking pool, through
/// [`Done::Served`].
pub(super) fn serve(
    done: mpsc::UnboundedSender<Done>,
    channel: ResponseChannel<SyncResponse>,
    answer: impl FnOnce() -> SyncResponse + Send + 'static,
) {
    tokio::task::spawn_blocking(move || {
        let _ = done.send(Done::Served {
            channel,
            response: answer(),
        });
    });
}

/// Puts a peer's pooled transactions ([`SyncResponse::PooledTransactions`]) through this
/// node's pool, on the blocking pool; those it holds or refuses are skipped (and not recorded
/// as refused: they were the peer's, not sent here).
pub(super) fn pool_txs(chain: Arc<Chain>, pool: Arc<Pool>, peer: PeerId, txs: Vec<Bytes>) {
    if txs.is_empty() {
        return;
    }
    tokio::task::spawn_blocking(move || {
        let Ok(state) = chain.storage().state_at(None) else {
            return;
        };
        let next = chain.next_block();
        let taken = txs
            .iter()
            .filter(|raw| pool.add_raw(raw, &state, &next).is_ok())
            .count();
        tracing::debug!(target: "l2node::p2p", %peer, sent = txs.len(), taken, "a peer's pooled transactions");
    });
}

/// Reads blocks `from..from + count` for `peer`, on the blocking pool; the answer comes back
/// as [`Done::Served`] (with no blocks when storage fails).
pub(super) fn serve_blocks(
    chain: Arc<Chain>,
    done: mpsc::UnboundedSender<Done>,
    peer: PeerId,
    from: u64,
    count: u64,
    channel: ResponseChannel<SyncResponse>,
) {
    tokio::task::spawn_blocking(move || {
        let blocks = sync::serve_blocks(&chain, from, count).unwrap_or_else(|e| {
            tracing::warn!(target: "l2node::p2p", %peer, error = %e, "cannot serve blocks");
            Vec::new()
        });
        let _ = done.send(Done::Served {
            channel,
            response: SyncResponse::Blocks(blocks),
        });
    });
}

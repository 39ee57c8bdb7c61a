//! Follower sync: the request-response protocol peers serve blocks with, the range planner a
//! follower that is behind asks with, and the importer that feeds every block (from a range or
//! from gossip) through [`Chain::import`], the one execute-verify-commit path.

use alloy_consensus::{Block, TxEnvelope};
use alloy_primitives::{Address, Bytes, B256};
use alloy_rlp::{Decodable, Encodable};
use serde::{Deserialize, Serialize};

use crate::chain::{Chain, ChainError, Competing, Prepared};
use crate::constants::{
    SYNC_DURABLE_INTERVAL, SYNC_MAX_BLOCKS_PER_RESPONSE, SYNC_MAX_HEADERS_PER_RESPONSE,
    SYNC_MAX_RESPONSE_BYTES, SYNC_RECOVERY_AHEAD, SYNC_RECOVERY_NICE,
};
use crate::pool::Pool;
use alloy_consensus::transaction::SignerRecoverable;
use l2node_storage::StorageError;
use std::sync::mpsc::Receiver;

pub mod snap;

/// The protocol name of block sync.
pub const PROTOCOL: &str = "/l2node/sync/1";

/// A question to a peer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SyncRequest {
    /// The peer's genesis and head.
    Status,
    /// Canonical blocks `from..from + count` (the answer may hold fewer: it stops at the
    /// peer's head and at the response size limits).
    Blocks {
        /// First block number.
        from: u64,
        /// How many.
        count: u64,
    },
    /// The transactions of the peer's pool that can be mined now. A node asks each peer that
    /// joins the transaction topic: gossip does not send a transaction twice, so a node that
    /// was away (a sequencer restarted, a group member about to lead) would never get those
    /// published while it was gone, and one missing nonce would hold back its sender's later
    /// transactions (devp2p's peers likewise exchange their pools on connection).
    PooledTransactions,
    /// The state snapshot the peer offers (see [`snap`]).
    SnapshotManifest,
    /// A page of one chunk of the snapshot of block `number`: the accounts under nibble
    /// `path`, from `from` on.
    SnapshotChunk {
        /// The snapshot's block.
        number: u64,
        /// One nibble per byte (at most two).
        path: Vec<u8>,
        /// Where the previous page said the next starts (a hashed address and a slot of that
        /// account); `None` for the first page.
        from: Option<l2node_storage::PageCursor>,
    },
    /// Canonical headers `from..from + count`, without their blocks' transactions (a follower
    /// joining from a snapshot needs the headers before it only). Like [`SyncRequest::Blocks`],
    /// the answer may hold fewer.
    Headers {
        /// First block number.
        from: u64,
        /// How many.
        count: u64,
    },
}

/// A peer's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SyncResponse {
    /// Answer to [`SyncRequest::Status`].
    Status(PeerStatus),
    /// Answer to [`SyncRequest::Blocks`]: RLP-encoded blocks in order.
    Blocks(Vec<Bytes>),
    /// Answer to [`SyncRequest::PooledTransactions`]: network encodings, each sender's in
    /// nonce order.
    PooledTransactions(Vec<Bytes>),
    /// Answer to [`SyncRequest::SnapshotManifest`]: `None` when the peer offers none.
    SnapshotManifest(Option<snap::SnapManifest>),
    /// Answer to [`SyncRequest::SnapshotChunk`]: the page's RLP, `None` when the peer no
    /// longer serves that block.
    SnapshotChunk(Option<Bytes>),
    /// Answer to [`SyncRequest::Headers`]: RLP-encoded headers in order.
    Headers(Vec<Bytes>),
}

/// A node's chain, as it tells its peers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerStatus {
    /// Genesis hash: peers of another chain are dropped.
    pub genesis: B256,
    /// Head number.
    pub head: u64,
    /// Head hash.
    pub head_hash: B256,
}

/// This node's status.
pub fn local_status(chain: &Chain) -> PeerStatus {
    let head = chain.head();
    PeerStatus {
        genesis: chain.genesis_hash(),
        head: head.header.number,
        head_hash: head.hash,
    }
}

/// Serves a range request from storage (blocking: run it off the async runtime).
pub fn serve_blocks(chain: &Chain, from: u64, count: u64) -> Result<Vec<Bytes>, StorageError> {
    let count = count.min(SYNC_MAX_BLOCKS_PER_RESPONSE);
    let mut out = Vec::new();
    let mut size = 0;
    for number in from..from.saturating_add(count) {
        let Some(b) = chain.storage().block(number)? else {
            break;
        };
        let block = b.into_block();
        let mut raw = Vec::with_capacity(block.length());
        block.encode(&mut raw);
        size += raw.len();
        // Always at least one block, so any block can be synced.
        if size > SYNC_MAX_RESPONSE_BYTES && !out.is_empty() {
            break;
        }
        out.push(raw.into());
    }
    Ok(out)
}

/// Canonical headers `from..from + count` (at most [`SYNC_MAX_HEADERS_PER_RESPONSE`] and
/// [`SYNC_MAX_RESPONSE_BYTES`]), RLP-encoded, up to the head.
pub fn serve_headers(chain: &Chain, from: u64, count: u64) -> Result<Vec<Bytes>, StorageError> {
    let mut out = Vec::new();
    let mut size = 0;
    for number in from..from.saturating_add(count.min(SYNC_MAX_HEADERS_PER_RESPONSE)) {
        let Some(header) = chain.storage().header(number)? else {
            break;
        };
        let raw = alloy_rlp::encode(&header);
        size += raw.len();
        if size > SYNC_MAX_RESPONSE_BYTES {
            break;
        }
        out.push(raw.into());
    }
    Ok(out)
}

/// The pool's executable transactions for a peer, each sender's in nonce order, up to
/// [`SYNC_MAX_RESPONSE_BYTES`] (a sender cut short keeps its lowest nonces: what is sent can be
/// mined).
pub fn pooled_transactions(pool: &Pool) -> Vec<Bytes> {
    let mut out = Vec::new();
    let mut size = 0;
    for txs in pool.content().pending.into_values() {
        for tx in txs.into_values() {
            size += tx.raw.len();
            if size > SYNC_MAX_RESPONSE_BYTES {
                return out;
            }
            out.push(tx.raw.clone());
        }
    }
    out
}

/// Why a block from a peer was not imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportRefusal {
    /// The bytes are not a block.
    #[error("block does not decode: {0}")]
    Decode(#[from] alloy_rlp::Error),
    /// The block does not extend our head (a gap, a stale or a competing block): not the
    /// peer's fault.
    #[error("block {number} does not extend our head {head}")]
    NotNext {
        /// The block's number.
        number: u64,
        /// Our head.
        head: u64,
    },
    /// The block breaks a rule: a bad seal, header or root. Its sender is dropped.
    #[error(transparent)]
    Invalid(ChainError),
    /// This node failed (its storage, or taking back its own blocks): not the peer's fault.
    #[error(transparent)]
    Local(ChainError),
}

impl ImportRefusal {
    /// Whether the peer that sent the block is at fault.
    pub fn is_peer_fault(&self) -> bool {
        matches!(self, Self::Decode(_) | Self::Invalid(_))
    }
}

/// What importing one block did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Imported {
    /// It is now the head.
    New(u64),
    /// We already had it.
    Known(u64),
    /// A competing block (it does not extend the head), kept in case its chain becomes the
    /// heavier one.
    Competing(u64),
}

/// Decodes a block and imports it through [`Chain::import`]; a block we already hold is
/// [`Imported::Known`]. Blocking.
pub fn import_raw(chain: &Chain, raw: &[u8]) -> Result<Imported, ImportRefusal> {
    import_raw_with(chain, raw, true)
}

fn import_raw_with(chain: &Chain, raw: &[u8], durable: bool) -> Result<Imported, ImportRefusal> {
    import_decoded(chain, raw, decode_block(raw)?, Prepared::default(), durable)
}

/// [`import_raw`] of a gossiped block, whose transactions a live follower has usually pooled
/// already (from the transactions topic): their senders come from `pool`, recovered when each
/// was pooled (a transaction's hash covers its signature, so the same hash is the same signed
/// transaction), and only the others are recovered here, as geth's and reth's sender caches do.
/// A block none of whose transactions are pooled is recovered as usual (on all cores).
pub fn import_gossiped(chain: &Chain, pool: &Pool, raw: &[u8]) -> Result<Imported, ImportRefusal> {
    let block = decode_block(raw)?;
    let senders = pooled_senders(pool, &block.body.transactions);
    import_decoded(chain, raw, block, Prepared::with_senders(senders), true)
}

/// The senders of `txs`, from the pool where it holds them; `None` when it holds none of them
/// or one of the others has a bad signature (the import then recovers them and reports it).
fn pooled_senders(pool: &Pool, txs: &[TxEnvelope]) -> Option<Vec<Address>> {
    let pooled: Vec<Option<Address>> = txs
        .iter()
        .map(|tx| pool.get(tx.tx_hash()).map(|p| p.sender()))
        .collect();
    if !pooled.iter().any(Option::is_some) {
        return None;
    }
    txs.iter()
        .zip(pooled)
        .map(|(tx, sender)| sender.or_else(|| tx.recover_signer().ok()))
        .collect()
}

/// A block's RLP, with nothing after it.
fn decode_block(raw: &[u8]) -> Result<Block<TxEnvelope>, ImportRefusal> {
    let mut rest = raw;
    let block = Block::<TxEnvelope>::decode(&mut rest)?;
    if !rest.is_empty() {
        return Err(alloy_rlp::Error::UnexpectedLength.into());
    }
    Ok(block)
}

/// [`import_raw`] of a decoded block (`raw` is kept if it turns out bad), with what is
/// already computed of it.
fn import_decoded(
    chain: &Chain,
    raw: &[u8],
    block: Block<TxEnvelope>,
    prepared: Prepared,
    durable: bool,
) -> Result<Imported, ImportRefusal> {
    let number = block.header.number;
    let head = chain.head();
    if number <= head.header.number {
        let hash = block.header.hash_slow();
        match chain.storage().block_number(&hash) {
            Ok(Some(n)) if n == number => return Ok(Imported::Known(number)),
            Ok(_) => {}
            Err(e) => return Err(ImportRefusal::Local(e.into())),
        }
    }
    if number != head.header.number + 1 || block.header.parent_hash != head.hash {
        // A competing block: kept if its parent is known, followed if its chain is heavier.
        return match chain.import_competing(block) {
            Ok(Competing::Kept) => Ok(Imported::Competing(number)),
            Ok(Competing::Reorganised(n)) => Ok(Imported::New(n)),
            Err(ChainError::UnknownParent { .. }) => Err(ImportRefusal::NotNext {
                number,
                head: head.header.number,
            }),
            Err(e) if e.is_local() => Err(ImportRefusal::Local(e)),
            // `import_competing` keeps the bad block itself (it may be an ancestor).
            Err(e) => Err(ImportRefusal::Invalid(e)),
        };
    }
    match chain.import_prepared(block, prepared, durable) {
        Ok(_) => Ok(Imported::New(number)),
        Err(e) if e.is_local() => Err(ImportRefusal::Local(e)),
        Err(e) => {
            chain.record_bad_block(Bytes::copy_from_slice(raw));
            Err(ImportRefusal::Invalid(e))
        }
    }
}

/// A synced range whose blocks are decoded and prepared ([`Prepared`]: senders recovered,
/// transactions root computed) on a thread of their own from the moment it arrives, which keeps at
/// most [`SYNC_RECOVERY_AHEAD`] prepared blocks waiting for the import: recovery is the largest
/// part of a block's work that does not depend on its parent's state, so it overlaps with the
/// import of the blocks before, those of the range before included. Preparing each range only once
/// the importer reached it left a core idle at the end of every range (the last blocks had been
/// recovered and the next range's were not started) and the import waiting for recovery at the
/// start of the next: in the snapshot bench's full sync (1M accounts, ranges of 26 blocks), the
/// import waited for recovery 8.9 s of its 60 s. The thread runs at a lower priority
/// ([`SYNC_RECOVERY_NICE`]): the executing thread, on which the whole range waits, keeps a core,
/// and recovery takes the rest.
pub struct PreparedRange {
    blocks: Vec<Bytes>,
    /// The prepared blocks in order; `None` for an empty range, or when no thread could be
    /// started (the import then prepares each block itself).
    ready: Option<Receiver<PreparedBlock>>,
}

/// A block of a synced range decoded and prepared, or why it could not be decoded.
type PreparedBlock = Result<(Block<TxEnvelope>, Prepared), ImportRefusal>;

impl PreparedRange {
    /// Starts preparing `blocks`, in order. A thread that is ahead stops when the range is
    /// dropped (imported, or refused halfway).
    pub fn start(blocks: Vec<Bytes>) -> Self {
        if blocks.is_empty() {
            return Self {
                blocks,
                ready: None,
            };
        }
        let (ready, next) = std::sync::mpsc::sync_channel(SYNC_RECOVERY_AHEAD);
        let to_prepare = blocks.clone();
        let spawned = std::thread::Builder::new()
            .name("l2node-prepare".into())
            .spawn(move || {
                crate::lower_thread_priority(SYNC_RECOVERY_NICE);
                for raw in &to_prepare {
                    if ready.send(prepare(raw)).is_err() {
                        return; // the import stopped at a refusal
                    }
                }
            });
        if let Err(e) = &spawned {
            tracing::warn!(target: "l2node::sync", error = %e, "could not start a thread to prepare a synced range; the importer prepares its blocks");
        }
        Self {
            blocks,
            ready: spawned.ok().map(|_| next),
        }
    }
}

/// A block's RLP decoded, with what its import can compute ahead.
fn prepare(raw: &Bytes) -> PreparedBlock {
    let block = decode_block(raw)?;
    let prepared = Prepared::of(&block);
    Ok((block, prepared))
}

/// Imports a range in order, stopping at the first refusal. No block waits for the disk
/// ([`Chain::import_with`]): the caller decides when to ([`SyncDurability`]).
pub fn import_range(chain: &Chain, range: PreparedRange) -> Result<(), ImportRefusal> {
    let mut ready = range.ready;
    for raw in &range.blocks {
        let prepared = match ready.as_ref().map(Receiver::recv) {
            Some(Ok(prepared)) => prepared,
            Some(Err(_)) => {
                // It sends every block unless it panicked: the import goes on without it.
                tracing::warn!(target: "l2node::sync", "the thread preparing a synced range stopped; the importer prepares its blocks");
                ready = None;
                prepare(raw)
            }
            None => prepare(raw),
        };
        let (block, prepared) = prepared?;
        import_decoded(chain, raw, block, prepared, false)?;
    }
    Ok(())
}

/// When a follower syncing in ranges waits for the disk. A range's blocks are committed
/// without waiting for it, and after a range the chain waits for everything committed so far
/// once [`SYNC_DURABLE_INTERVAL`] has passed since the last wait; when the importer has had
/// no work for a moment (caught up, or a peer slow to answer) it waits too. A crash thus
/// loses at most that interval of sync, which the node fetches again from its peers, as geth
/// and reth keep a syncing node's progress in memory between their periodic writes. Waiting
/// after every range instead cost the snapshot bench's full sync (1M accounts) 7-17% of its
/// time, the import thread idle while the disk caught up.
#[derive(Debug)]
pub struct SyncDurability {
    /// When the chain last waited for the disk.
    last: std::time::Instant,
    /// Blocks were committed since without waiting for it.
    pending: bool,
}

impl Default for SyncDurability {
    fn default() -> Self {
        Self {
            last: std::time::Instant::now(),
            pending: false,
        }
    }
}

impl SyncDurability {
    /// Imports a synced range ([`import_range`]), then waits for the disk if the interval has
    /// passed.
    pub fn import_range(
        &mut self,
        chain: &Chain,
        range: PreparedRange,
    ) -> Result<(), ImportRefusal> {
        let result = import_range(chain, range);
        self.pending = true;
        if self.last.elapsed() >= SYNC_DURABLE_INTERVAL {
            self.idle(chain);
        }
        result
    }

    /// A block was imported durably (a gossiped one): everything before it is on disk too.
    pub fn waited(&mut self) {
        self.last = std::time::Instant::now();
        self.pending = false;
    }

    /// Waits for the disk if a range did not since the last wait (the importer has nothing
    /// left to do, or the interval passed). A failure is logged, and the next range or idle
    /// moment tries again.
    pub fn idle(&mut self, chain: &Chain) {
        if !self.pending {
            return;
        }
        match chain.storage().persist() {
            Ok(()) => self.waited(),
            Err(e) => {
                tracing::warn!(target: "l2node::sync", error = %e, "could not wait for the disk after synced blocks; trying again after the next ones")
            }
        }
    }
}

/// The follower's range planner: which blocks to ask for next, given our head, what is
/// already asked for, and the best peer head. One request is in flight at a time (so ranges
/// arrive in order), and the next is asked for as soon as the previous one arrived, while it
/// is imported; at most [`RangePlanner::MAX_QUEUED`] received ranges wait for the importer, so
/// a fast peer cannot fill memory.
#[derive(Debug, Default)]
pub struct RangePlanner {
    /// The highest block asked for (or imported).
    requested_to: u64,
    /// A request is in flight.
    in_flight: bool,
    /// Ranges received and not yet imported.
    queued: usize,
}

impl RangePlanner {
    /// Most received ranges waiting for the importer.
    pub const MAX_QUEUED: usize = 2;

    /// The next range `(from, count)` to ask for, if one is needed now.
    pub fn next(&mut self, head: u64, best: u64) -> Option<(u64, u64)> {
        self.requested_to = self.requested_to.max(head);
        if best <= self.requested_to || self.in_flight || self.queued >= Self::MAX_QUEUED {
            return None;
        }
        let from = self.requested_to + 1;
        let count = (best - self.requested_to).min(SYNC_MAX_BLOCKS_PER_RESPONSE);
        self.requested_to += count;
        self.in_flight = true;
        Some((from, count))
    }

    /// The range asked for arrived with `received` of the `asked` blocks starting at `from`;
    /// it now waits for the importer.
    pub fn received(&mut self, from: u64, asked: u64, received: u64) {
        self.in_flight = false;
        self.queued += 1;
        if received < asked {
            // The peer had fewer: ask for the rest again.
            self.requested_to = from + received - 1;
        }
    }

    /// The request failed (timeout, disconnect): ask again from `head` on.
    pub fn failed(&mut self, head: u64) {
        self.in_flight = false;
        self.requested_to = head;
    }

    /// A received range went through the importer; after a refusal, ask again from `head`.
    pub fn imported(&mut self, head: u64, refused: bool) {
        self.queued = self.queued.saturating_sub(1);
        if refused {
            self.requested_to = head;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::PoolConfig;
    use crate::test_utils::{dev_spec, key, produce_block, signed_transfer};
    use alloy_consensus::transaction::Recovered;

    /// A chain of `spec` in a fresh database in `dir`.
    fn open_chain(
        spec: &std::sync::Arc<crate::chainspec::ChainSpec>,
        dir: &tempfile::TempDir,
    ) -> Chain {
        let storage = l2node_storage::Storage::open(&dir.path().join("chain.redb")).unwrap();
        Chain::open(storage, spec.clone()).unwrap()
    }

    #[test]
    fn a_range_imports_with_senders_recovered_ahead_and_stops_at_a_bad_block() {
        let spec = std::sync::Arc::new(dev_spec());
        let open = |dir: &tempfile::TempDir| open_chain(&spec, dir);
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let miner = open(&a);
        let mut nonce = 0;
        // Some blocks large enough to recover their senders on several threads.
        for count in [2, 70, 1, 0, 90, 3] {
            let txs = (0..count)
                .map(|i| {
                    nonce += 1;
                    signed_transfer(&spec, 0, nonce - 1, Address::repeat_byte(7), i)
                })
                .collect();
            produce_block(&miner, txs);
        }
        let block = |n: u64| {
            let stored = miner.storage().block(n).unwrap().unwrap();
            stored.into_block()
        };
        let raw = |block: Block<TxEnvelope>| Bytes::from(alloy_rlp::encode(block));

        let follower = open(&b);
        // The transactions root is computed ahead with the senders, and compared in order.
        let mut wrong_transactions = block(2);
        wrong_transactions.header.transactions_root = B256::ZERO;
        let blocks = vec![raw(block(1)), raw(wrong_transactions)];
        let refusal = import_range(&follower, PreparedRange::start(blocks));
        assert!(
            matches!(
                refusal,
                Err(ImportRefusal::Invalid(ChainError::Mismatch {
                    number: 2,
                    field: "transactions root",
                    ..
                }))
            ),
            "{refusal:?}"
        );
        assert_eq!(follower.head().header, block(1).header);

        let mut bad = block(4);
        bad.header.state_root = B256::ZERO;
        let range = vec![raw(block(2)), raw(block(3)), raw(bad), raw(block(5))];
        let refusal = import_range(&follower, PreparedRange::start(range)).unwrap_err();
        assert!(
            matches!(refusal, ImportRefusal::Invalid(ChainError::Mismatch { .. })),
            "{refusal}"
        );
        assert_eq!(follower.head().header, block(3).header);

        let rest: Vec<Bytes> = (4..=6).map(|n| raw(block(n))).collect();
        // Without a preparing thread, the import prepares each block itself.
        let unprepared = PreparedRange {
            blocks: rest,
            ready: None,
        };
        import_range(&follower, unprepared).unwrap();
        assert_eq!(follower.head().hash, miner.head().hash);
        for n in 1..=6 {
            assert_eq!(
                follower.storage().block(n).unwrap().unwrap().senders,
                miner.storage().block(n).unwrap().unwrap().senders,
                "block {n}"
            );
        }
    }

    #[test]
    fn synced_ranges_wait_for_the_disk_once_an_interval_and_when_the_importer_is_idle() {
        let spec = std::sync::Arc::new(dev_spec());
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (miner, follower) = (open_chain(&spec, &a), open_chain(&spec, &b));
        for nonce in 0..5 {
            let tx = signed_transfer(&spec, 0, nonce, Address::repeat_byte(7), 1);
            produce_block(&miner, vec![tx]);
        }
        let raw = |n: u64| serve_blocks(&miner, n, 1).unwrap().remove(0);
        let mut durability = SyncDurability::default();
        let overdue = |d: &mut SyncDurability| d.last -= SYNC_DURABLE_INTERVAL;

        durability
            .import_range(&follower, PreparedRange::start(vec![raw(1), raw(2)]))
            .unwrap();
        assert!(durability.pending, "within the interval nothing waits");
        overdue(&mut durability);
        durability
            .import_range(&follower, PreparedRange::start(vec![raw(3)]))
            .unwrap();
        assert!(!durability.pending, "past it the range is waited for");
        // A range of blocks already held commits nothing, and is still waited for after.
        durability
            .import_range(&follower, PreparedRange::start(vec![raw(3)]))
            .unwrap();
        assert!(durability.pending);

        // A range refused before its end: its first blocks are left to the next wait.
        let mut bad = Block::<TxEnvelope>::decode(&mut raw(5).as_ref()).unwrap();
        bad.header.state_root = B256::ZERO;
        let range = [raw(4), Bytes::from(alloy_rlp::encode(bad))];
        durability
            .import_range(&follower, PreparedRange::start(range.to_vec()))
            .unwrap_err();
        assert!(durability.pending);
        durability.idle(&follower);
        assert!(
            !durability.pending,
            "an idle importer waits for what is left"
        );
        assert_eq!(follower.head().header.number, 4);
    }

    #[test]
    fn a_gossiped_block_takes_the_senders_its_transactions_were_pooled_with() {
        let spec = std::sync::Arc::new(dev_spec());
        let open = |dir: &tempfile::TempDir| open_chain(&spec, dir);
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (miner, follower) = (open(&a), open(&b));
        let to = Address::repeat_byte(7);
        let txs: Vec<_> = (0..3)
            .map(|n| signed_transfer(&spec, 0, n, to, 1))
            .collect();
        let envelopes: Vec<TxEnvelope> = txs.iter().map(|tx| tx.inner().clone()).collect();
        let pool = |pooled: &[Recovered<TxEnvelope>]| {
            let pool = Pool::new(PoolConfig::default()).unwrap();
            let state = follower.storage().state_at(None).unwrap();
            for tx in pooled {
                pool.add(tx.clone(), &state, &follower.next_block())
                    .unwrap();
            }
            pool
        };
        let sender = key(0).address();

        // Nothing pooled: the import recovers them all, on all cores.
        assert_eq!(pooled_senders(&pool(&[]), &envelopes), None);
        // The pool's word for those it holds (here a sender it was told, to show whose word is
        // taken), recovery for the others.
        let told = Recovered::new_unchecked(envelopes[1].clone(), key(1).address());
        assert_eq!(
            pooled_senders(&pool(&[told]), &envelopes),
            Some(vec![sender, key(1).address(), sender])
        );

        produce_block(&miner, txs.clone());
        let stored = miner.storage().block(1).unwrap().unwrap();
        let raw = alloy_rlp::encode(stored.into_block());
        let imported = import_gossiped(&follower, &pool(&txs[..2]), &raw).unwrap();
        assert!(matches!(imported, Imported::New(1)), "{imported:?}");
        assert_eq!(follower.head().hash, miner.head().hash);
        assert_eq!(
            follower.storage().block(1).unwrap().unwrap().senders,
            vec![sender; 3]
        );
    }

    #[test]
    fn planner_asks_one_range_at_a_time_and_queues_at_most_two() {
        let mut p = RangePlanner::default();
        let max = SYNC_MAX_BLOCKS_PER_RESPONSE;
        let best = 10 + 4 * max;
        assert_eq!(p.next(10, 10), None, "caught up");
        assert_eq!(p.next(10, best), Some((11, max)));
        assert_eq!(p.next(10, best), None, "one request in flight");
        p.received(11, max, max);
        assert_eq!(
            p.next(10, best),
            Some((11 + max, max)),
            "asked while importing"
        );
        p.received(11 + max, max, max);
        assert_eq!(p.next(10, best), None, "two ranges wait for the importer");
        p.imported(10 + max, false);
        assert_eq!(p.next(10 + max, best), Some((11 + 2 * max, max)));
    }

    #[test]
    fn planner_asks_again_after_a_short_answer_a_failure_or_a_refusal() {
        let mut p = RangePlanner::default();
        assert_eq!(p.next(0, 100), Some((1, 100)));
        p.received(1, 100, 40);
        assert_eq!(p.next(0, 100), Some((41, 60)), "the rest of a short answer");
        p.failed(0);
        p.imported(40, false);
        assert_eq!(p.next(40, 100), Some((41, 60)));
        p.received(41, 60, 60);
        p.imported(45, true);
        assert_eq!(
            p.next(45, 100),
            Some((46, 55)),
            "from the head after a refusal"
        );
    }

    /// Every message of the protocol, through the CBOR encoding libp2p's codec uses.
    #[test]
    fn protocol_messages_round_trip_through_cbor() {
        fn round_trip<T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
            message: T,
        ) {
            let wire = cbor4ii::serde::to_vec(Vec::new(), &message).unwrap();
            assert_eq!(cbor4ii::serde::from_slice::<T>(&wire).unwrap(), message);
        }
        let hash = B256::repeat_byte(7);
        for request in [
            SyncRequest::Status,
            SyncRequest::Blocks {
                from: 1,
                count: u64::MAX,
            },
            SyncRequest::PooledTransactions,
            SyncRequest::SnapshotManifest,
            SyncRequest::SnapshotChunk {
                number: 768,
                path: vec![0xa, 0x3],
                from: None,
            },
            SyncRequest::SnapshotChunk {
                number: 768,
                path: vec![],
                from: Some((hash, alloy_primitives::U256::MAX)),
            },
            SyncRequest::Headers {
                from: 513,
                count: 256,
            },
        ] {
            round_trip(request);
        }
        let raw = Bytes::from_static(&[0xc0, 0x01]);
        for response in [
            SyncResponse::Status(PeerStatus {
                genesis: hash,
                head: 5,
                head_hash: B256::repeat_byte(8),
            }),
            SyncResponse::Blocks(vec![raw.clone(), Bytes::new()]),
            SyncResponse::PooledTransactions(vec![raw.clone()]),
            SyncResponse::SnapshotManifest(None),
            SyncResponse::SnapshotManifest(Some(snap::SnapManifest {
                number: 768,
                hash,
                top: vec![(Bytes::new(), raw.clone())],
                tiers: Some((3, raw.clone())),
            })),
            SyncResponse::SnapshotChunk(None),
            SyncResponse::SnapshotChunk(Some(raw.clone())),
            SyncResponse::Headers(vec![raw]),
        ] {
            round_trip(response);
        }
    }
}

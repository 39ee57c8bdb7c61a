//! Embedded storage on redb: blocks, receipts, indexes, current state, history and trie nodes.
//!
//! Every block commits in one write transaction (`Storage::commit_block`), so a crash leaves
//! either the whole block or none of it. Current state lives in `accounts`/`storage`/`code` (the
//! account records of the last blocks in memory until the trie's write-out, `account_buffer.rs`);
//! `*_history` tables keep the value each key had *before* block N changed it, which makes any
//! held block queryable (archive) with one range lookup per read.

mod account_buffer;
mod backend;
mod codec;
mod exclusions;
mod karma;
mod logs;
mod proof;
mod prune;
mod reader;
mod snap;
mod snapshot;
mod stats;
pub mod tables;
mod tx_buffer;
mod unwind;
mod write;

use std::{path::Path, sync::Arc};

use alloy_consensus::{BlockBody, Header, ReceiptEnvelope, TxEnvelope};
use alloy_primitives::{Address, B256};
use redb::ReadableTable;

pub use karma::{LedgerAt, LedgerRecord};
use tables::*;

/// Database cache: 1 GiB, geth's default `--cache`. It is a ceiling, not an allocation: the
/// trie's nodes are cached as they are read, so a node uses no more of it than its trie holds.
/// A state of ten million accounts fills it: the account trie's branches then stay in memory and
/// a block of a thousand accounts reads the store about 380 times instead of about 1,950 (with
/// 256 MiB), which brings its state root from 12-14 ms to 9-10 ms on two cores
/// (`--bench state_root`).
/// `--db-cache-size` changes it; how it is split: [`page_cache_bytes`].
pub const DEFAULT_DB_CACHE_BYTES: usize = 1024 * 1024 * 1024;

/// Most of the database cache redb's own page cache takes. The node reads the file through a
/// memory map (`backend.rs`), so a page redb's cache misses is copied from the OS page cache,
/// not read from the disk, and redb's cache is a second copy of pages the OS keeps anyway. redb
/// also moves every page a commit writes into it: a larger cache fills with what the chain
/// writes and grows with the chain until it is full (about a megabyte a minute under the soak's
/// load, `e2e/bench/soak.sh`); 8 MiB fill within minutes and hold the tables' upper pages. The
/// follower's full sync of a million accounts was no slower with 8 or 16 MiB than with 304 MiB
/// (51.5-53.8 s and 48.5-54.3 s against 44.4-56.0 s, medians 52.7, 50.2 and 53.3 s, `--bench
/// snapshot`).
const PAGE_CACHE_MAX_BYTES: usize = 8 * 1024 * 1024;

/// The account trie's four levels below the root: 69,905 nodes at most whatever the state's
/// size, each a branch of up to 532 bytes with the map's slot. A node cache larger than this is
/// read from the stored trie when the database opens ([`warms_trie_cache`]).
const TRIE_UPPER_LEVELS_BYTES: usize = 48 * 1024 * 1024;

/// The part of the database cache that is redb's page cache: three quarters of a small cache,
/// at most [`PAGE_CACHE_MAX_BYTES`]. The rest keeps account-trie nodes
/// ([`trie_cache_bytes`]), which a block reads at random: the four levels below the root first,
/// then the deeper branches, the shallowest that fit (at ten million accounts the branches take
/// about 690 MiB, which the default holds).
pub fn page_cache_bytes(db_cache_bytes: usize) -> usize {
    (db_cache_bytes / 4 * 3).min(PAGE_CACHE_MAX_BYTES)
}

/// The part of the database cache that keeps account-trie nodes
/// (`l2node_trie::buffer::WriteBack::with_node_cache`): all but [`page_cache_bytes`].
pub fn trie_cache_bytes(db_cache_bytes: usize) -> usize {
    db_cache_bytes - page_cache_bytes(db_cache_bytes)
}

/// Whether a database opened with `db_cache_bytes` of cache reads the stored account trie into
/// the trie's node cache ([`Storage::open_with_cache`]): when the cache has room beyond the
/// four levels below the root.
pub fn warms_trie_cache(db_cache_bytes: usize) -> bool {
    trie_cache_bytes(db_cache_bytes) > TRIE_UPPER_LEVELS_BYTES
}

/// Default `--rpc-eth-proof-window`: the tries of the last 128 blocks can be read (proofs,
/// simulations), as geth's path-based state serves its 128 recent layers. Reading block
/// `head - k` sets back what the `k` later blocks changed, so a deeper window costs more per
/// request rather than disk (one change set per block).
pub const DEFAULT_PROOF_WINDOW: u64 = 128;
/// Blocks whose trie writes are kept in memory before they are written to the database together
/// (see `write.rs`): readers of the trie (proofs, simulations) look a missing node up in each
/// buffered block's writes, and a restart replays at most this many blocks' change sets.
///
/// At a million accounts a write-out dirties most pages of `trie_nodes` whatever the number of
/// blocks in it, so its cost grows more slowly than the blocks it holds. With 64 blocks and 64 MiB
/// instead of 32 and 32 MiB, the snapshot bench's full sync (a million accounts, 768 blocks) wrote
/// 11.6 GB to the file instead of 13.6 GB and took 2.8 s (5%) less on average over ten alternating
/// pairs (no pair slower); 128 blocks and 128 MiB was not faster again within the machine's spread.
/// At ten million accounts, where the table has ten times the pages, a write-out of 64 blocks of
/// 1,000 accounts took 2.55 s against 1.12 s for 32 earlier the same day (`--bench state_root`):
/// about the same time a block (40 ms against 35 ms), in pauses twice as long.
pub const DEFAULT_TRIE_BUFFER_BLOCKS: usize = 64;
/// Key and value bytes of buffered trie writes past which they are written out whatever the block
/// count. On a large state this limit is reached first: the snapshot bench's blocks of 1,300
/// transfers at a million accounts buffer about 1.2 MB of nodes each (29 write-outs in 768 blocks
/// with 32 MiB). The writer's merged map shares the values and copies the keys, and maps and
/// allocations add about half: a full buffer takes up to about 128 MiB.
pub const DEFAULT_TRIE_BUFFER_BYTES: usize = 64 * 1024 * 1024;
pub use logs::LogQuery;
pub use prune::MIN_HISTORY_WINDOW;
pub use reader::{StateAt, StateReader};
pub use snap::{next_page, PageCursor, SnapIndex};
pub use stats::{human_size, DbStats, Kind, TableUsage};
pub use write::BlockToStore;

/// Errors of the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The database engine failed.
    #[error("database error: {0}")]
    Database(#[from] redb::Error),
    /// The database directory could not be created.
    #[error("cannot create the data directory: {0}")]
    Io(#[from] std::io::Error),
    /// The state trie failed.
    #[error(transparent)]
    Trie(#[from] l2node_trie::TrieError),
    /// Stored bytes did not decode: the database is damaged or from another version.
    #[error("corrupt record in {table}: {reason}")]
    Corrupt {
        /// Table holding the record.
        table: &'static str,
        /// What failed to decode.
        reason: String,
    },
    /// The state of a block older than the history window was asked for.
    #[error(
        "state at block {block} is pruned: this node keeps the state of the last {window} \
         blocks (from block {oldest}, --history-window); ask an archive node (one run without \
         --history-window) for older blocks"
    )]
    Pruned {
        /// The block asked for.
        block: u64,
        /// The oldest block whose state is kept.
        oldest: u64,
        /// Blocks of state history kept.
        window: u64,
    },
    /// A block or state from before the snapshot this node joined the chain from.
    #[error(
        "block {block} is before block {base}, the snapshot this node joined the chain from: it \
         holds no earlier blocks, receipts or state; ask an archive node, or sync a node without \
         --syncmode snap"
    )]
    BeforeSnapshot {
        /// The block asked for.
        block: u64,
        /// The snapshot's block.
        base: u64,
    },
    /// A block that is not the successor of the current head was offered.
    #[error("block {number} does not extend the head (expected {expected})")]
    NotNext {
        /// Number of the offered block.
        number: u64,
        /// The number that would extend the head.
        expected: u64,
    },
}

impl StorageError {
    /// Whether the database is open in another process (a running node).
    pub fn is_locked(&self) -> bool {
        matches!(self, Self::Database(redb::Error::DatabaseAlreadyOpen))
    }
}

// redb reports each operation with its own error type; all of them convert into `redb::Error`.
macro_rules! db_err {
    ($($t:ty),*) => {$(
        impl From<$t> for StorageError {
            fn from(e: $t) -> Self {
                StorageError::Database(e.into())
            }
        }
    )*};
}
db_err!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// The node's database. Cheap to clone; reads run concurrently with the single writer.
#[derive(Clone)]
pub struct Storage {
    db: Arc<redb::Database>,
    snapshots: Arc<snapshot::Snapshots>,
    /// Blocks of state history kept (`--history-window`); `None`: all (archive).
    history_window: Option<u64>,
    /// Blocks before the head whose trie can be read (`--rpc-eth-proof-window`): their change
    /// sets are kept.
    proof_window: u64,
    /// Most blocks and bytes of trie writes kept in memory (see `write.rs`).
    trie_buffer: (usize, usize),
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Storage").finish_non_exhaustive()
    }
}

/// A block as served from storage.
#[derive(Debug, Clone)]
pub struct StoredBlock {
    /// The sealed header.
    pub header: Header,
    /// keccak256(RLP(header)).
    pub hash: B256,
    /// Transactions, ommers, withdrawals.
    pub body: BlockBody<TxEnvelope>,
    /// Recovered sender of each transaction.
    pub senders: Vec<Address>,
}

impl StoredBlock {
    /// The block as the chain has it (header and body).
    pub fn into_block(self) -> alloy_consensus::Block<TxEnvelope> {
        alloy_consensus::Block {
            header: self.header,
            body: self.body,
        }
    }

    /// [`StoredBlock::into_block`] of a copy.
    pub fn to_block(&self) -> alloy_consensus::Block<TxEnvelope> {
        alloy_consensus::Block {
            header: self.header.clone(),
            body: self.body.clone(),
        }
    }
}

/// Opens (or creates) the redb database file at `path` as the node does: with a page cache of
/// `page_cache_bytes`, reading the file through a memory map (`backend.rs`).
pub fn open_database(
    path: &Path,
    page_cache_bytes: usize,
) -> Result<redb::Database, redb::DatabaseError> {
    redb::Database::builder()
        .set_cache_size(page_cache_bytes)
        // After an unclean shutdown redb checks and repairs the file before opening it, which
        // takes a while on a large database: say so, so the node does not look hung.
        .set_repair_callback(|session| {
            tracing::info!(
                target: "l2node::storage",
                progress = %format!("{:.0}%", session.progress() * 100.0),
                "repairing the database after an unclean shutdown"
            );
        })
        .create_with_backend(backend::MappedFile::open(path)?)
}

impl Storage {
    /// Opens (or creates) the database file at `path` with the default cache
    /// ([`DEFAULT_DB_CACHE_BYTES`]); parent directories are created.
    pub fn open(path: &Path) -> Result<Self, StorageError> {
        Self::open_with_cache(path, DEFAULT_DB_CACHE_BYTES)
    }

    /// Opens (or creates) the database file at `path` with a cache of `cache_bytes`: redb's
    /// pages, and the trie's node cache ([`trie_cache_bytes`]).
    pub fn open_with_cache(path: &Path, cache_bytes: usize) -> Result<Self, StorageError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let trie_cache = trie_cache_bytes(cache_bytes);
        let db = open_database(path, page_cache_bytes(cache_bytes))?;
        let storage = Self {
            db: Arc::new(db),
            snapshots: Arc::new(snapshot::Snapshots::new(trie_cache)),
            history_window: None,
            proof_window: DEFAULT_PROOF_WINDOW,
            trie_buffer: (DEFAULT_TRIE_BUFFER_BLOCKS, DEFAULT_TRIE_BUFFER_BYTES),
        };
        storage.create_tables()?;
        storage.rebuild_trie_buffer()?;
        if warms_trie_cache(cache_bytes) {
            storage.warm_trie_cache()?;
        }
        Ok(storage)
    }

    /// Keeps the trie writes of up to `blocks` blocks and `bytes` bytes in memory (at least
    /// one block: 1 writes every block's trie right after it); defaults
    /// [`DEFAULT_TRIE_BUFFER_BLOCKS`], [`DEFAULT_TRIE_BUFFER_BYTES`].
    pub fn with_trie_buffer(mut self, blocks: usize, bytes: usize) -> Self {
        self.trie_buffer = (blocks.max(1), bytes);
        self
    }

    /// Keeps the state history of the last `window` blocks only (a pruned node);
    /// `None` keeps all of it (an archive node). The window is at least
    /// [`MIN_HISTORY_WINDOW`].
    pub fn with_history_window(mut self, window: Option<u64>) -> Self {
        self.history_window = window.map(|w| w.max(MIN_HISTORY_WINDOW));
        self
    }

    /// Blocks of state history kept, `None` on an archive node.
    pub fn history_window(&self) -> Option<u64> {
        self.history_window
    }

    /// Keeps the change sets of the last `window` blocks, so that their tries (proofs,
    /// simulations and block building on them) can be read; default [`DEFAULT_PROOF_WINDOW`].
    pub fn with_proof_window(mut self, window: u64) -> Self {
        self.proof_window = window;
        self
    }

    fn create_tables(&self) -> Result<(), StorageError> {
        let tx = self.db.begin_write()?;
        tx.open_table(META)?;
        tx.open_table(CONFIG)?;
        tx.open_table(HEADERS)?;
        tx.open_table(HASH_TO_NUMBER)?;
        tx.open_table(BODIES)?;
        tx.open_table(SENDERS)?;
        tx.open_table(RECEIPTS)?;
        tx.open_table(TX_INDEX)?;
        tx.open_table(LOG_ADDRESSES)?;
        tx.open_table(LOG_TOPICS)?;
        tx.open_table(ACCOUNTS)?;
        tx.open_table(ACCOUNT_WRITES)?;
        tx.open_table(STORAGE)?;
        tx.open_table(CODE)?;
        tx.open_table(ACCOUNT_HISTORY)?;
        tx.open_table(STORAGE_HISTORY)?;
        tx.open_table(TRIE_NODES)?;
        tx.open_table(CHANGE_SETS)?;
        {
            let mut meta = tx.open_table(META)?;
            if meta.get(PROOFS_FROM)?.is_none() {
                // New: from genesis. Written by an earlier l2node: from its head, whose trie is
                // the current one (the change sets start with the next block).
                let head = meta.get("head")?.map_or(0, |v| v.value());
                meta.insert(PROOFS_FROM, head)?;
            }
            meta.remove(LEGACY_TRIE_HISTORY_FROM)?;
        }
        // Earlier versions kept every overwritten trie node (most of an archive's bytes); the
        // change sets serve the same reads within the proof window. The file keeps its size;
        // redb reuses the freed pages for the blocks that follow.
        if tx.delete_table(LEGACY_TRIE_HISTORY)? {
            tracing::info!(target: "l2node::storage", "dropped the trie history of an earlier l2node: proofs and simulations now read the last --rpc-eth-proof-window blocks' tries from change sets");
            tx.open_table(PRUNE_CURSORS)?
                .remove(redb::TableHandle::name(&LEGACY_TRIE_HISTORY))?;
        }
        tx.open_table(KARMA_USAGE)?;
        tx.open_table(KARMA_DENY)?;
        tx.open_table(KARMA_TIERS)?;
        tx.open_table(KARMA_OPERATOR_DENY)?;
        tx.open_table(TX_EXCLUSIONS)?;
        tx.open_table(TX_EXCLUSIONS_BY_TIME)?;
        tx.open_table(PRUNE_CURSORS)?;
        tx.commit()?;
        Ok(())
    }

    /// The read snapshot of the latest commit, shared by all readers until the next block.
    fn snapshot(&self) -> Result<Arc<snapshot::Snapshot>, StorageError> {
        self.snapshots.get(&self.db)
    }

    /// The genesis JSON stored with the chain (see [`Storage::put_genesis_config`]), or `None`
    /// for a new database or one written before the genesis was stored.
    pub fn genesis_config(&self) -> Result<Option<Vec<u8>>, StorageError> {
        use redb::ReadableDatabase;
        let tx = self.db.begin_read()?;
        let table = tx.open_table(CONFIG)?;
        let json = table.get("genesis")?.map(|v| v.value().to_vec());
        Ok(json)
    }

    /// Number of the canonical head, or `None` before genesis is written.
    pub fn head_number(&self) -> Result<Option<u64>, StorageError> {
        Ok(self.snapshot()?.head)
    }

    /// Header of canonical block `number`.
    pub fn header(&self, number: u64) -> Result<Option<Header>, StorageError> {
        let snap = self.snapshot()?;
        let table = snap.table(&snap.headers)?;
        table
            .get(number)?
            .map(|v| codec::decode_rlp("headers", codec::header_parts(v.value()).1))
            .transpose()
    }

    /// Number of the block with `hash`.
    pub fn block_number(&self, hash: &B256) -> Result<Option<u64>, StorageError> {
        let snap = self.snapshot()?;
        Ok(snap
            .table(&snap.hash_to_number)?
            .get(&hash.0)?
            .map(|v| v.value()))
    }

    /// Full block `number` (header, body, senders).
    pub fn block(&self, number: u64) -> Result<Option<StoredBlock>, StorageError> {
        let snap = self.snapshot()?;
        before_snapshot(&snap, number)?;
        block_in(&snap, number)
    }

    /// Receipts of block `number`, in transaction order.
    pub fn receipts(&self, number: u64) -> Result<Option<Vec<ReceiptEnvelope>>, StorageError> {
        let snap = self.snapshot()?;
        before_snapshot(&snap, number)?;
        receipts_in(&snap, number)
    }

    /// Block `number` and its receipts, read from one snapshot: both of the same block even
    /// when a reorganisation replaces it meanwhile (two reads could pair a block with the
    /// receipts of the one that replaced it).
    pub fn block_with_receipts(
        &self,
        number: u64,
    ) -> Result<Option<(StoredBlock, Vec<ReceiptEnvelope>)>, StorageError> {
        let snap = self.snapshot()?;
        before_snapshot(&snap, number)?;
        let Some(block) = block_in(&snap, number)? else {
            return Ok(None);
        };
        let receipts = receipts_in(&snap, number)?.unwrap_or_default();
        if receipts.len() != block.body.transactions.len() {
            return Err(codec::corrupt(
                "receipts",
                format!(
                    "block {number} has {} transactions and {} receipts",
                    block.body.transactions.len(),
                    receipts.len()
                ),
            ));
        }
        Ok(Some((block, receipts)))
    }

    /// The logs of each receipt of canonical block `number`, without building the receipts'
    /// blooms (log search checks the header's bloom and needs only the logs).
    pub fn receipt_logs(
        &self,
        number: u64,
    ) -> Result<Option<Vec<Vec<alloy_primitives::Log>>>, StorageError> {
        let snap = self.snapshot()?;
        before_snapshot(&snap, number)?;
        let table = snap.table(&snap.receipts)?;
        table
            .get(number)?
            .map(|v| codec::decode_receipt_logs(v.value()))
            .transpose()
    }

    /// Block number and index of a transaction.
    pub fn tx_location(&self, hash: &B256) -> Result<Option<(u64, u32)>, StorageError> {
        let snap = self.snapshot()?;
        if let Some(found) = snap.txs.get(hash) {
            return Ok(Some(found));
        }
        Ok(snap.table(&snap.tx_index)?.get(&hash.0)?.map(|v| v.value()))
    }

    /// The state as of block `number` (`None` = the head), as a consistent snapshot;
    /// [`StorageError::Pruned`] for a block before the history window.
    pub fn state_at(&self, number: Option<u64>) -> Result<StateAt, StorageError> {
        let snap = self.snapshot()?;
        if let (Some(block), Some(head)) = (number, snap.head) {
            if let Some(base) = snap.snap_base.filter(|base| block < *base) {
                return Err(StorageError::BeforeSnapshot { block, base });
            }
            if block < snap.state_from && block < head {
                return Err(StorageError::Pruned {
                    block,
                    oldest: snap.state_from,
                    window: self.history_window.unwrap_or(head - snap.state_from),
                });
            }
        }
        Ok(StateAt::new(snap, self.snapshots.clone(), number))
    }

    /// The first block after genesis whose body, receipts and logs this database holds: 0
    /// (all of them), or the block after the snapshot a node joined from.
    pub fn first_block(&self) -> Result<u64, StorageError> {
        Ok(self.snapshot()?.snap_base.map_or(0, |base| base + 1))
    }

    /// The first block whose state this database can read: 0 on an archive node.
    pub fn first_state_block(&self) -> Result<u64, StorageError> {
        Ok(self.snapshot()?.state_from)
    }
}

/// [`StorageError::BeforeSnapshot`] for a block (other than genesis) that a database joined
/// from a snapshot at a later block does not hold whole; the snapshot's own block counts, as
/// its body and receipts were not part of it.
fn before_snapshot(snap: &snapshot::Snapshot, block: u64) -> Result<(), StorageError> {
    match snap.snap_base {
        Some(base) if block != 0 && block <= base => {
            Err(StorageError::BeforeSnapshot { block, base })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;

/// Canonical block `number`'s header and hash in `snap`.
fn header_in(
    snap: &snapshot::Snapshot,
    number: u64,
) -> Result<Option<(Header, B256)>, StorageError> {
    snap.table(&snap.headers)?
        .get(number)?
        .map(|v| {
            let (hash, rlp) = codec::header_parts(v.value());
            codec::decode_rlp::<Header>("headers", rlp).map(|h| (h, hash))
        })
        .transpose()
}

/// [`Storage::block`] in `snap`.
fn block_in(snap: &snapshot::Snapshot, number: u64) -> Result<Option<StoredBlock>, StorageError> {
    let Some((header, hash)) = header_in(snap, number)? else {
        return Ok(None);
    };
    let body: BlockBody<TxEnvelope> = match snap.table(&snap.bodies)?.get(number)? {
        Some(v) => codec::decode_rlp("bodies", v.value())?,
        None => BlockBody::default(),
    };
    let senders: Vec<Address> = snap
        .table(&snap.senders)?
        .get(number)?
        .map(|v| {
            v.value()
                .chunks_exact(20)
                .map(Address::from_slice)
                .collect()
        })
        .unwrap_or_default();
    if senders.len() != body.transactions.len() {
        return Err(codec::corrupt(
            "senders",
            format!(
                "block {number} has {} transactions and {} senders",
                body.transactions.len(),
                senders.len()
            ),
        ));
    }
    Ok(Some(StoredBlock {
        hash,
        header,
        body,
        senders,
    }))
}

/// [`Storage::receipts`] in `snap`.
fn receipts_in(
    snap: &snapshot::Snapshot,
    number: u64,
) -> Result<Option<Vec<ReceiptEnvelope>>, StorageError> {
    snap.table(&snap.receipts)?
        .get(number)?
        .map(|v| codec::decode_receipts(v.value()))
        .transpose()
}

#[cfg(test)]
mod cache_split_tests {
    use super::*;

    #[test]
    fn the_database_cache_splits_between_pages_and_the_trie_node_cache() {
        const MIB: usize = 1 << 20;
        // A small cache: a quarter for the upper levels, nothing read in when opening.
        assert_eq!(page_cache_bytes(8 * MIB), 6 * MIB);
        assert_eq!(trie_cache_bytes(8 * MIB), 2 * MIB);
        assert!(!warms_trie_cache(8 * MIB));
        // Up to the upper levels and redb's most, nothing read in either.
        assert_eq!(trie_cache_bytes(56 * MIB), 48 * MIB);
        assert!(!warms_trie_cache(56 * MIB));
        // The default: redb keeps 8 MiB, the trie's nodes the rest, room for the branches of
        // ten million accounts (about 690 MiB), read in when opening.
        assert_eq!(page_cache_bytes(DEFAULT_DB_CACHE_BYTES), 8 * MIB);
        assert_eq!(trie_cache_bytes(DEFAULT_DB_CACHE_BYTES), 1016 * MIB);
        assert!(warms_trie_cache(DEFAULT_DB_CACHE_BYTES));
    }
}

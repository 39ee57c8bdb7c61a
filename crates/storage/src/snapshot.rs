//! Shared read snapshots: one redb read transaction per committed head, tables opened on first use.
//!
//! Every RPC read used to begin its own read transaction and open up to seven tables (each open
//! is a B-tree lookup in redb's table directory), which cost more than the read itself. A
//! snapshot of the latest commit is instead taken once per block (right after the commit, before
//! the block is announced) and shared by all readers until the next block; a table is opened at
//! most once per snapshot. A reader holding an old snapshot keeps seeing a consistent state, as
//! with a private read transaction.

use std::sync::{Arc, OnceLock};

use alloy_primitives::{Address, B256};
use l2node_trie::buffer::{LayeredTrie, Layers, WriteBack};
use parking_lot::{Mutex, MutexGuard, RwLock};
use redb::{ReadOnlyTable, ReadTransaction, ReadableDatabase, TableDefinition};
use revm::bytecode::Bytecode;

use crate::{account_buffer::AccountLayers, tx_buffer::TxLayers};

use super::{
    StorageError, ACCOUNTS, ACCOUNT_HISTORY, BODIES, CODE, HASH_TO_NUMBER, HEADERS, LOG_ADDRESSES,
    LOG_TOPICS, META, RECEIPTS, SENDERS, STORAGE, STORAGE_HISTORY, TX_INDEX,
};
use crate::tables::{
    CHANGE_SETS, KARMA_DENY, KARMA_TIERS, KARMA_USAGE, PROOFS_FROM, STATE_HISTORY_FROM, TRIE_NEXT,
    TRIE_NODES, TX_NEXT,
};

/// A table of a snapshot, opened on first use.
pub(crate) struct Lazy<K: redb::Key + 'static, V: redb::Value + 'static> {
    def: TableDefinition<'static, K, V>,
    table: OnceLock<ReadOnlyTable<K, V>>,
}

impl<K: redb::Key + 'static, V: redb::Value + 'static> Lazy<K, V> {
    const fn new(def: TableDefinition<'static, K, V>) -> Self {
        Self {
            def,
            table: OnceLock::new(),
        }
    }
}

/// One read transaction with its tables opened lazily.
pub(crate) struct Snapshot {
    tx: Mutex<ReadTransaction>,
    /// Canonical head in this snapshot (`None` before genesis).
    pub(crate) head: Option<u64>,
    /// The first block whose state can be read (see `prune.rs`).
    pub(crate) state_from: u64,
    /// The first block whose change sets (and so trie) can be read (see `proof.rs`).
    pub(crate) proofs_from: u64,
    /// The block this database joined the chain at from a snapshot (see `snap.rs`).
    pub(crate) snap_base: Option<u64>,
    pub(crate) headers: Lazy<u64, &'static [u8]>,
    pub(crate) hash_to_number: Lazy<&'static [u8; 32], u64>,
    pub(crate) bodies: Lazy<u64, &'static [u8]>,
    pub(crate) senders: Lazy<u64, &'static [u8]>,
    pub(crate) receipts: Lazy<u64, &'static [u8]>,
    pub(crate) tx_index: Lazy<&'static [u8; 32], (u64, u32)>,
    pub(crate) log_addresses: Lazy<&'static [u8], ()>,
    pub(crate) log_topics: Lazy<&'static [u8], ()>,
    pub(crate) accounts: Lazy<&'static [u8; 20], &'static [u8]>,
    pub(crate) storage: Lazy<&'static [u8], &'static [u8; 32]>,
    pub(crate) code: Lazy<&'static [u8; 32], &'static [u8]>,
    pub(crate) account_history: Lazy<&'static [u8], &'static [u8]>,
    pub(crate) storage_history: Lazy<&'static [u8], &'static [u8; 32]>,
    pub(crate) karma_usage: Lazy<&'static [u8], (u64, u64)>,
    pub(crate) karma_deny: Lazy<&'static [u8], &'static [u8]>,
    pub(crate) karma_tiers: Lazy<u64, &'static [u8]>,
    pub(crate) trie_nodes: Lazy<&'static [u8], &'static [u8]>,
    /// The first block whose trie writes `trie_nodes` does not hold (see [`TRIE_NEXT`]).
    pub(crate) trie_next: Option<u64>,
    /// The first block whose transaction index entries `tx_index` does not hold (see
    /// [`TX_NEXT`]).
    pub(crate) tx_next: Option<u64>,
    /// The trie writes of the blocks up to `head` that `trie_nodes` does not hold yet.
    trie_layers: Layers,
    /// The transaction index entries of the blocks up to `head` that `tx_index` does not hold
    /// yet (from `tx_next`).
    pub(crate) txs: TxLayers,
    /// The account records of the blocks up to `head` that `accounts` does not hold yet (from
    /// `trie_next`).
    pub(crate) buffered_accounts: AccountLayers,
    pub(crate) change_sets: Lazy<u64, &'static [u8]>,
}

impl Snapshot {
    fn new(
        tx: ReadTransaction,
        trie_layers: Layers,
        (txs, buffered_accounts): (TxLayers, AccountLayers),
    ) -> Result<Self, StorageError> {
        let meta = tx.open_table(META)?;
        let head = meta.get("head")?.map(|v| v.value());
        let state_from = meta.get(STATE_HISTORY_FROM)?.map_or(0, |v| v.value());
        let proofs_from = meta.get(PROOFS_FROM)?.map_or(0, |v| v.value());
        let snap_base = meta.get(crate::tables::SNAPSHOT_BASE)?.map(|v| v.value());
        let trie_next = meta.get(TRIE_NEXT)?.map(|v| v.value());
        let tx_next = meta.get(TX_NEXT)?.map(|v| v.value());
        drop(meta);
        Ok(Self {
            tx: Mutex::new(tx),
            head,
            state_from,
            proofs_from,
            snap_base,
            headers: Lazy::new(HEADERS),
            hash_to_number: Lazy::new(HASH_TO_NUMBER),
            bodies: Lazy::new(BODIES),
            senders: Lazy::new(SENDERS),
            receipts: Lazy::new(RECEIPTS),
            tx_index: Lazy::new(TX_INDEX),
            log_addresses: Lazy::new(LOG_ADDRESSES),
            log_topics: Lazy::new(LOG_TOPICS),
            accounts: Lazy::new(ACCOUNTS),
            storage: Lazy::new(STORAGE),
            code: Lazy::new(CODE),
            account_history: Lazy::new(ACCOUNT_HISTORY),
            storage_history: Lazy::new(STORAGE_HISTORY),
            karma_usage: Lazy::new(KARMA_USAGE),
            karma_deny: Lazy::new(KARMA_DENY),
            karma_tiers: Lazy::new(KARMA_TIERS),
            trie_nodes: Lazy::new(TRIE_NODES),
            trie_next,
            tx_next,
            trie_layers,
            txs,
            buffered_accounts,
            change_sets: Lazy::new(CHANGE_SETS),
        })
    }

    /// The table of `lazy`, opening it in this snapshot's transaction on first use.
    pub(crate) fn table<'s, K: redb::Key + 'static, V: redb::Value + 'static>(
        &self,
        lazy: &'s Lazy<K, V>,
    ) -> Result<&'s ReadOnlyTable<K, V>, StorageError> {
        if let Some(t) = lazy.table.get() {
            return Ok(t);
        }
        let opened = self.tx.lock().open_table(lazy.def)?;
        // A racing reader may have opened it too: either copy is the same snapshot.
        let _ = lazy.table.set(opened);
        Ok(lazy.table.get().expect("set above"))
    }

    /// The hash of block `number` in this snapshot (zero if it holds no such block).
    pub(crate) fn block_hash(&self, number: u64) -> Result<B256, StorageError> {
        Ok(self
            .table(&self.headers)?
            .get(number)?
            .map_or(B256::ZERO, |v| super::codec::header_parts(v.value()).0))
    }

    /// `f` of the current record of `address` in this snapshot: the latest buffered one, else
    /// the table's (`None`: no such account).
    pub(crate) fn with_account<T>(
        &self,
        address: &Address,
        f: impl FnOnce(Option<&[u8]>) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        match self.buffered_accounts.get(address) {
            Some(record) => f(record),
            None => f(self
                .table(&self.accounts)?
                .get(&address.0 .0)?
                .as_ref()
                .map(|v| v.value())),
        }
    }

    /// The state trie of `head`: the stored nodes with the buffered writes over them.
    pub(crate) fn trie(&self) -> Result<LayeredTrie<'_>, StorageError> {
        Ok(self.trie_layers.over(self.table(&self.trie_nodes)?))
    }
}

/// Most contract codes kept decoded in memory; past it the cache starts over (codes are
/// content-addressed, so a cached entry is never stale, only evicted).
const CODE_CACHE_ENTRIES: usize = 4096;

/// The current snapshot, the trie's write-back buffer and the decoded-code cache, shared by
/// every clone of `Storage`.
pub(crate) struct Snapshots {
    current: RwLock<Option<Arc<Snapshot>>>,
    /// Locked by the writer from before its commit until its snapshot is taken, and by a reader
    /// taking a snapshot, so that a snapshot's database and buffered writes are of one head.
    /// Always locked before `current`.
    trie: Mutex<WriteBack>,
    /// The transaction index entries of the blocks the trie buffer holds, changed with it
    /// (under its lock, and locked after it).
    txs: Mutex<TxLayers>,
    /// The account records of the blocks the trie buffer holds, changed with it (under its
    /// lock, and locked after it).
    accounts: Mutex<AccountLayers>,
    code: Mutex<std::collections::HashMap<B256, Bytecode>>,
}

impl Snapshots {
    /// No snapshot yet, an empty trie buffer whose node cache may take `trie_cache` bytes.
    pub(crate) fn new(trie_cache: usize) -> Self {
        Self {
            current: RwLock::default(),
            trie: Mutex::new(WriteBack::with_node_cache(trie_cache)),
            txs: Mutex::default(),
            accounts: Mutex::default(),
            code: Mutex::default(),
        }
    }

    /// The snapshot of the latest commit (taken now if there is none yet).
    pub(crate) fn get(&self, db: &redb::Database) -> Result<Arc<Snapshot>, StorageError> {
        if let Some(s) = self.current.read().as_ref() {
            return Ok(s.clone());
        }
        let trie = self.trie.lock();
        let mut current = self.current.write();
        if let Some(s) = current.as_ref() {
            return Ok(s.clone());
        }
        let snap = Arc::new(Snapshot::new(
            db.begin_read()?,
            trie.layers(),
            self.buffers(),
        )?);
        *current = Some(snap.clone());
        Ok(snap)
    }

    /// The trie's write-back buffer, locked (see the field).
    pub(crate) fn trie(&self) -> MutexGuard<'_, WriteBack> {
        self.trie.lock()
    }

    /// The buffered transaction index entries, to write out or change: only with the trie
    /// buffer locked (`_trie`), as they change with it.
    pub(crate) fn tx_buffer(&self, _trie: &WriteBack) -> MutexGuard<'_, TxLayers> {
        self.txs.lock()
    }

    /// The buffered account records, to write out or change: only with the trie buffer locked
    /// (`_trie`), as they change with it.
    pub(crate) fn account_buffer(&self, _trie: &WriteBack) -> MutexGuard<'_, AccountLayers> {
        self.accounts.lock()
    }

    /// The buffered account records as they are (shared), for the block writer, the only one
    /// that changes them.
    pub(crate) fn accounts(&self) -> AccountLayers {
        self.accounts.lock().clone()
    }

    /// The buffered transaction index entries and account records, for a snapshot.
    fn buffers(&self) -> (TxLayers, AccountLayers) {
        (self.txs.lock().clone(), self.accounts())
    }

    /// Replaces the snapshot after a commit, with `trie` (the locked buffer) as the commit left
    /// it. Called with the write lock of the chain held, so snapshots only move forward; on
    /// failure the next reader takes one itself.
    pub(crate) fn refresh(&self, db: &redb::Database, trie: &WriteBack) {
        let next = db
            .begin_read()
            .map_err(StorageError::from)
            .and_then(|tx| Snapshot::new(tx, trie.layers(), self.buffers()));
        let mut current = self.current.write();
        match next {
            // Never step back behind a newer snapshot a reader already took.
            Ok(next) if current.as_ref().is_some_and(|c| c.head > next.head) => {}
            Ok(next) => *current = Some(Arc::new(next)),
            Err(_) => *current = None,
        }
    }

    /// Moves readers to the database as it is now even when its head is lower (after an
    /// unwind, under the chain's write lock, so no newer commit can race it), with `trie` (the
    /// locked buffer) as it is now.
    pub(crate) fn step_back(&self, db: &redb::Database, trie: &WriteBack) {
        let next = db
            .begin_read()
            .map_err(StorageError::from)
            .and_then(|tx| Snapshot::new(tx, trie.layers(), self.buffers()));
        *self.current.write() = next.ok().map(Arc::new);
    }

    /// Decoded code by hash, decoding (and analysing jump destinations) at most once.
    pub(crate) fn code(
        &self,
        hash: B256,
        load: impl FnOnce() -> Result<Option<Bytecode>, StorageError>,
    ) -> Result<Option<Bytecode>, StorageError> {
        if let Some(code) = self.code.lock().get(&hash) {
            return Ok(Some(code.clone()));
        }
        let Some(code) = load()? else { return Ok(None) };
        let mut cache = self.code.lock();
        if cache.len() >= CODE_CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(hash, code.clone());
        Ok(Some(code))
    }
}

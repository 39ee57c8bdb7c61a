//! Reading a block's trie paths on another thread while the block executes
//! (`l2node_trie::prefetch`), so that its state root finds them in memory.
//!
//! The executor reads the state through a [`PrefetchingReader`], which hands each account and
//! slot it reads to the prefetch thread. That thread reads the nodes on their paths from the
//! stored trie as of a read transaction of its own; the block's commit takes what it read
//! ([`Storage::commit_block_with`]) if the stored trie is still the one read: same head, same
//! trie write-out point ([`TRIE_NEXT`]). Execution reads every account and slot the block
//! changes, so at ten million accounts the update then reads almost nothing from the store.

use std::sync::{
    atomic::{AtomicBool, Ordering},
    mpsc, Arc,
};

use alloy_primitives::{keccak256, Address, B256, U256};
use l2node_trie::{prefetch::Prefetched, state::AccountState};
use parking_lot::Mutex;
use redb::ReadableDatabase;
use revm::{bytecode::Bytecode, state::AccountInfo};

use crate::{
    tables::{META, TRIE_NEXT, TRIE_NODES},
    StateReader, Storage, StorageError,
};

/// Keys handed to the thread together. Handing them over one by one woke the thread for each
/// (a system call on the executing thread) whenever it had caught up: in the chain bench on a
/// million accounts, a block of 1,000 transfers took 15 ms to build instead of 8.
const BATCH: usize = 32;

/// A key execution read.
enum Touched {
    /// An account, with its state when the reader knows it.
    Account(Address, Option<AccountState>),
    Slot(Address, U256),
}

/// What a prefetch thread read, and which stored trie it read it from.
pub(crate) struct Fetched {
    /// The head block when it began.
    pub(crate) head: Option<u64>,
    /// The first block whose trie writes were not in the store yet ([`TRIE_NEXT`]).
    pub(crate) trie_next: Option<u64>,
    pub(crate) nodes: Prefetched,
}

/// A prefetch thread for one block: give it the keys the block reads ([`PrefetchingReader`]),
/// then the block's commit.
pub struct TriePrefetch {
    sender: Option<mpsc::Sender<Vec<Touched>>>,
    /// Keys not handed over yet (fewer than [`BATCH`]).
    batch: Mutex<Vec<Touched>>,
    /// Set when the block is executed: the keys still queued are left to the update.
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Result<Fetched, StorageError>>>,
}

impl std::fmt::Debug for TriePrefetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TriePrefetch").finish_non_exhaustive()
    }
}

impl Storage {
    /// Starts a prefetch thread over the stored trie as of now, for the next block. If no thread
    /// can start, the prefetch does nothing and the update reads the store itself.
    pub fn prefetch_trie(&self) -> TriePrefetch {
        let from_depth = self.snapshots.trie().prefetch_from_depth();
        // Read here, not on the thread: the prefetch reads the trie stored now, before the
        // caller goes on to write anything.
        let read = self.db.begin_read();
        let stop = Arc::new(AtomicBool::new(false));
        let (sender, receiver) = mpsc::channel();
        let stopped = stop.clone();
        let spawned = std::thread::Builder::new()
            .name("l2node-prefetch".into())
            .spawn(move || {
                let read = read?;
                let meta = read.open_table(META)?;
                let head = meta.get("head")?.map(|v| v.value());
                let trie_next = meta.get(TRIE_NEXT)?.map(|v| v.value());
                let nodes = read.open_table(TRIE_NODES)?;
                let mut fetched = Prefetched::new();
                for touched in receiver.iter().flatten() {
                    if stopped.load(Ordering::Relaxed) {
                        break;
                    }
                    match touched {
                        Touched::Account(address, current) => fetched.account(
                            &nodes,
                            &keccak256(address),
                            from_depth,
                            current.as_ref(),
                        )?,
                        Touched::Slot(address, slot) => fetched.slot(
                            &nodes,
                            &keccak256(address),
                            &keccak256(slot.to_be_bytes::<32>()),
                        )?,
                    }
                }
                Ok(Fetched {
                    head,
                    trie_next,
                    nodes: fetched,
                })
            });
        let thread = spawned
            .inspect_err(|e| {
                tracing::warn!(target: "l2node::storage", error = %e, "could not start a thread to prefetch a block's trie paths; its update reads them itself");
            })
            .ok();
        TriePrefetch {
            sender: thread.is_some().then_some(sender),
            batch: Mutex::default(),
            stop,
            thread,
        }
    }
}

impl TriePrefetch {
    /// Reads the path of `address`'s account: a key the caller expects the block to read (a
    /// pooled transaction's sender and recipient), before it executes.
    pub fn account(&self, address: Address) {
        self.touch(Touched::Account(address, None));
    }

    fn touch(&self, touched: Touched) {
        let Some(sender) = &self.sender else { return };
        let mut batch = self.batch.lock();
        batch.push(touched);
        if batch.len() >= BATCH {
            // The thread stops only when the prefetch is finished, or on a store error.
            let _ = sender.send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
        }
    }

    /// Stops the thread after the key it is reading, and returns what it read (`None` if it
    /// failed: the update then reads the store, which reports the error if it persists).
    pub(crate) fn finish(mut self) -> Option<Fetched> {
        self.stop.store(true, Ordering::Relaxed);
        self.sender = None;
        match self.thread.take()?.join() {
            Ok(Ok(fetched)) => Some(fetched),
            Ok(Err(e)) => {
                tracing::debug!(target: "l2node::storage", error = %e, "a trie prefetch stopped early");
                None
            }
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

impl Drop for TriePrefetch {
    fn drop(&mut self) {
        // A block given up (refused, or built on a head that moved): the thread ends with the
        // key it is reading and nobody waits for it.
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A [`StateReader`] that hands the accounts and slots read through it to a [`TriePrefetch`].
pub struct PrefetchingReader<'a> {
    reader: &'a dyn StateReader,
    prefetch: Option<&'a TriePrefetch>,
}

impl<'a> PrefetchingReader<'a> {
    /// `reader`, handing what is read through it to `prefetch` (none: `reader` alone).
    pub fn new(reader: &'a dyn StateReader, prefetch: Option<&'a TriePrefetch>) -> Self {
        Self { reader, prefetch }
    }

    fn touch(&self, touched: Touched) {
        if let Some(prefetch) = self.prefetch {
            prefetch.touch(touched);
        }
    }
}

impl StateReader for PrefetchingReader<'_> {
    fn account(&self, address: Address) -> Result<Option<AccountInfo>, StorageError> {
        let account = self.reader.account(address)?;
        let current = account.as_ref().map(|info| AccountState {
            nonce: info.nonce,
            balance: info.balance,
            code_hash: info.code_hash,
        });
        self.touch(Touched::Account(address, current));
        Ok(account)
    }

    fn storage(&self, address: Address, slot: U256) -> Result<U256, StorageError> {
        self.touch(Touched::Slot(address, slot));
        self.reader.storage(address, slot)
    }

    fn code_by_hash(&self, code_hash: B256) -> Result<Bytecode, StorageError> {
        self.reader.code_by_hash(code_hash)
    }

    fn block_hash(&self, number: u64) -> Result<B256, StorageError> {
        self.reader.block_hash(number)
    }

    fn stored_block(&self) -> Option<u64> {
        self.reader.stored_block()
    }
}

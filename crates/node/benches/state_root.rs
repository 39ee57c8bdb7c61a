//! `apply_changes` for one block touching 1,000 accounts on top of redb-backed tries holding
//! 10k, 100k and 1M accounts: the time should stay flat as the state grows. Three ways: on every
//! core as the node did before its write-back buffer, on one thread, and through the write-back
//! buffer and its node cache as the node does now, with the node's default split of its database
//! cache between redb's pages and the trie's nodes. The write-back way's figure is the block's
//! state root (update and buffering); the write-out of every `DEFAULT_TRIE_BUFFER_BLOCKS`th
//! block, which the node does after announcing that block, is timed apart and printed.
//!
//! Sizes can be overridden with `TRIE_BENCH_SIZES=10000,100000`, and `TRIE_BENCH_DIR` keeps the
//! base states for later runs (the write-back way's commits go into them: each run starts from
//! the last one's state, a few thousand accounts larger). Each block of the first two ways runs
//! in its own write transaction which is aborted afterwards; the write-back way commits its
//! write-outs. A second group runs the same sweep on a `MemoryTrieStore` (blocks there only
//! update existing accounts so the state does not grow) to separate the trie's own cost from
//! redb's per-operation cost, and the number of store reads/writes per block is printed for
//! every size. Each change says what its account (and a contract's slots) held before the
//! block, as the node's do (`TRIE_BENCH_BEFORE=0` leaves that out). A block changes 700 or 900
//! accounts' balances and nonces, three storage slots of each of 100 contracts, and (in the
//! redb groups) creates 200 accounts. When the database cache (`TRIE_BENCH_DB_CACHE_MIB`, by
//! default the node's) has room beyond the trie's upper levels, the node cache is read from the
//! stored trie first, as the node does when it opens.

use std::{
    cell::Cell,
    collections::HashMap,
    hint::black_box,
    io::Write,
    sync::atomic::{AtomicUsize, Ordering},
    time::{Duration, Instant},
};

use alloy_primitives::{keccak256, Address, B256, U256};
use alloy_trie::KECCAK_EMPTY;
use criterion::{BenchmarkId, Criterion};
use l2node_storage::{
    open_database, tables::TRIE_NODES, trie_cache_bytes, warms_trie_cache, DEFAULT_DB_CACHE_BYTES,
    DEFAULT_TRIE_BUFFER_BLOCKS,
};
use l2node_trie::buffer::WriteBack;
use l2node_trie::state::{AccountChange, AccountState};
use l2node_trie::TrieError;
use l2node_trie::{apply_changes, apply_changes_parallel, state_root, MemoryTrieStore, TrieStore};
use rand::{rngs::StdRng, Rng, SeedableRng};
use redb::{Database, Durability, ReadableDatabase};

mod common;
use common::process_cpu;

/// The node binary's allocator (`crates/cli/src/main.rs`): the figures are the node's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Accounts written per transaction while building the base state.
const BUILD_BATCH: u64 = 50_000;
/// Accounts touched by the measured block.
const BLOCK_ACCOUNTS: usize = 1_000;

fn address(index: u64) -> Address {
    Address::from_word(keccak256(index.to_be_bytes()))
}

/// What account `index` holds after a change with `nonce` (with a code hash if `contract`).
fn state(index: u64, nonce: u64, contract: bool) -> AccountState {
    AccountState {
        nonce,
        balance: U256::from(index) * U256::from(1_000_000_007u64),
        code_hash: if contract {
            B256::repeat_byte(0xc0)
        } else {
            KECCAK_EMPTY
        },
    }
}

fn change(
    index: u64,
    before: Option<AccountState>,
    nonce: u64,
    storage: Vec<(U256, U256)>,
) -> AccountChange {
    AccountChange {
        address: address(index),
        before,
        info: Some(state(index, nonce, !storage.is_empty())),
        new_code: None,
        storage_before: Vec::new(),
        storage_wiped: false,
        storage,
    }
}

/// Base account `index`: every tenth one is a contract with four storage slots.
fn base_account(index: u64) -> AccountChange {
    let storage = if index.is_multiple_of(10) {
        (0..4u64)
            .map(|s| (U256::from(s), slot_value(index, 1, s)))
            .collect()
    } else {
        Vec::new()
    };
    change(index, None, 1, storage)
}

/// Storage slots a contract's change writes: three of its four, the one after the three left
/// out, so that what a slot holds follows from the contract's nonce (below).
fn contract_slots(nonce: u64) -> impl Iterator<Item = u64> {
    (0..3).map(move |k| (nonce + k) % 4)
}

/// What slot `slot` of contract `index` holds once the contract's change with `nonce` is
/// applied (nonce 1: the base state).
fn slot_value(index: u64, nonce: u64, slot: u64) -> U256 {
    if nonce == 1 {
        U256::from(index + slot + 1)
    } else if contract_slots(nonce).any(|s| s == slot) {
        let word = keccak256([index, nonce, slot].map(u64::to_be_bytes).concat());
        U256::from(u64::from_be_bytes(word[..8].try_into().unwrap()) | 1)
    } else {
        slot_value(index, nonce - 1, slot)
    }
}

/// The change of contract `index` from the state `before` (its nonce, the base's if `None`):
/// the next nonce and three slots, with what the account and slots held as the node's changes
/// say it (`known`).
fn contract_change(index: u64, before: AccountState, known: bool) -> AccountChange {
    let nonce = before.nonce + 1;
    let mut slots: Vec<u64> = contract_slots(nonce).collect();
    slots.sort_unstable();
    let values = |nonce| {
        slots
            .iter()
            .map(|&s| (U256::from(s), slot_value(index, nonce, s)))
            .collect()
    };
    AccountChange {
        storage_before: if known {
            values(before.nonce)
        } else {
            Vec::new()
        },
        ..change(index, known.then_some(before), nonce, values(nonce))
    }
}

/// What the base accounts hold now, as the node knows every account before its block (a
/// change's `before`; `TRIE_BENCH_BEFORE=0` leaves it out, to measure without): `base_account`'s
/// state unless a block changed it. Beside a kept base (`TRIE_BENCH_DIR`), the changes each
/// write-out commits are appended to a file (index, nonce, contract: 17 bytes), so that later
/// runs know them too.
struct Known {
    now: HashMap<u64, AccountState>,
    /// Changes of the blocks not yet written out.
    unflushed: Vec<(u64, AccountState)>,
    file: Option<std::fs::File>,
    hints: bool,
}

impl Known {
    fn open(path: Option<std::path::PathBuf>) -> Self {
        let mut known = Self {
            now: HashMap::new(),
            unflushed: Vec::new(),
            file: None,
            hints: std::env::var("TRIE_BENCH_BEFORE").as_deref() != Ok("0"),
        };
        let Some(path) = path else {
            return known;
        };
        let records = std::fs::read(&path).unwrap_or_default();
        for record in records.chunks_exact(17) {
            let index = u64::from_le_bytes(record[..8].try_into().unwrap());
            let nonce = u64::from_le_bytes(record[8..16].try_into().unwrap());
            known
                .now
                .insert(index, state(index, nonce, record[16] == 1));
        }
        // Rewritten with one record an account (in a new file, then renamed over the old one),
        // so that it grows with the accounts changed rather than with every run's changes.
        let rewritten = path.with_extension("changed-new");
        known.file = Some(std::fs::File::create(&rewritten).unwrap());
        known.unflushed = known.now.iter().map(|(i, info)| (*i, *info)).collect();
        known.flushed();
        std::fs::rename(&rewritten, &path).unwrap();
        known
    }

    fn before(&self, index: u64) -> Option<AccountState> {
        self.hints.then(|| self.now(index))
    }

    /// What base account `index` holds now.
    fn now(&self, index: u64) -> AccountState {
        let base = || base_account(index).info.unwrap();
        self.now.get(&index).copied().unwrap_or_else(base)
    }

    /// A block of `changes` to base accounts `indices` was applied (not yet written out).
    fn applied(&mut self, indices: &[u64], changes: &[AccountChange]) {
        for (index, change) in indices.iter().zip(changes) {
            let info = change.info.unwrap();
            self.now.insert(*index, info);
            self.unflushed.push((*index, info));
        }
    }

    /// The blocks applied so far are written out.
    fn flushed(&mut self) {
        let mut records = Vec::with_capacity(self.unflushed.len() * 17);
        for (index, info) in self.unflushed.drain(..) {
            records.extend(index.to_le_bytes());
            records.extend(info.nonce.to_le_bytes());
            records.push(u8::from(info.code_hash != KECCAK_EMPTY));
        }
        if let Some(file) = &mut self.file {
            file.write_all(&records).unwrap();
        }
    }
}

/// A block: 700 balance/nonce updates of existing accounts (900 without new accounts), 100
/// storage writes into existing contracts (3 slots each), 200 new accounts if `new_accounts`.
/// Returns the changes and the base accounts they change, in order.
fn block(
    rng: &mut StdRng,
    known: &Known,
    existing: u64,
    new_accounts: bool,
) -> (Vec<AccountChange>, Vec<u64>) {
    let mut changes = Vec::with_capacity(BLOCK_ACCOUNTS);
    let mut indices = Vec::with_capacity(BLOCK_ACCOUNTS);
    let updates = if new_accounts { 700 } else { 900 };
    for _ in 0..updates {
        let index = rng.gen_range(0..existing);
        changes.push(change(
            index,
            known.before(index),
            rng.gen_range(2..100),
            Vec::new(),
        ));
        indices.push(index);
    }
    for _ in 0..100 {
        let index = rng.gen_range(0..existing / 10) * 10;
        changes.push(contract_change(index, known.now(index), known.hints));
        indices.push(index);
    }
    for _ in 0..if new_accounts { 200 } else { 0 } {
        changes.push(change(
            rng.gen_range(existing..u64::MAX / 2),
            None,
            0,
            Vec::new(),
        ));
    }
    (changes, indices)
}

/// Counts store reads and writes.
struct Counting<'a, S> {
    inner: &'a mut S,
    reads: Cell<usize>,
    writes: usize,
}

impl<S: TrieStore> TrieStore for Counting<'_, S> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TrieError> {
        self.reads.set(self.reads.get() + 1);
        self.inner.get(key)
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), TrieError> {
        self.writes += 1;
        self.inner.put(key, value)
    }
    fn delete(&mut self, key: &[u8]) -> Result<(), TrieError> {
        self.writes += 1;
        self.inner.delete(key)
    }
    fn delete_prefix(&mut self, prefix: &[u8]) -> Result<(), TrieError> {
        self.writes += 1;
        self.inner.delete_prefix(prefix)
    }
}

/// Counts the reads that reach the store, from any thread.
struct ReadCount<S> {
    table: S,
    reads: AtomicUsize,
}

impl<S: TrieStore> TrieStore for ReadCount<S> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TrieError> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.table.get(key)
    }
}

/// Print how many store operations one block costs (outside of any measurement).
fn report_ops<S: TrieStore>(store: &mut S, changes: &[AccountChange], label: &str) {
    let mut counting = Counting {
        inner: store,
        reads: Cell::new(0),
        writes: 0,
    };
    apply_changes(&mut counting, changes).unwrap();
    eprintln!(
        "{label}: one {}-account block = {} store reads, {} store writes",
        changes.len(),
        counting.reads.get(),
        counting.writes
    );
}

fn build_base(db: &Database, accounts: u64) {
    let mut start = 0;
    while start < accounts {
        let end = (start + BUILD_BATCH).min(accounts);
        let changes: Vec<_> = (start..end).map(base_account).collect();
        let mut tx = db.begin_write().unwrap();
        tx.set_durability(Durability::None).unwrap();
        {
            let mut table = tx.open_table(TRIE_NODES).unwrap();
            apply_changes(&mut table, &changes).unwrap();
        }
        tx.commit().unwrap();
        start = end;
    }
    let mut tx = db.begin_write().unwrap();
    tx.set_durability(Durability::Immediate).unwrap();
    tx.commit().unwrap();
}

fn sizes() -> Vec<u64> {
    std::env::var("TRIE_BENCH_SIZES")
        .ok()
        .map(|s| {
            s.split(',')
                .map(|n| n.trim().parse().expect("size"))
                .collect()
        })
        .unwrap_or_else(|| vec![10_000, 100_000, 1_000_000])
}

fn apply_block_redb(c: &mut Criterion) {
    // The node's split of its `--db-cache-size`, by default the node's default
    // (`TRIE_BENCH_DB_CACHE_MIB` sets it; `TRIE_BENCH_TRIE_CACHE` sets the node cache's share in
    // bytes, 0 turns it off; redb gets the rest).
    let cache = std::env::var("TRIE_BENCH_DB_CACHE_MIB")
        .ok()
        .map_or(DEFAULT_DB_CACHE_BYTES, |v| {
            v.parse::<usize>().expect("TRIE_BENCH_DB_CACHE_MIB in MiB") << 20
        });
    let trie_cache = std::env::var("TRIE_BENCH_TRIE_CACHE")
        .ok()
        .map_or(trie_cache_bytes(cache), |v| {
            v.parse().expect("TRIE_BENCH_TRIE_CACHE in bytes")
        });
    let db_cache = cache - trie_cache.min(cache);
    let mut group = c.benchmark_group("apply_changes_1000_accounts_redb");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    for accounts in sizes() {
        // `TRIE_BENCH_DIR` keeps each size's base state there for the next run (building ten
        // million accounts takes minutes); by default it is built in a temporary directory.
        let temp = tempfile::tempdir().unwrap();
        let kept = std::env::var_os("TRIE_BENCH_DIR").map(std::path::PathBuf::from);
        let file = kept
            .as_deref()
            .unwrap_or(temp.path())
            .join(format!("trie-{accounts}.redb"));
        let started = Instant::now();
        if !file.exists() {
            // Built under another name, so an interrupted build is never taken for a base.
            let building = file.with_extension("building");
            build_base(&open_database(&building, db_cache).unwrap(), accounts);
            std::fs::rename(&building, &file).unwrap();
        }
        let db = open_database(&file, db_cache).unwrap();
        let root = {
            let tx = db.begin_write().unwrap();
            let table = tx.open_table(TRIE_NODES).unwrap();
            state_root(&table).unwrap()
        };
        eprintln!(
            "base state of {accounts} accounts ready in {:?} (root {root})",
            started.elapsed()
        );
        let mut rng = StdRng::seed_from_u64(accounts);
        let mut known = Known::open(kept.map(|_| file.with_extension("changed")));
        {
            let tx = db.begin_write().unwrap();
            let mut table = tx.open_table(TRIE_NODES).unwrap();
            report_ops(
                &mut table,
                &block(&mut rng, &known, accounts, true).0,
                &format!("redb {accounts}"),
            );
            drop(table);
            tx.abort().unwrap();
        }
        // The node's path: the subtries on every core, reading the parent trie through a read
        // transaction; then the same block on one thread.
        let read = db.begin_read().unwrap();
        let base = read.open_table(TRIE_NODES).unwrap();
        for (name, parallel) in [("parallel", true), ("serial", false)] {
            group.bench_function(BenchmarkId::new(name, accounts), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let (changes, _) = block(&mut rng, &known, accounts, true);
                        let tx = db.begin_write().unwrap();
                        {
                            let mut table = tx.open_table(TRIE_NODES).unwrap();
                            let started = Instant::now();
                            black_box(if parallel {
                                apply_changes_parallel(&mut table, &base, &changes).unwrap()
                            } else {
                                apply_changes(&mut table, &changes).unwrap()
                            });
                            total += started.elapsed();
                        }
                        tx.abort().unwrap();
                    }
                    total
                })
            });
        }
        // The node's path now: the update reads through the write-back buffer and its node
        // cache and leaves its writes there (both timed: the block's state root); every
        // `DEFAULT_TRIE_BUFFER_BLOCKS`th block writes the buffer out and commits it (the base
        // grows by those blocks' new accounts), followed by a durable commit as the node's next
        // block makes. The node writes out after it has announced the block, so the write-out is
        // not the block's state root: it is timed apart and printed with the store reads.
        // The table was opened from `read`, which it keeps while it lives; each write-out then
        // takes a new one, so the pages those commits free can be reused.
        drop(read);
        let mut buffer = WriteBack::with_node_cache(trie_cache);
        // As the node fills it when it opens (`l2node_storage::Storage::open_with_cache`).
        let started = Instant::now();
        if warms_trie_cache(cache) {
            let read = db.begin_read().unwrap();
            let table = read.open_table(TRIE_NODES).unwrap();
            let mut warmer = buffer.cache_warmer();
            for entry in table.range(l2node_trie::account_trie_keys()).unwrap() {
                let (key, value) = entry.unwrap();
                warmer.take(key.value(), value.value()).unwrap();
            }
        }
        let (cached_bytes, cached_nodes) = buffer.cached();
        eprintln!(
            "node cache: {cached_nodes} nodes, {} MiB, read in {:?}",
            cached_bytes >> 20,
            started.elapsed()
        );
        let mut base = ReadCount {
            table: base,
            reads: AtomicUsize::new(0),
        };
        let (mut updating, mut buffering, mut flushing) =
            (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        // The CPU time the updates took on all threads: the work, which other load on the
        // machine changes less than the wall time.
        let mut update_cpu = Duration::ZERO;
        let (mut blocks, mut pushes, mut flushes) = (0u32, 0u32, 0u32);
        let mut buffered_bytes = 0;
        group.bench_function(BenchmarkId::new("write-back", accounts), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let (changes, indices) = block(&mut rng, &known, accounts, true);
                    let (started, cpu) = (Instant::now(), process_cpu());
                    let (root, writes) = buffer.apply(&base, &changes).unwrap();
                    black_box(root);
                    let updated = started.elapsed();
                    update_cpu += process_cpu() - cpu;
                    known.applied(&indices, &changes);
                    updating += updated;
                    total += updated;
                    blocks += 1;
                    if buffer.blocks() + 1 < DEFAULT_TRIE_BUFFER_BLOCKS {
                        buffered_bytes = buffered_bytes.max(buffer.bytes() + writes.bytes());
                        let started = Instant::now();
                        buffer.push(writes);
                        let buffered = started.elapsed();
                        buffering += buffered;
                        total += buffered;
                        pushes += 1;
                        continue;
                    }
                    let started = Instant::now();
                    let mut tx = db.begin_write().unwrap();
                    tx.set_durability(Durability::None).unwrap();
                    buffer
                        .flush(Some(&writes), &mut tx.open_table(TRIE_NODES).unwrap())
                        .unwrap();
                    tx.commit().unwrap();
                    buffer.flushed(Some(writes));
                    known.flushed();
                    let flushed = started.elapsed();
                    flushing += flushed;
                    flushes += 1;
                    db.begin_write().unwrap().commit().unwrap();
                    base.table = db.begin_read().unwrap().open_table(TRIE_NODES).unwrap();
                }
                total
            })
        });
        if flushes > 0 {
            eprintln!(
                "write-back {accounts}: update {:?} a block ({:?} of CPU, {} store reads), buffering {:?} a block, a flush of {DEFAULT_TRIE_BUFFER_BLOCKS} blocks {:?}, {} KiB of nodes buffered at most, node cache of {} MiB",
                updating / blocks,
                update_cpu / blocks,
                base.reads.load(Ordering::Relaxed) / blocks as usize,
                buffering / pushes.max(1),
                flushing / flushes,
                buffered_bytes / 1024,
                trie_cache >> 20
            );
        }
    }
    group.finish();
}

fn apply_block_memory(c: &mut Criterion) {
    let mut group = c.benchmark_group("apply_changes_1000_accounts_memory");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    for accounts in sizes() {
        let mut store = MemoryTrieStore::new();
        let mut start = 0;
        while start < accounts {
            let end = (start + BUILD_BATCH).min(accounts);
            apply_changes(
                &mut store,
                &(start..end).map(base_account).collect::<Vec<_>>(),
            )
            .unwrap();
            start = end;
        }
        let mut rng = StdRng::seed_from_u64(accounts + 1);
        let mut known = Known::open(None);
        let (changes, indices) = block(&mut rng, &known, accounts, false);
        report_ops(&mut store, &changes, &format!("memory {accounts}"));
        known.applied(&indices, &changes);
        group.bench_function(BenchmarkId::from_parameter(accounts), |b| {
            b.iter_batched(
                || {
                    let (changes, indices) = block(&mut rng, &known, accounts, false);
                    known.applied(&indices, &changes);
                    changes
                },
                |changes| black_box(apply_changes(&mut store, &changes).unwrap()),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn main() {
    l2node_node::tune_allocator();
    let mut c = Criterion::default().configure_from_args();
    apply_block_redb(&mut c);
    apply_block_memory(&mut c);
    c.final_summary();
}

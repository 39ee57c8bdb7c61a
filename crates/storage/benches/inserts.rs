//! What a random insert into a large redb table costs, and whether batching blocks into fewer
//! write transactions changes it: a table is filled with `BENCH_FILL` random 32-byte keys
//! (default 1,000,000; the shape of the transaction index, which a transfer to a new account
//! shares with the accounts and account-history tables), then 200 blocks of 1,400 random keys
//! are inserted with a commit every `BENCH_BATCH` blocks, as given (`1,8,25` by default) and
//! sorted. Prints µs per insert. A bench binary (not criterion).
//!
//! `cargo bench -p l2node-storage --bench inserts`

use std::time::Instant;

use redb::{Database, Durability, TableDefinition};

/// The node binary's allocator (`crates/cli/src/main.rs`): the figures are the node's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TABLE: TableDefinition<&[u8; 32], (u64, u32)> = TableDefinition::new("keys");
/// Keys a block inserts: a block of 1,400 transfers.
const PER_BLOCK: usize = 1_400;
/// Blocks measured.
const BLOCKS: usize = 200;

/// xorshift64: reproducible keys without a dependency.
fn key(state: &mut u64) -> [u8; 32] {
    let mut k = [0u8; 32];
    for chunk in k.chunks_mut(8) {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        chunk.copy_from_slice(&state.to_le_bytes());
    }
    k
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.into())
}

fn run(fill: usize, batch: usize, sorted: bool) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    // The node's default page cache.
    let db = Database::builder()
        .set_cache_size(256 << 20)
        .create(dir.path().join("bench.redb"))
        .unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15;
    let insert = |db: &Database, keys: &mut Vec<([u8; 32], u64, u32)>| {
        if sorted {
            keys.sort_unstable_by_key(|k| k.0);
        }
        let mut tx = db.begin_write().unwrap();
        tx.set_durability(Durability::None).unwrap();
        {
            let mut table = tx.open_table(TABLE).unwrap();
            for (k, block, i) in keys.drain(..) {
                table.insert(&k, (block, i)).unwrap();
            }
        }
        tx.commit().unwrap();
    };
    let mut keys = Vec::new();
    for block in 0..fill / PER_BLOCK {
        keys.extend((0..PER_BLOCK).map(|i| (key(&mut state), block as u64, i as u32)));
        insert(&db, &mut keys);
    }
    let started = Instant::now();
    for block in 0..BLOCKS {
        keys.extend((0..PER_BLOCK).map(|i| (key(&mut state), block as u64, i as u32)));
        if (block + 1) % batch == 0 || block + 1 == BLOCKS {
            insert(&db, &mut keys);
        }
    }
    started.elapsed().as_secs_f64() * 1e6 / (BLOCKS * PER_BLOCK) as f64
}

fn main() {
    let fill: usize = env_or("BENCH_FILL", "1000000").parse().expect("BENCH_FILL");
    for batch in env_or("BENCH_BATCH", "1,8,25").split(',') {
        let batch: usize = batch.trim().parse().expect("BENCH_BATCH");
        for sorted in [false, true] {
            let us = run(fill, batch.max(1), sorted);
            println!(
                "{fill} keys, a commit every {batch} blocks of {PER_BLOCK}{}: {us:.2} µs an insert",
                if sorted { ", sorted" } else { "" }
            );
        }
    }
}

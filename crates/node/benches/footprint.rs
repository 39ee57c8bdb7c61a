//! Disk per transaction: fills a dev chain with ETH transfers, each to a new address, in blocks
//! built and committed the way the miner does, then prints where the database's bytes go (the
//! tables of `l2node db stats`) and the file's size.
//!
//! `cargo bench -p l2node-node --bench footprint` (env: BENCH_FOOTPRINT_TXS, default 100,000;
//! BENCH_TXS_PER_BLOCK, default 1,400: 320,000 transfers in 228 blocks is the chain the
//! footprint issue measured; BENCH_HISTORY_WINDOW: a pruned node keeping that many blocks of
//! state history, at least 128). It prints the file's size at every tenth of the run: an
//! archive grows with the chain, a pruned node's history stops growing once the window is full.

use std::{os::unix::fs::MetadataExt as _, time::Instant};

use l2node_storage::human_size;

/// The node binary's allocator (`crates/cli/src/main.rs`): the figures are the node's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::{env_or, fill_with_transfers, open_with_window};

fn main() {
    l2node_node::tune_allocator();
    let total = env_or("BENCH_FOOTPRINT_TXS", 100_000);
    let per_block = env_or("BENCH_TXS_PER_BLOCK", 1_400).max(1);
    let dir = tempfile::tempdir().unwrap();
    let window = std::env::var("BENCH_HISTORY_WINDOW")
        .ok()
        .and_then(|v| v.parse().ok());
    let chain = open_with_window(dir.path(), window);
    let on_disk = || {
        std::fs::metadata(dir.path().join("chain.redb"))
            .map(|m| m.blocks() * 512)
            .unwrap_or(0)
    };
    let start = Instant::now();
    let mut next_report = total / 10;
    fill_with_transfers(&chain, total, per_block, |done| {
        if done >= next_report {
            next_report += total / 10;
            let stats = chain.storage().stats().unwrap();
            println!(
                "block {}: {done} transfers, chain.redb {} on disk, tables {}",
                chain.head().header.number,
                human_size(on_disk()),
                human_size(stats.total())
            );
        }
    });
    let done = total;
    let secs = start.elapsed().as_secs_f64();
    let head = chain.head().header.number;
    // As a clean stop leaves it: the trie nodes of the last blocks written too.
    chain.storage().flush_trie().unwrap();
    let stats = chain.storage().stats().unwrap();
    drop(chain);
    let file = std::fs::metadata(dir.path().join("chain.redb")).unwrap();
    let mode = window.map_or("archive".to_owned(), |w| {
        format!("history window {w} blocks")
    });
    println!(
        "\nfootprint ({mode}): {done} transfers to new addresses in {head} blocks ({secs:.1} s \
         to sign and produce); chain.redb {} on disk ({} apparent), {:.0} B per transfer on \
         disk\n",
        human_size(file.blocks() * 512),
        human_size(file.len()),
        (file.blocks() * 512) as f64 / done as f64,
    );
    print!("{stats}");
}

//! Disk per transaction: fills a dev chain with ETH transfers, each to a new address, in blocks
//! built and committed the way the miner does, then prints where the database's bytes go (the
//! tables of `l2node db stats`) and the file's size.
//!
//! `cargo bench -p l2node-node --bench footprint` (env: BENCH_FOOTPRINT_TXS, default 100,000;
//! BENCH_TXS_PER_BLOCK, default 1,400: 320,000 transfers in 228 blocks is the chain the
//! footprint issue measured).

use std::{os::unix::fs::MetadataExt as _, time::Instant};

use alloy_primitives::{Bytes, TxKind};
use l2node_node::dev::dev_accounts;
use l2node_storage::human_size;

mod common;
use common::{env_or, fresh, open, produce, sign};

fn main() {
    let total = env_or("BENCH_FOOTPRINT_TXS", 100_000);
    let per_block = env_or("BENCH_TXS_PER_BLOCK", 1_400).max(1);
    let keys = dev_accounts();
    let dir = tempfile::tempdir().unwrap();
    let chain = open(dir.path());
    let mut nonces = vec![0u64; keys.len()];
    let start = Instant::now();
    let mut done = 0;
    while done < total {
        let txs = (done..total.min(done + per_block))
            .map(|i| {
                let k = i % keys.len();
                nonces[k] += 1;
                let n = nonces[k] - 1;
                sign(
                    &keys[k],
                    n,
                    TxKind::Call(fresh(&keys[k], n)),
                    Bytes::new(),
                    1,
                    21_000,
                )
            })
            .collect();
        done += produce(&chain, txs);
    }
    let secs = start.elapsed().as_secs_f64();
    let head = chain.head().header.number;
    let stats = chain.storage().stats().unwrap();
    drop(chain);
    let file = std::fs::metadata(dir.path().join("chain.redb")).unwrap();
    println!(
        "footprint: {done} transfers to new addresses in {head} blocks ({secs:.1} s to sign and \
         produce); chain.redb {} on disk ({} apparent), {:.0} B per transfer on disk\n",
        human_size(file.blocks() * 512),
        human_size(file.len()),
        (file.blocks() * 512) as f64 / done as f64,
    );
    print!("{stats}");
}

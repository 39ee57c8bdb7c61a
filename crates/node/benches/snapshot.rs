//! Joining from a state snapshot: a dev sequencer holds a chain of transfers, each to a new
//! address (one million accounts by default), and serves it over libp2p on loopback; a fresh
//! follower with `--syncmode snap` joins it. Prints the time to the snapshot's head (offers,
//! headers, every chunk fetched, checked against the state root and written, the whole root
//! checked) and to the sequencer's head (the blocks after the snapshot executed).
//!
//! `cargo bench -p l2node-node --bench snapshot` (env: BENCH_SNAPSHOT_ACCOUNTS, default
//! 1,000,000; BENCH_TXS_PER_BLOCK, default 1,400; BENCH_SNAPSHOT_FULL=1 also times a follower
//! that executes every block instead, for comparison; BENCH_DB_CACHE_MIB, the database cache
//! (`--db-cache-size`) of both nodes, default the node's; BENCH_SNAPSHOT_DIR keeps the
//! sequencer's chain there for later runs with the same accounts and block size, which then skip
//! its minutes of signing; RUST_LOG, the nodes' logs).

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use l2node_node::chain::Chain;
use l2node_node::p2p::{self, P2pConfig, P2pHandle, P2pRole};
use l2node_node::pool::{Pool, PoolConfig};

/// The node binary's allocator (`crates/cli/src/main.rs`): the figures are the node's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::{env_or, fill_with_transfers, open, process_cpu};
use l2node_node::test_utils::produce_block as produce;

async fn serve(
    dir: &std::path::Path,
    chain: Arc<Chain>,
    role: P2pRole,
    boot: Vec<p2p::Multiaddr>,
    snap: bool,
) -> P2pHandle {
    let cfg = P2pConfig {
        host: "127.0.0.1".parse().unwrap(),
        port: 0,
        bootnodes: boot,
        max_peers: 25,
        key_path: dir.join("p2p.key"),
        role,
        snap_sync: snap,
    };
    let pool = Arc::new(Pool::new(PoolConfig::default()).unwrap());
    p2p::spawn(cfg, chain, pool).await.unwrap()
}

/// Starts a follower of `boot` and returns when its head is `head`: (time to the snapshot's
/// head when it joined from one, time to `head`).
async fn follow(
    boot: p2p::Multiaddr,
    head: u64,
    snap: bool,
) -> (Option<(u64, Duration)>, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let chain = Arc::new(open(dir.path()));
    let started = Instant::now();
    let handle = serve(
        dir.path(),
        chain.clone(),
        P2pRole::Follower,
        vec![boot],
        snap,
    )
    .await;
    while chain.head().header.number < head {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let done = started.elapsed();
    // The join is reported just after the head moved to the snapshot's block (the report
    // times the whole join): a head seen in between is not yet a join.
    let mut joined = handle.status().snapshot_join();
    let reported = Instant::now();
    while snap && joined.is_none() && reported.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        joined = handle.status().snapshot_join();
    }
    if let Some(join) = joined {
        println!(
            "  snapshot of block {}: {} accounts in {} chunks ({} refused)",
            join.number, join.accounts, join.chunks, join.refused
        );
    }
    handle.stop().await;
    (joined.map(|j| (j.number, j.elapsed)), done)
}

fn main() {
    l2node_node::tune_allocator();
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    let accounts = env_or("BENCH_SNAPSHOT_ACCOUNTS", 1_000_000);
    let per_block = env_or("BENCH_TXS_PER_BLOCK", 1_400).max(1);
    let temp = tempfile::tempdir().unwrap();
    let dir = match std::env::var_os("BENCH_SNAPSHOT_DIR") {
        Some(kept) => std::path::PathBuf::from(kept).join(format!("{accounts}-{per_block}")),
        None => temp.path().to_path_buf(),
    };
    // A kept chain is marked done once filled, so an interrupted fill is never taken for one.
    let filled = dir.join("filled");
    let reused = filled.exists();
    if !reused && dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    let chain = Arc::new(open(&dir));
    let start = Instant::now();
    if !reused {
        fill_with_transfers(&chain, accounts, per_block, |_| {});
        // Empty blocks up to a multiple of the snapshot interval: the follower then has no
        // block to execute after the snapshot, and the time is the snapshot's alone.
        while !chain
            .head()
            .header
            .number
            .is_multiple_of(l2node_node::constants::SNAPSHOT_INTERVAL)
        {
            produce(&chain, Vec::new());
        }
        std::fs::write(&filled, b"").unwrap();
    }
    let done = accounts;
    let head = chain.head().header.number;
    if reused {
        println!("sequencer: {done} transfers to new addresses in {head} blocks (kept from an earlier run)");
    } else {
        println!(
            "sequencer: {done} transfers to new addresses in {head} blocks ({:.1} s to sign and produce)",
            start.elapsed().as_secs_f64()
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let seq = serve(&dir, chain.clone(), P2pRole::Sequencer, vec![], false).await;
        let boot = seq.local_addr().clone();
        let (joined, total) = follow(boot.clone(), head, true).await;
        let (number, at) = joined.expect("the follower joined from a snapshot");
        println!(
            "snapshot join: head at the snapshot's block {number} after {:.1} s, at the sequencer's head {head} after {:.1} s",
            at.as_secs_f64(),
            total.as_secs_f64()
        );
        if std::env::var("BENCH_SNAPSHOT_FULL").is_ok_and(|v| v == "1") {
            // The sync is bound by the machine's cores (recovery and import together): the CPU
            // it took says how much of a run's time was the machine being slower that hour.
            let cpu = process_cpu();
            let (_, full) = follow(boot, head, false).await;
            let cpu = (process_cpu() - cpu).as_secs_f64();
            println!(
                "full sync (every block executed): {head} blocks after {:.1} s ({:.0} tx/s), \
                 {cpu:.1} s of CPU ({:.2} cores on average, the sequencer's serving included)",
                full.as_secs_f64(),
                done as f64 / full.as_secs_f64(),
                cpu / full.as_secs_f64()
            );
        }
        seq.stop().await;
    });
}

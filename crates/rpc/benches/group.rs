//! A sequencer alone against a sequencer that leads a group on etcd (started here on loopback):
//! what the group's log costs. A bench binary (not criterion): one line per result.
//!
//! - Throughput at 1 s blocks: premium transfers from the ten dev accounts kept queued in the
//!   pool, transactions mined per second over `BENCH_GROUP_SECS` seconds.
//! - Block latency with `--block-time 0`: one transfer at a time, from the pool taking it to
//!   its block being committed (built, appended to the group's log, stored), p50 and p99 over
//!   `BENCH_GROUP_BLOCKS` blocks.
//!
//! `cargo bench -p l2node-rpc --bench group` (needs `etcd`: `apt-get install etcd-server`).

use std::{
    path::Path,
    time::{Duration, Instant},
};

use alloy_consensus::{transaction::Recovered, TxEip1559, TxEnvelope};
use alloy_primitives::{Address, TxKind, U256};
use l2node_launch::{GroupConfig, NodeConfig, NodeHandle};
use l2node_node::dev::dev_accounts;
use l2node_node::test_utils;

/// The node binary's allocator (`crates/cli/src/main.rs`): the figures are the node's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config(dir: &Path, block_time: Duration, group: Option<GroupConfig>) -> NodeConfig {
    NodeConfig {
        group,
        ..NodeConfig::dev(dir, block_time)
    }
}

/// The dev accounts' keys, derived once (from the mnemonic: a key derivation per call).
fn keys() -> &'static [alloy_signer_local::PrivateKeySigner] {
    static KEYS: std::sync::OnceLock<Vec<alloy_signer_local::PrivateKeySigner>> =
        std::sync::OnceLock::new();
    KEYS.get_or_init(dev_accounts)
}

/// A premium transfer (fees paid: never limited by a Karma quota).
fn transfer(from: usize, nonce: u64) -> Recovered<TxEnvelope> {
    let tx = TxEip1559 {
        chain_id: l2node_node::constants::DEV_CHAIN_ID,
        nonce,
        gas_limit: 21_000,
        max_fee_per_gas: 50_000_000_000,
        max_priority_fee_per_gas: 20_000_000_000,
        to: TxKind::Call(Address::repeat_byte(0x42)),
        value: U256::from(1),
        ..Default::default()
    };
    test_utils::sign(&keys()[from], tx)
}

fn add(node: &NodeHandle, tx: Recovered<TxEnvelope>) {
    let state = node.chain.storage().state_at(None).unwrap();
    node.pool.add(tx, &state, &node.chain.next_block()).unwrap();
}

/// Waits until the node seals (alone at once; in a group once it leads).
async fn until_sealing(node: &NodeHandle) {
    add(node, transfer(9, 0));
    let deadline = Instant::now() + Duration::from_secs(20);
    while node.chain.head().header.number == 0 {
        assert!(Instant::now() < deadline, "the node never sealed");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn throughput(label: &str, group: Option<GroupConfig>, secs: u64) {
    let dir = tempfile::tempdir().unwrap();
    let node = l2node_launch::spawn(config(dir.path(), Duration::from_secs(1), group))
        .await
        .unwrap();
    until_sealing(&node).await;
    // More than the blocks of the run can take (a 30M-gas block holds 1,428 transfers), so
    // the chain, not the feed, sets the rate: nine senders, in nonce order.
    let per_sender = 2_000 * secs as usize / 9 + 1;
    let mut nonces = [0u64; 9];
    let feed = |node: &NodeHandle, nonces: &mut [u64; 9]| {
        for (from, nonce) in nonces.iter_mut().enumerate() {
            while node.pool.status().0 < 4_000 && (*nonce as usize) < per_sender {
                add(node, transfer(from, *nonce));
                *nonce += 1;
            }
        }
    };
    feed(&node, &mut nonces);
    let start_block = node.chain.head().header.number;
    let start = Instant::now();
    let mut mined = 0usize;
    let mut blocks = node.chain.subscribe();
    while start.elapsed() < Duration::from_secs(secs) {
        if let Ok(Ok(b)) = tokio::time::timeout(Duration::from_millis(200), blocks.recv()).await {
            mined += b.block.body.transactions.len();
        }
        feed(&node, &mut nonces);
    }
    let elapsed = start.elapsed().as_secs_f64();
    println!(
        "{label}: 1 s blocks, {mined} transactions in {} blocks over {elapsed:.1} s = {:.0} tx/s",
        node.chain.head().header.number - start_block,
        mined as f64 / elapsed
    );
    node.stop().await;
}

async fn latency(label: &str, group: Option<GroupConfig>, blocks: u64) {
    let dir = tempfile::tempdir().unwrap();
    let node = l2node_launch::spawn(config(dir.path(), Duration::ZERO, group))
        .await
        .unwrap();
    until_sealing(&node).await;
    let mut sealed = node.chain.subscribe();
    let mut latencies = Vec::new();
    for nonce in 0..blocks {
        let at = Instant::now();
        add(&node, transfer(0, nonce));
        loop {
            let b = sealed.recv().await.unwrap();
            if !b.block.body.transactions.is_empty() {
                break;
            }
        }
        latencies.push(at.elapsed());
    }
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e3;
    println!(
        "{label}: block latency (pool to committed block, --block-time 0) over {blocks} blocks: p50 {:.2} ms, p99 {:.2} ms",
        pct(0.5),
        pct(0.99)
    );
    node.stop().await;
}

fn main() {
    l2node_node::tune_allocator();
    // Each group run gets an etcd of its own: a group's log holds its chain's blocks, which a
    // new member of the same chain would import first.
    let Some(etcd) = l2node_group::test_utils::start_etcd() else {
        return;
    };
    let group = |etcd: &l2node_group::test_utils::EtcdServer| {
        Some(GroupConfig {
            endpoints: vec![etcd.url.clone()],
            name: "bench".into(),
            lease: Duration::from_secs(1),
        })
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let secs = env_or("BENCH_GROUP_SECS", 10);
    let blocks = env_or("BENCH_GROUP_BLOCKS", 300);
    rt.block_on(async {
        throughput("alone", None, secs).await;
        throughput("group leader", group(&etcd), secs).await;
        drop(etcd);
        latency("alone", None, blocks).await;
        let etcd = l2node_group::test_utils::start_etcd().expect("etcd started once already");
        latency("group leader", group(&etcd), blocks).await;
    });
}

//! Network benchmarks over real libp2p connections on loopback: follower sync throughput
//! (empty blocks, and blocks of transfers that are re-executed) and gossip latency from the
//! sequencer's seal to the follower's head. A bench binary (not criterion): one line per result.
//!
//! `cargo bench -p l2node-rpc --bench network` (env: BENCH_EMPTY_BLOCKS, BENCH_TRANSFER_BLOCKS,
//! BENCH_TXS_PER_BLOCK, BENCH_GOSSIP_BLOCKS).

use std::{
    path::Path,
    sync::Arc,
    time::{Duration, Instant},
};

use alloy_consensus::{transaction::Recovered, TxEip1559, TxEnvelope};
use alloy_primitives::{Address, TxKind, U256};
use l2node_launch::NodeConfig;
use l2node_launch::NodeHandle;
use l2node_node::chain::Chain;
use l2node_node::chainspec::ChainSpec;
use l2node_node::dev::{dev_accounts, dev_genesis, dev_sequencer};
use l2node_node::p2p::{Multiaddr, P2pConfig, P2pRole};
use l2node_node::test_utils;
use l2node_storage::Storage;

/// The node binary's allocator (`crates/cli/src/main.rs`): the figures are the node's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn spec() -> Arc<ChainSpec> {
    Arc::new(ChainSpec::from_genesis(dev_genesis(0)).unwrap())
}

fn config(dir: &Path, sequencer: bool, bootnodes: Vec<Multiaddr>) -> NodeConfig {
    NodeConfig {
        signer: sequencer.then(dev_sequencer),
        p2p: Some(P2pConfig {
            host: "127.0.0.1".parse().unwrap(),
            port: 0,
            bootnodes,
            max_peers: 25,
            key_path: l2node_launch::p2p_key_path(dir),
            role: if sequencer {
                P2pRole::Sequencer
            } else {
                P2pRole::Follower
            },
            snap_sync: false,
        }),
        ..NodeConfig::dev(dir, Duration::ZERO)
    }
}

fn transfer(from: usize, nonce: u64, to: Address) -> Recovered<TxEnvelope> {
    let tx = TxEip1559 {
        chain_id: l2node_node::constants::DEV_CHAIN_ID,
        nonce,
        gas_limit: 21_000,
        max_fee_per_gas: 1_000_000_000,
        to: TxKind::Call(to),
        value: U256::from(1),
        ..Default::default()
    };
    test_utils::sign(&dev_accounts()[from], tx)
}

/// Writes `blocks` blocks of `per_block` transfers (empty blocks for 0) into a chain in `dir`,
/// the way the miner builds and seals them.
fn build_chain(dir: &Path, blocks: u64, per_block: u64) {
    let chain = Chain::open(Storage::open(&dir.join("chain.redb")).unwrap(), spec()).unwrap();
    let mut nonces = [0u64; 10];
    for n in 0..blocks {
        let txs: Vec<_> = (0..per_block)
            .map(|i| {
                let from = (i % 8) as usize;
                nonces[from] += 1;
                // A new recipient each time: the state grows as on a real chain.
                let to = Address::from_word(alloy_primitives::keccak256(
                    (n * per_block + i).to_be_bytes(),
                ));
                transfer(from, nonces[from] - 1, to)
            })
            .collect();
        test_utils::produce_block(&chain, txs);
    }
}

fn p2p_addr(node: &NodeHandle) -> Multiaddr {
    node.p2p.as_ref().unwrap().local_addr().clone()
}

/// The same import without the network: blocks handed straight to `Chain::import_with`
/// (every block durable, or only each 512th), for comparison.
fn import_only(label: &str, source: &Chain, blocks: u64, per_block: u64) {
    let raw = l2node_node::sync::serve_blocks(source, 1, blocks.min(512)).unwrap();
    for durable_every in [1usize, 512] {
        let dir = tempfile::tempdir().unwrap();
        let chain = Chain::open(
            Storage::open(&dir.path().join("chain.redb")).unwrap(),
            spec(),
        )
        .unwrap();
        let start = Instant::now();
        for (i, r) in raw.iter().enumerate() {
            let block = alloy_rlp::Decodable::decode(&mut &r[..]).unwrap();
            chain
                .import_with(block, (i + 1) % durable_every == 0)
                .unwrap();
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "import {label} without network, durable every {durable_every}: {} blocks in {secs:.3} s = {:.0} blocks/s, {:.0} tx/s",
            raw.len(),
            raw.len() as f64 / secs,
            (raw.len() as u64 * per_block) as f64 / secs
        );
    }
}

/// Serves a prebuilt chain from one node and times a fresh follower syncing all of it.
async fn sync(label: &str, blocks: u64, per_block: u64) {
    let src_dir = tempfile::tempdir().unwrap();
    build_chain(src_dir.path(), blocks, per_block);
    {
        let source = Chain::open(
            Storage::open(&src_dir.path().join("chain.redb")).unwrap(),
            spec(),
        )
        .unwrap();
        import_only(label, &source, blocks, per_block);
    }
    let source = l2node_launch::spawn(config(src_dir.path(), false, vec![]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let follower = l2node_launch::spawn(config(dir.path(), false, vec![p2p_addr(&source)]))
        .await
        .unwrap();
    while follower.chain.head().header.number < blocks {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(follower.chain.head().hash, source.chain.head().hash);
    let txs = blocks * per_block;
    println!(
        "sync {label}: {blocks} blocks ({txs} txs) in {secs:.3} s = {:.0} blocks/s, {:.0} tx/s",
        blocks as f64 / secs,
        txs as f64 / secs
    );
    follower.stop().await;
    source.stop().await;
}

/// One transaction per block on a sequencer; the time from its seal (the sequencer's block
/// notification) to the follower's head.
async fn gossip_latency(blocks: u64) {
    let (sdir, fdir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let seq = l2node_launch::spawn(config(sdir.path(), true, vec![]))
        .await
        .unwrap();
    let fol = l2node_launch::spawn(config(fdir.path(), false, vec![p2p_addr(&seq)]))
        .await
        .unwrap();
    while fol.net.peer_count() == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Gossipsub meshes form on the first heartbeat.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (mut sealed, mut followed) = (seq.chain.subscribe(), fol.chain.subscribe());
    let mut latencies = Vec::new();
    for n in 0..blocks {
        let state = seq.chain.storage().state_at(None).unwrap();
        seq.pool
            .add(
                transfer(0, n, Address::repeat_byte(0x42)),
                &state,
                &seq.chain.next_block(),
            )
            .unwrap();
        drop(state);
        let b = sealed.recv().await.unwrap();
        let at = Instant::now();
        loop {
            let f = followed.recv().await.unwrap();
            if f.block.hash == b.block.hash {
                break;
            }
        }
        latencies.push(at.elapsed());
    }
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e3;
    println!(
        "gossip seal -> follower head over {blocks} blocks: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    fol.stop().await;
    seq.stop().await;
}

fn main() {
    l2node_node::tune_allocator();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        sync("empty blocks", env_or("BENCH_EMPTY_BLOCKS", 10_000), 0).await;
        sync(
            "transfers",
            env_or("BENCH_TRANSFER_BLOCKS", 100),
            env_or("BENCH_TXS_PER_BLOCK", 100),
        )
        .await;
        gossip_latency(env_or("BENCH_GOSSIP_BLOCKS", 300)).await;
    });
}

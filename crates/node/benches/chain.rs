//! Chain throughput: block production and import of ETH transfers and ERC-20 transfers, and
//! cold start of a long chain. A bench binary (not criterion): it prints one line per result.
//!
//! `cargo bench -p l2node-node --bench chain` (env: BENCH_BLOCKS, BENCH_TXS_PER_BLOCK,
//! BENCH_COLD_BLOCKS; BENCH_CHAIN_FROM=<chain.redb> produces blocks on a copy of that chain
//! instead, such as the snapshot bench's kept one). `token.bin` is the init code of
//! `e2e/contracts/Token.sol` as `node e2e/scripts/compile.mjs` builds it (e2e/build/Token.bin).

use std::time::Instant;

use alloy_consensus::{transaction::Recovered, Block, TxEnvelope};
use alloy_primitives::{Address, Bytes, TxKind, U256};
use alloy_signer_local::PrivateKeySigner;
use alloy_sol_types::{sol, SolCall};
use l2node_node::chain::Chain;
use l2node_node::constants::{SYNC_MAX_BLOCKS_PER_RESPONSE, SYNC_MAX_RESPONSE_BYTES};
use l2node_node::dev::dev_accounts;
use l2node_node::pool::{Pool, PoolConfig};
use l2node_node::sync::{import_gossiped, PreparedRange, SyncDurability};

/// The node binary's allocator (`crates/cli/src/main.rs`): the figures are the node's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
use common::{env_or, fresh, next_transfer, open, sign, transfer_to_new};
use l2node_node::test_utils::produce_block as produce;

sol! {
    function transfer(address to, uint256 value) returns (bool);
}

fn report(what: &str, txs: usize, secs: f64) {
    println!(
        "{what}: {txs} txs in {secs:.3} s = {:.0} tx/s",
        txs as f64 / secs
    );
}

/// The next nonce of each of `keys` on `chain`.
fn nonces_of(chain: &Chain, keys: &[PrivateKeySigner]) -> Vec<u64> {
    let state = chain.storage().state_at(None).unwrap();
    keys.iter()
        .map(|k| {
            state
                .account_state(k.address())
                .unwrap()
                .map_or(0, |a| a.nonce)
        })
        .collect()
}

fn run(
    label: &str,
    blocks: usize,
    per_block: usize,
    make: &dyn Fn(&PrivateKeySigner, u64) -> Recovered<TxEnvelope>,
    setup: &dyn Fn(&Chain),
) {
    let keys = dev_accounts();
    let dir = tempfile::tempdir().unwrap();
    let chain = open(dir.path());
    setup(&chain);
    let first = chain.head().header.number + 1;
    let mut nonces = nonces_of(&chain, &keys);
    // Sign everything up front: the pool has recovered senders before the miner sees a tx.
    let batches: Vec<Vec<_>> = (0..blocks)
        .map(|_| {
            (0..per_block)
                .map(|i| {
                    let k = i % keys.len();
                    nonces[k] += 1;
                    make(&keys[k], nonces[k] - 1)
                })
                .collect()
        })
        .collect();
    // When each block is announced, against when it began and when its producer was done
    // (which includes a write-out of the trie buffer after the announcement).
    let mut announced = chain.subscribe();
    let listener = std::thread::spawn(move || {
        (0..blocks)
            .map(|_| {
                announced.blocking_recv().expect("every block is announced");
                Instant::now()
            })
            .collect::<Vec<_>>()
    });
    let (mut began, mut done) = (Vec::new(), Vec::new());
    let start = Instant::now();
    let mut total = 0;
    for b in batches {
        began.push(Instant::now());
        total += produce(&chain, b);
        done.push(Instant::now());
    }
    report(
        &format!("produce {label}"),
        total,
        start.elapsed().as_secs_f64(),
    );
    let announced = listener.join().unwrap();
    let p50_and_max = |ends: &[Instant]| {
        let mut ms: Vec<f64> = began
            .iter()
            .zip(ends)
            .map(|(b, e)| e.duration_since(*b).as_secs_f64() * 1e3)
            .collect();
        ms.sort_by(f64::total_cmp);
        (ms[ms.len() / 2], ms[ms.len() - 1])
    };
    let ((seen_p50, seen_max), (done_p50, done_max)) =
        (p50_and_max(&announced), p50_and_max(&done));
    println!(
        "produce {label}: a block announced {seen_p50:.1} ms after it began (p50), \
         {seen_max:.1} ms at most; producer done after {done_p50:.1} ms (p50), {done_max:.1} ms at most"
    );

    // Import the same blocks into a fresh node: recover senders, execute, verify every root.
    let stored = |n: u64| {
        let b = chain.storage().block(n).unwrap().unwrap();
        Block {
            header: b.header,
            body: b.body,
        }
    };
    let pre: Vec<Block<TxEnvelope>> = (1..first).map(stored).collect();
    let blocks_to_import: Vec<Block<TxEnvelope>> =
        (first..=chain.head().header.number).map(stored).collect();
    let fresh_follower = |dir: &tempfile::TempDir| {
        let node = open(dir.path());
        for b in &pre {
            node.import(b.clone()).unwrap();
        }
        node
    };
    let dir2 = tempfile::tempdir().unwrap();
    let follower = fresh_follower(&dir2);
    let start = Instant::now();
    for b in &blocks_to_import {
        follower.import(b.clone()).unwrap();
    }
    report(
        &format!("import  {label}, block by block"),
        total,
        start.elapsed().as_secs_f64(),
    );
    assert_eq!(follower.head().hash, chain.head().hash);

    // As a follower syncs: encoded blocks in ranges as large as a peer's answer, senders
    // recovered ahead of execution.
    let dir3 = tempfile::tempdir().unwrap();
    let syncer = fresh_follower(&dir3);
    let mut ranges: Vec<Vec<Bytes>> = vec![Vec::new()];
    let mut range_bytes = 0;
    for b in &blocks_to_import {
        let raw = Bytes::from(alloy_rlp::encode(b));
        let last = ranges.last().unwrap();
        if !last.is_empty()
            && (range_bytes + raw.len() > SYNC_MAX_RESPONSE_BYTES
                || last.len() as u64 == SYNC_MAX_BLOCKS_PER_RESPONSE)
        {
            ranges.push(Vec::new());
            range_bytes = 0;
        }
        range_bytes += raw.len();
        ranges.last_mut().unwrap().push(raw);
    }
    // As the node's importer does: the disk waited for every few seconds, and at the end.
    let start = Instant::now();
    let mut durability = SyncDurability::default();
    let range_count = ranges.len();
    // The next range is prepared while this one is imported, as a node's queued ranges are.
    let mut ranges = ranges.into_iter().map(PreparedRange::start);
    let mut next = ranges.next();
    while let Some(range) = next {
        next = ranges.next();
        durability.import_range(&syncer, range).unwrap();
    }
    durability.idle(&syncer);
    report(
        &format!("sync    {label}, {range_count} ranges"),
        total,
        start.elapsed().as_secs_f64(),
    );
    assert_eq!(syncer.head().hash, chain.head().hash);

    // As a live follower imports gossiped blocks whose transactions it pooled when they were
    // gossiped before them: senders from the pool. Pooling is not timed (it happened earlier,
    // off the block's path), each import is durable as block by block.
    let dir4 = tempfile::tempdir().unwrap();
    let live = fresh_follower(&dir4);
    let pool = Pool::new(PoolConfig::default()).unwrap();
    let mut secs = 0.0;
    for (n, b) in (first..).zip(&blocks_to_import) {
        let state = live.storage().state_at(None).unwrap();
        let next = live.next_block();
        let senders = chain.storage().block(n).unwrap().unwrap().senders;
        for (tx, sender) in b.body.transactions.iter().zip(senders) {
            pool.add(Recovered::new_unchecked(tx.clone(), sender), &state, &next)
                .unwrap();
        }
        drop(state);
        let raw = alloy_rlp::encode(b);
        let start = Instant::now();
        import_gossiped(&live, &pool, &raw).unwrap();
        secs += start.elapsed().as_secs_f64();
        let hashes: Vec<_> = b.body.transactions.iter().map(|tx| *tx.tx_hash()).collect();
        pool.remove(&hashes);
    }
    report(&format!("gossip  {label}, senders pooled"), total, secs);
    assert_eq!(live.head().hash, chain.head().hash);
}

fn cold_start(blocks: usize) {
    let dir = tempfile::tempdir().unwrap();
    {
        let chain = open(dir.path());
        let key = &dev_accounts()[0];
        for n in 0..blocks {
            produce(
                &chain,
                vec![sign(
                    key,
                    n as u64,
                    TxKind::Call(Address::repeat_byte(1)),
                    Bytes::new(),
                    1,
                    21_000,
                )],
            );
        }
    }
    let start = Instant::now();
    let chain = open(dir.path());
    let opened = start.elapsed();
    assert_eq!(chain.head().header.number, blocks as u64);
    println!(
        "cold start with {blocks} blocks: {:.1} ms",
        opened.as_secs_f64() * 1e3
    );
}

/// Block production on a kept chain (`BENCH_CHAIN_FROM`, a `chain.redb`, copied first): how
/// long a block of new-account transfers takes from build to commit on a large state.
fn produce_on(from: &std::path::Path, blocks: usize, per_block: usize) {
    let keys = dev_accounts();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(from, dir.path().join("chain.redb")).unwrap();
    let started = Instant::now();
    let chain = open(dir.path());
    let opened = started.elapsed();
    let mut nonces = nonces_of(&chain, &keys);
    let batches: Vec<Vec<_>> = (0..blocks)
        .map(|_| {
            (0..per_block)
                .map(|i| next_transfer(&keys, &mut nonces, i))
                .collect()
        })
        .collect();
    let mut ms: Vec<f64> = batches
        .into_iter()
        .map(|txs| {
            let started = Instant::now();
            produce(&chain, txs);
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    ms.sort_by(f64::total_cmp);
    println!(
        "produce on a copy of {} (opened in {:.1} s): {blocks} blocks of {per_block} new-account transfers, {:.1} ms a block (p50), {mean:.1} ms (mean, write-outs of the trie buffer included)",
        from.display(),
        opened.as_secs_f64(),
        ms[ms.len() / 2],
    );
}

fn main() {
    l2node_node::tune_allocator();
    if let Some(from) = std::env::var_os("BENCH_CHAIN_FROM") {
        produce_on(
            std::path::Path::new(&from),
            env_or("BENCH_BLOCKS", 64),
            env_or("BENCH_TXS_PER_BLOCK", 1_000),
        );
        return;
    }
    // 64 blocks: the trie's write-back buffer is written out at least once (every 64 blocks, or
    // sooner once it holds `DEFAULT_TRIE_BUFFER_BYTES` of nodes).
    let blocks = env_or("BENCH_BLOCKS", 64);
    let per_block = env_or("BENCH_TXS_PER_BLOCK", 1_000);
    // Every transfer pays a new account, so each block grows the state trie by `per_block` leaves.
    run(
        "ETH transfers",
        blocks,
        per_block,
        &transfer_to_new,
        &|_| {},
    );

    let token_code: Bytes = include_str!("token.bin").trim().parse().unwrap();
    let deployer = dev_accounts()[0].clone();
    let token = deployer.address().create(0);
    let init = {
        let mut code = token_code.to_vec();
        code.extend_from_slice(&U256::MAX.to_be_bytes::<32>());
        Bytes::from(code)
    };
    let setup = |chain: &Chain| {
        // Deploy, then give every dev account tokens to send.
        let mut txs = vec![sign(
            &deployer,
            0,
            TxKind::Create,
            init.clone(),
            0,
            3_000_000,
        )];
        for (i, k) in dev_accounts().iter().enumerate().skip(1) {
            let call = transferCall {
                to: k.address(),
                value: U256::from(1u128 << 100),
            }
            .abi_encode();
            txs.push(sign(
                &deployer,
                i as u64,
                TxKind::Call(token),
                call.into(),
                0,
                100_000,
            ));
        }
        assert_eq!(produce(chain, txs), 10);
    };
    // A transfer to a fresh holder costs ~51k gas: 400 of them fit a 30M-gas block.
    run(
        "ERC-20 transfers",
        blocks,
        per_block.min(400),
        &|k, n| {
            let call = transferCall {
                to: fresh(k, n),
                value: U256::from(1),
            }
            .abi_encode();
            sign(k, n, TxKind::Call(token), call.into(), 0, 70_000)
        },
        &setup,
    );
    cold_start(env_or("BENCH_COLD_BLOCKS", 10_000));
}

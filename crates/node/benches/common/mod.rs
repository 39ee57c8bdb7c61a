//! What the chain benches share: a dev chain in a directory, signed transfers, blocks built
//! and committed the way the miner does.
#![allow(dead_code)] // each bench uses its own part

use std::sync::Arc;

use alloy_consensus::{transaction::Recovered, TxEip1559, TxEnvelope};
use alloy_primitives::{Address, Bytes, TxKind, U256};
use alloy_signer_local::PrivateKeySigner;
use alloy_sol_types::SolValue;
use l2node_node::chain::Chain;
use l2node_node::chainspec::ChainSpec;
use l2node_node::dev::dev_genesis;
use l2node_node::test_utils;
use l2node_storage::{
    Storage, DEFAULT_DB_CACHE_BYTES, DEFAULT_TRIE_BUFFER_BLOCKS, DEFAULT_TRIE_BUFFER_BYTES,
};

/// CPU time the process has taken so far, on all its threads (ended ones included).
pub(crate) fn process_cpu() -> std::time::Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for the call to fill.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    std::time::Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

pub(crate) fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub(crate) fn open(dir: &std::path::Path) -> Chain {
    open_with_window(dir, None)
}

/// A dev chain keeping `window` blocks of state history (`None`: an archive).
pub(crate) fn open_with_window(dir: &std::path::Path, window: Option<u64>) -> Chain {
    let spec = Arc::new(ChainSpec::from_genesis(dev_genesis(0)).unwrap());
    // BENCH_TRIE_BUFFER_BLOCKS=1 writes every block's trie with the block (no write-back).
    let trie_blocks = env_or("BENCH_TRIE_BUFFER_BLOCKS", DEFAULT_TRIE_BUFFER_BLOCKS);
    // BENCH_DB_CACHE_MIB: the database cache `--db-cache-size` sets (default the node's).
    let cache = env_or("BENCH_DB_CACHE_MIB", DEFAULT_DB_CACHE_BYTES >> 20) << 20;
    let storage = Storage::open_with_cache(&dir.join("chain.redb"), cache)
        .unwrap()
        .with_history_window(window)
        .with_trie_buffer(trie_blocks, DEFAULT_TRIE_BUFFER_BYTES);
    Chain::open(storage, spec).unwrap()
}

pub(crate) fn sign(
    key: &PrivateKeySigner,
    nonce: u64,
    to: TxKind,
    input: Bytes,
    value: u64,
    gas: u64,
) -> Recovered<TxEnvelope> {
    let tx = TxEip1559 {
        chain_id: l2node_node::constants::DEV_CHAIN_ID,
        nonce,
        gas_limit: gas,
        max_fee_per_gas: 1_000_000_000,
        max_priority_fee_per_gas: 0,
        to,
        value: U256::from(value),
        input,
        access_list: Default::default(),
    };
    test_utils::sign(key, tx)
}

/// A new address for the `n`th transfer of `key`: every transfer pays a new account.
pub(crate) fn fresh(key: &PrivateKeySigner, n: u64) -> Address {
    Address::from_word(alloy_primitives::keccak256((key.address(), n).abi_encode()))
}

/// A transfer of one wei from `key`, with nonce `n`, to a new address.
pub(crate) fn transfer_to_new(key: &PrivateKeySigner, n: u64) -> Recovered<TxEnvelope> {
    sign(key, n, TxKind::Call(fresh(key, n)), Bytes::new(), 1, 21_000)
}

/// The `i`th of a run of transfers to new addresses from `keys` in turn; `nonces` holds each
/// key's next nonce.
pub(crate) fn next_transfer(
    keys: &[PrivateKeySigner],
    nonces: &mut [u64],
    i: usize,
) -> Recovered<TxEnvelope> {
    let k = i % keys.len();
    nonces[k] += 1;
    transfer_to_new(&keys[k], nonces[k] - 1)
}

/// Fills `chain` with `total` ETH transfers from the dev accounts, each to a new address, in
/// blocks of `per_block` built and committed the way the miner does; `after_block` sees the
/// transfers done so far after each block.
pub(crate) fn fill_with_transfers(
    chain: &Chain,
    total: usize,
    per_block: usize,
    mut after_block: impl FnMut(usize),
) {
    let keys = l2node_node::dev::dev_accounts();
    let mut nonces = vec![0u64; keys.len()];
    let mut done = 0;
    while done < total {
        let txs = (done..total.min(done + per_block))
            .map(|i| next_transfer(&keys, &mut nonces, i))
            .collect();
        done += test_utils::produce_block(chain, txs);
        after_block(done);
    }
}

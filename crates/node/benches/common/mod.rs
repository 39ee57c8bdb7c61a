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
use l2node_storage::Storage;

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
    let storage = Storage::open(&dir.join("chain.redb"))
        .unwrap()
        .with_history_window(window);
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

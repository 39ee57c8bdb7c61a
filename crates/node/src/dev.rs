//! The built-in development chain of `l2node run --dev`.

use std::collections::BTreeMap;

use alloy_eips::{eip2935, eip4788, eip7002, eip7251};
use alloy_genesis::{CliqueConfig, Genesis, GenesisAccount};
use alloy_primitives::{Address, Bytes, B256, U256};
use alloy_signer_local::{MnemonicBuilder, PrivateKeySigner};

use crate::constants::{
    DEV_ACCOUNT_BALANCE_ETH, DEV_ACCOUNT_COUNT, DEV_CHAIN_ID, DEV_GAS_LIMIT, DEV_MNEMONIC,
    DEV_SEQUENCER_KEY,
};

/// The funded dev accounts: the standard test mnemonic, indexes 0..10 (as anvil and hardhat).
pub fn dev_accounts() -> Vec<PrivateKeySigner> {
    (0..DEV_ACCOUNT_COUNT)
        .map(|i| MnemonicBuilder::from_phrase_nth(DEV_MNEMONIC, i))
        .collect()
}

/// The key that seals dev blocks.
pub fn dev_sequencer() -> PrivateKeySigner {
    PrivateKeySigner::from_bytes(&B256::from(DEV_SEQUENCER_KEY)).expect("constant key is valid")
}

/// The dev genesis: every fork through Prague at block 0, zero base fee, Clique-style sealing by
/// [`dev_sequencer`], the system contracts those forks call, and the funded dev accounts.
pub fn dev_genesis(block_period: u64) -> Genesis {
    let mut alloc: BTreeMap<Address, GenesisAccount> = dev_accounts()
        .iter()
        .map(|s| {
            let balance =
                U256::from(DEV_ACCOUNT_BALANCE_ETH) * U256::from(10u64).pow(U256::from(18));
            (s.address(), GenesisAccount::default().with_balance(balance))
        })
        .collect();
    for (address, code) in [
        (eip4788::BEACON_ROOTS_ADDRESS, &eip4788::BEACON_ROOTS_CODE),
        (
            eip2935::HISTORY_STORAGE_ADDRESS,
            &eip2935::HISTORY_STORAGE_CODE,
        ),
        (
            eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS,
            &eip7002::WITHDRAWAL_REQUEST_PREDEPLOY_CODE,
        ),
        (
            eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS,
            &eip7251::CONSOLIDATION_REQUEST_PREDEPLOY_CODE,
        ),
    ] {
        alloc.insert(
            address,
            GenesisAccount::default()
                .with_nonce(Some(1))
                .with_code(Some(code.clone())),
        );
    }
    let mut extra = vec![0u8; 32];
    extra.extend_from_slice(dev_sequencer().address().as_slice());
    extra.extend_from_slice(&[0u8; 65]);

    let mut config = alloy_genesis::ChainConfig {
        chain_id: DEV_CHAIN_ID,
        homestead_block: Some(0),
        eip150_block: Some(0),
        eip155_block: Some(0),
        eip158_block: Some(0),
        byzantium_block: Some(0),
        constantinople_block: Some(0),
        petersburg_block: Some(0),
        istanbul_block: Some(0),
        berlin_block: Some(0),
        london_block: Some(0),
        merge_netsplit_block: Some(0),
        terminal_total_difficulty: Some(U256::ZERO),
        terminal_total_difficulty_passed: true,
        shanghai_time: Some(0),
        cancun_time: Some(0),
        prague_time: Some(0),
        clique: Some(CliqueConfig {
            period: Some(block_period),
            epoch: Some(30_000),
        }),
        ..Default::default()
    };
    config
        .extra_fields
        .insert("zeroBaseFee".into(), serde_json::Value::Bool(true));
    Genesis {
        config,
        nonce: 0,
        timestamp: 0,
        extra_data: Bytes::from(extra),
        gas_limit: DEV_GAS_LIMIT,
        difficulty: U256::from(1),
        mix_hash: B256::ZERO,
        coinbase: Address::ZERO,
        alloc,
        base_fee_per_gas: Some(0),
        excess_blob_gas: Some(0),
        blob_gas_used: Some(0),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_accounts_are_the_standard_test_accounts() {
        let accounts = dev_accounts();
        assert_eq!(accounts.len(), 10);
        assert_eq!(
            accounts[0].address(),
            "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
                .parse::<Address>()
                .unwrap()
        );
    }

    #[test]
    fn dev_genesis_funds_accounts_and_names_the_sequencer() {
        let g = dev_genesis(2);
        assert_eq!(g.config.chain_id, DEV_CHAIN_ID);
        assert_eq!(&g.extra_data[32..52], dev_sequencer().address().as_slice());
        assert!(g.alloc.contains_key(&eip4788::BEACON_ROOTS_ADDRESS));
    }
}

//! The built-in development chain of `l2node run --dev`.

use std::collections::BTreeMap;

use alloy_eips::{eip2935, eip4788, eip7002, eip7251};
use alloy_genesis::{CliqueConfig, Genesis, GenesisAccount};
use alloy_primitives::{Address, Bytes, B256, U256};
use alloy_signer_local::{MnemonicBuilder, PrivateKeySigner};

use crate::constants::{
    DEV_ACCOUNT_BALANCE_ETH, DEV_ACCOUNT_COUNT, DEV_CHAIN_ID, DEV_GAS_LIMIT, DEV_KARMA_ADDRESS,
    DEV_KARMA_TIERS_ADDRESS, DEV_MNEMONIC, DEV_SEQUENCER_KEY,
};
use crate::karma::{config::ONE_KARMA, contracts::KarmaPredeploy, KarmaConfig};

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

/// Karma of each dev account (whole KARMA), so every Karma state can be tried at once: the
/// accounts the e2e suites and tools use most get large quotas; 7 and 8 sit in small tiers
/// (newbie: 6 free transactions a day, entry: exactly 1 KARMA, 2 a day) and 9 holds none.
pub const DEV_ACCOUNT_KARMA: [u64; 10] = [
    10_000_000, // legendary: 480,000 a day
    100_000,    // pro: 10,080
    500_000,    // high-throughput: 108,000
    5_000_000,  // s-tier: 240,000
    20_000,     // power: 960
    5_000,      // regular: 480
    500,        // active: 96
    10,         // newbie: 6
    1,          // entry: 2
    0,          // none: no free transactions
];

/// The dev chain's `karma` section: the predeployed contracts, the default tiers and epoch.
pub fn dev_karma_config() -> KarmaConfig {
    serde_json::from_value(serde_json::json!({
        "karmaContract": DEV_KARMA_ADDRESS,
        "tiersContract": DEV_KARMA_TIERS_ADDRESS,
    }))
    .expect("the dev karma section is valid")
}

/// The Karma contracts of the dev chain: the dev sequencer is owner, operator and slasher;
/// the dev accounts hold [`DEV_ACCOUNT_KARMA`].
pub fn dev_karma_predeploy(cfg: &KarmaConfig) -> KarmaPredeploy {
    let me = dev_sequencer().address();
    KarmaPredeploy {
        karma: cfg.karma_contract,
        tiers_contract: cfg.tiers_contract,
        owner: me,
        operator: me,
        slasher: me,
        tiers: cfg.tiers.clone(),
        balances: dev_accounts()
            .iter()
            .zip(DEV_ACCOUNT_KARMA)
            .filter(|(_, k)| *k > 0)
            .map(|(s, k)| (s.address(), U256::from(k) * ONE_KARMA))
            .collect(),
    }
}

/// The dev genesis: every fork through Osaka at block 0, zero base fee, Clique-style sealing by
/// [`dev_sequencer`], the system contracts those forks call, the funded dev accounts, and Karma
/// ([`dev_karma_config`], [`dev_karma_predeploy`]).
pub fn dev_genesis(block_period: u64) -> Genesis {
    dev_genesis_with_karma(block_period, dev_karma_config())
}

/// [`dev_genesis`] with another `karma` section (e.g. a short epoch for tests).
pub fn dev_genesis_with_karma(block_period: u64, karma: KarmaConfig) -> Genesis {
    let mut alloc: BTreeMap<Address, GenesisAccount> = dev_accounts()
        .iter()
        .map(|s| {
            let balance =
                U256::from(DEV_ACCOUNT_BALANCE_ETH) * U256::from(10u64).pow(U256::from(18));
            (s.address(), GenesisAccount::default().with_balance(balance))
        })
        .collect();
    // The sequencer pays for its Karma.slash transactions (premium, like any slasher).
    alloc.insert(
        dev_sequencer().address(),
        GenesisAccount::default().with_balance(
            U256::from(DEV_ACCOUNT_BALANCE_ETH) * U256::from(10u64).pow(U256::from(18)),
        ),
    );
    alloc.extend(dev_karma_predeploy(&karma).alloc());
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
        osaka_time: Some(0),
        clique: Some(CliqueConfig {
            period: Some(block_period),
            epoch: Some(30_000),
        }),
        ..Default::default()
    };
    config
        .extra_fields
        .insert("zeroBaseFee".into(), serde_json::Value::Bool(true));
    config.extra_fields.insert(
        "karma".into(),
        serde_json::to_value(&karma).expect("karma config serializes"),
    );
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

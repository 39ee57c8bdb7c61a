//! TEMPORARY STUB written by the lead engineer so the crate compiles: the contracts helper
//! overwrites this file entirely. The lead's code uses: `read_balance(&dyn StateReader, karma,
//! account)`, `read_tiers(&dyn StateReader, tiers_contract)`, `slashed_account(karma, &Log) ->
//! Option<Address>` and `IKarma::slashCall { account }`.
#![allow(missing_docs, unreachable_pub)]
use alloy_primitives::{Address, Log, U256};

use crate::{
    state::KarmaTier,
    storage::{StateReader, StorageError},
};

alloy_sol_types::sol! {
    interface IKarma {
        function slash(address account) external returns (uint256);
        event AccountSlashed(address indexed account, uint256 amount);
    }
}

pub fn read_balance(
    state: &dyn StateReader,
    karma: Address,
    account: Address,
) -> Result<U256, StorageError> {
    let mut buf = [0u8; 64];
    buf[12..32].copy_from_slice(account.as_slice());
    state.storage(
        karma,
        U256::from_be_bytes(alloy_primitives::keccak256(buf).0),
    )
}

pub fn read_tiers(_state: &dyn StateReader, _c: Address) -> Result<Vec<KarmaTier>, StorageError> {
    Ok(vec![])
}

pub fn slashed_account(karma: Address, log: &Log) -> Option<Address> {
    use alloy_sol_types::SolEvent;
    (log.address == karma && log.topics().first() == Some(&IKarma::AccountSlashed::SIGNATURE_HASH))
        .then(|| log.topics().get(1).map(|t| Address::from_word(*t)))
        .flatten()
}

pub struct KarmaPredeploy {
    pub karma: Address,
    pub tiers_contract: Address,
    pub owner: Address,
    pub operator: Address,
    pub slasher: Address,
    pub tiers: Vec<KarmaTier>,
    pub balances: Vec<(Address, U256)>,
}

impl KarmaPredeploy {
    pub fn alloc(&self) -> Vec<(Address, alloy_genesis::GenesisAccount)> {
        let storage = self
            .balances
            .iter()
            .map(|(a, b)| {
                let mut buf = [0u8; 64];
                buf[12..32].copy_from_slice(a.as_slice());
                (
                    alloy_primitives::keccak256(buf),
                    alloy_primitives::B256::from(*b),
                )
            })
            .collect();
        vec![(
            self.karma,
            alloy_genesis::GenesisAccount::default()
                .with_nonce(Some(1))
                .with_code(Some(alloy_primitives::Bytes::from_static(&[0x00])))
                .with_storage(Some(storage)),
        )]
    }
}

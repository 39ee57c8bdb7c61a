//! Test helpers: signed transactions and an in-memory [`StateReader`].

use std::collections::HashMap;

use alloy_consensus::{
    transaction::{Recovered, SignerRecoverable},
    SignableTransaction, Signed, TxEip1559, TxEnvelope, TxLegacy,
};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{Address, Bytes, Signature, TxKind, B256, U256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use parking_lot::RwLock;
use revm::{bytecode::Bytecode, state::AccountInfo};

use super::ValidationContext;
use crate::{state::StateReader, storage::StorageError};

pub const CHAIN_ID: u64 = 1337;
pub const BASE_FEE: u64 = 7;
pub const GWEI: u128 = 1_000_000_000;

/// A deterministic key, different per `n`.
pub fn signer(n: u8) -> PrivateKeySigner {
    PrivateKeySigner::from_bytes(&B256::repeat_byte(n.max(1))).unwrap()
}

pub fn ctx() -> ValidationContext {
    ValidationContext {
        chain_id: CHAIN_ID,
        base_fee: BASE_FEE,
        block_gas_limit: 30_000_000,
        shanghai: true,
        prague: true,
    }
}

pub fn eip1559_tx(nonce: u64, gas: u64, max_fee: u128, tip: u128, input: Bytes) -> TxEip1559 {
    TxEip1559 {
        chain_id: CHAIN_ID,
        nonce,
        gas_limit: gas,
        max_fee_per_gas: max_fee,
        max_priority_fee_per_gas: tip,
        to: TxKind::Call(Address::repeat_byte(0xee)),
        value: U256::ZERO,
        access_list: Default::default(),
        input,
    }
}

pub fn legacy_tx(nonce: u64, gas_price: u128, chain_id: Option<u64>) -> TxLegacy {
    TxLegacy {
        chain_id,
        nonce,
        gas_price,
        gas_limit: 21_000,
        to: TxKind::Call(Address::repeat_byte(0xee)),
        value: U256::ZERO,
        input: Bytes::new(),
    }
}

/// Signs any transaction type and recovers it.
pub fn sign<T>(signer: &PrivateKeySigner, tx: T) -> Recovered<TxEnvelope>
where
    T: SignableTransaction<Signature>,
    TxEnvelope: From<Signed<T>>,
{
    let sig = signer.sign_hash_sync(&tx.signature_hash()).unwrap();
    TxEnvelope::from(tx.into_signed(sig))
        .try_into_recovered()
        .unwrap()
}

pub fn eip1559(
    signer: &PrivateKeySigner,
    nonce: u64,
    gas: u64,
    max_fee: u128,
    tip: u128,
    input: Bytes,
) -> Recovered<TxEnvelope> {
    sign(signer, eip1559_tx(nonce, gas, max_fee, tip, input))
}

/// A plain transfer paying `max_fee` / `tip`.
pub fn transfer(
    signer: &PrivateKeySigner,
    nonce: u64,
    max_fee: u128,
    tip: u128,
) -> Recovered<TxEnvelope> {
    eip1559(signer, nonce, 21_000, max_fee, tip, Bytes::new())
}

pub fn encode(tx: &Recovered<TxEnvelope>) -> Bytes {
    tx.inner().encoded_2718().into()
}

/// In-memory accounts.
#[derive(Debug, Default)]
pub struct MemState {
    accounts: RwLock<HashMap<Address, AccountInfo>>,
}

impl MemState {
    /// Every given signer funded with 1000 ether at nonce 0.
    pub fn funded(signers: &[&PrivateKeySigner]) -> Self {
        let s = Self::default();
        for sg in signers {
            s.set(sg.address(), 0, U256::from(10u128.pow(21)));
        }
        s
    }

    pub fn set(&self, addr: Address, nonce: u64, balance: U256) {
        let info = AccountInfo {
            nonce,
            balance,
            ..Default::default()
        };
        self.accounts.write().insert(addr, info);
    }
}

impl StateReader for MemState {
    fn account(&self, address: Address) -> Result<Option<AccountInfo>, StorageError> {
        Ok(self.accounts.read().get(&address).cloned())
    }
    fn storage(&self, _: Address, _: U256) -> Result<U256, StorageError> {
        Ok(U256::ZERO)
    }
    fn code_by_hash(&self, _: B256) -> Result<Bytecode, StorageError> {
        Ok(Bytecode::default())
    }
    fn block_hash(&self, _: u64) -> Result<B256, StorageError> {
        Ok(B256::ZERO)
    }
}

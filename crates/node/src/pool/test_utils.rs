//! Pool test helpers: the pool's chain context and its transactions (signing and the in-memory
//! state come from the crate's `test_utils`).

use alloy_consensus::{transaction::Recovered, TxEip1559, TxEnvelope, TxLegacy};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{Address, Bytes, TxKind, B256, U256};
use alloy_signer_local::PrivateKeySigner;

use crate::chain::{Head, NextBlock};
pub(crate) use crate::test_utils::{sign, MemState};

pub(crate) const CHAIN_ID: u64 = 1337;
pub(crate) const BASE_FEE: u64 = 7;
pub(crate) const GWEI: u128 = 1_000_000_000;

/// A deterministic key, different per `n`.
pub(crate) fn signer(n: u8) -> PrivateKeySigner {
    PrivateKeySigner::from_bytes(&B256::repeat_byte(n.max(1))).unwrap()
}

pub(crate) fn ctx() -> NextBlock {
    NextBlock {
        parent: std::sync::Arc::new(Head {
            header: Default::default(),
            hash: B256::ZERO,
        }),
        number: 1,
        timestamp: 1,
        chain_id: CHAIN_ID,
        base_fee: BASE_FEE,
        gas_limit: 30_000_000,
        shanghai: true,
        prague: true,
        osaka: true,
        blobs: None,
    }
}

pub(crate) fn eip1559_tx(
    nonce: u64,
    gas: u64,
    max_fee: u128,
    tip: u128,
    input: Bytes,
) -> TxEip1559 {
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

pub(crate) fn legacy_tx(nonce: u64, gas_price: u128, chain_id: Option<u64>) -> TxLegacy {
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

pub(crate) fn eip1559(
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
pub(crate) fn transfer(
    signer: &PrivateKeySigner,
    nonce: u64,
    max_fee: u128,
    tip: u128,
) -> Recovered<TxEnvelope> {
    eip1559(signer, nonce, 21_000, max_fee, tip, Bytes::new())
}

pub(crate) fn encode(tx: &Recovered<TxEnvelope>) -> Bytes {
    tx.inner().encoded_2718().into()
}

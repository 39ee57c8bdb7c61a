//! Byte layouts of stored records.

use alloy_consensus::ReceiptEnvelope;
use alloy_eips::eip2718::{Decodable2718, Encodable2718};
use alloy_primitives::{Address, Bytes, B256, U256};
use alloy_rlp::{Decodable, Encodable};

use super::StorageError;
use l2node_trie::state::AccountState;

/// Length of an encoded account: nonce (8) + balance (32) + code hash (32).
pub(crate) const ACCOUNT_LEN: usize = 72;

pub(crate) fn encode_account(a: &AccountState) -> [u8; ACCOUNT_LEN] {
    let mut out = [0u8; ACCOUNT_LEN];
    out[..8].copy_from_slice(&a.nonce.to_be_bytes());
    out[8..40].copy_from_slice(&a.balance.to_be_bytes::<32>());
    out[40..].copy_from_slice(a.code_hash.as_slice());
    out
}

pub(crate) fn decode_account(bytes: &[u8]) -> Result<AccountState, StorageError> {
    if bytes.len() != ACCOUNT_LEN {
        return Err(corrupt(
            "accounts",
            format!("account record of {} bytes", bytes.len()),
        ));
    }
    Ok(AccountState {
        nonce: u64::from_be_bytes(bytes[..8].try_into().expect("8 bytes")),
        balance: U256::from_be_slice(&bytes[8..40]),
        code_hash: B256::from_slice(&bytes[40..]),
    })
}

/// Key of a storage slot: address ++ slot.
pub(crate) fn slot_key(address: &Address, slot: &U256) -> [u8; 52] {
    let mut k = [0u8; 52];
    k[..20].copy_from_slice(address.as_slice());
    k[20..].copy_from_slice(&slot.to_be_bytes::<32>());
    k
}

/// `prefix ++ number (BE)`: history and log index keys sort by prefix, then block.
pub(crate) fn with_block(prefix: &[u8], number: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(prefix.len() + 8);
    k.extend_from_slice(prefix);
    k.extend_from_slice(&number.to_be_bytes());
    k
}

pub(crate) fn block_suffix(key: &[u8]) -> u64 {
    u64::from_be_bytes(key[key.len() - 8..].try_into().expect("8-byte suffix"))
}

pub(crate) fn decode_rlp<T: Decodable>(
    table: &'static str,
    mut bytes: &[u8],
) -> Result<T, StorageError> {
    T::decode(&mut bytes).map_err(|e| corrupt(table, e.to_string()))
}

pub(crate) fn encode_rlp<T: Encodable>(value: &T) -> Vec<u8> {
    alloy_rlp::encode(value)
}

pub(crate) fn encode_receipts(receipts: &[ReceiptEnvelope]) -> Vec<u8> {
    let list: Vec<Bytes> = receipts.iter().map(|r| r.encoded_2718().into()).collect();
    alloy_rlp::encode(&list)
}

pub(crate) fn decode_receipts(bytes: &[u8]) -> Result<Vec<ReceiptEnvelope>, StorageError> {
    let list: Vec<Bytes> = decode_rlp("receipts", bytes)?;
    list.iter()
        .map(|b| {
            ReceiptEnvelope::decode_2718(&mut b.as_ref())
                .map_err(|e| corrupt("receipts", e.to_string()))
        })
        .collect()
}

pub(crate) fn corrupt(table: &'static str, reason: String) -> StorageError {
    StorageError::Corrupt { table, reason }
}

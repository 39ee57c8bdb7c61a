//! How trie nodes are kept in a redb table: as their RLP, except the leaf of an account with
//! neither storage nor code.
//!
//! Such a leaf (every externally owned account's) ends with the empty storage root and the empty
//! code hash, 66 bytes that are the same in every one of them and about three fifths of the leaf.
//! A state of a million accounts is a million leaves, most of the `trie_nodes` table, and a
//! write-out of the trie buffer dirties most of the table's pages whatever the number of blocks
//! it holds: the table's size is what a write-out costs. Such a leaf is stored as
//! [`COMPACT_LEAF`] followed by its key's RLP item and the account's nonce and balance items, and
//! rebuilt on every read, byte for byte (RLP has one encoding of each value, and the headers are
//! decoded with alloy-rlp, which refuses any other). Every other node is stored as it is: an RLP
//! list, whose first byte is at least `0xc0`, so the tag cannot be mistaken for one. A database
//! written before this form reads as it did.

use std::borrow::Cow;

use alloy_primitives::{B256, KECCAK256_EMPTY};
use alloy_rlp::Header;
use alloy_trie::EMPTY_ROOT_HASH;

use super::TrieError;

/// First byte of a compact account leaf. RLP lists, which every trie node is, start at `0xc0`.
const COMPACT_LEAF: u8 = 0x00;

/// RLP of a 32-byte string: its header.
const HASH_ITEM: u8 = 0xa0;

/// The leaf's last two items when the account has no storage and no code.
fn empty_suffix() -> [u8; 66] {
    let mut suffix = [0; 66];
    suffix[0] = HASH_ITEM;
    suffix[1..33].copy_from_slice(EMPTY_ROOT_HASH.as_slice());
    suffix[33] = HASH_ITEM;
    suffix[34..].copy_from_slice(B256::as_slice(&KECCAK256_EMPTY));
    suffix
}

/// The next RLP item of `buf`, header included (`None` if it is not a canonical item of the
/// kind asked for).
fn item<'a>(buf: &mut &'a [u8], list: bool) -> Option<&'a [u8]> {
    let start = *buf;
    let header = Header::decode(buf).ok()?;
    if header.list != list || header.payload_length > buf.len() {
        return None;
    }
    *buf = &buf[header.payload_length..];
    Some(&start[..start.len() - buf.len()])
}

/// The payload of `rlp` if it is exactly one RLP item of the kind asked for.
fn payload(rlp: &[u8], list: bool) -> Option<&[u8]> {
    let mut buf = rlp;
    let header = Header::decode(&mut buf).ok()?;
    (header.list == list && header.payload_length == buf.len()).then_some(buf)
}

/// The form `rlp` (a node's RLP) is stored in: compact if it is the leaf of an account without
/// storage or code, `None` if it is stored as it is.
pub(crate) fn compact(rlp: &[u8]) -> Option<Vec<u8>> {
    let mut leaf = payload(rlp, true)?;
    let key = item(&mut leaf, false)?;
    let mut account = payload(payload(leaf, false)?, true)?;
    let nonce = item(&mut account, false)?;
    let balance = item(&mut account, false)?;
    if account != empty_suffix() {
        return None;
    }
    let mut out = Vec::with_capacity(1 + key.len() + nonce.len() + balance.len());
    out.push(COMPACT_LEAF);
    out.extend_from_slice(key);
    out.extend_from_slice(nonce);
    out.extend_from_slice(balance);
    Some(out)
}

/// The RLP of the node stored as `stored`.
pub(crate) fn expand(stored: &[u8]) -> Result<Cow<'_, [u8]>, TrieError> {
    let Some(mut rest) = stored.strip_prefix(&[COMPACT_LEAF]) else {
        return Ok(Cow::Borrowed(stored));
    };
    let corrupt = || TrieError::Corrupt(format!("compact account leaf {stored:x?}"));
    let key = item(&mut rest, false).ok_or_else(corrupt)?;
    let nonce = item(&mut rest, false).ok_or_else(corrupt)?;
    let balance = item(&mut rest, false).ok_or_else(corrupt)?;
    if !rest.is_empty() {
        return Err(corrupt());
    }
    let account = Header {
        list: true,
        payload_length: nonce.len() + balance.len() + 66,
    };
    let account_len = account.length_with_payload();
    let value = Header {
        list: false,
        payload_length: account_len,
    };
    let leaf = Header {
        list: true,
        payload_length: key.len() + value.length_with_payload(),
    };
    let mut rlp = Vec::with_capacity(leaf.length_with_payload());
    leaf.encode(&mut rlp);
    rlp.extend_from_slice(key);
    value.encode(&mut rlp);
    account.encode(&mut rlp);
    rlp.extend_from_slice(nonce);
    rlp.extend_from_slice(balance);
    rlp.extend_from_slice(&empty_suffix());
    Ok(Cow::Owned(rlp))
}

#[cfg(test)]
mod tests {
    use alloy_primitives::{keccak256, U256};
    use alloy_trie::{nodes::LeafNode, Nibbles, TrieAccount};
    use rand::{Rng, SeedableRng};

    use super::*;

    fn leaf(key_nibbles: usize, account: &TrieAccount, seed: u64) -> Vec<u8> {
        let hashed = keccak256(seed.to_be_bytes());
        let key = Nibbles::unpack(hashed).slice(64 - key_nibbles..);
        let mut rlp = Vec::new();
        alloy_rlp::Encodable::encode(&LeafNode::new(key, alloy_rlp::encode(account)), &mut rlp);
        rlp
    }

    /// An account with neither storage nor code.
    fn eoa(nonce: u64, balance: U256) -> TrieAccount {
        TrieAccount {
            nonce,
            balance,
            storage_root: EMPTY_ROOT_HASH,
            code_hash: KECCAK256_EMPTY,
        }
    }

    #[test]
    fn an_account_leaf_without_storage_or_code_is_stored_compact_and_read_back_as_it_was() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for seed in 0..2_000u64 {
            let nonce = match seed % 3 {
                0 => 0,
                1 => rng.gen_range(1..128),
                _ => rng.gen(),
            };
            let balance = match seed % 4 {
                0 => U256::ZERO,
                1 => U256::from(rng.gen_range(1u64..128)),
                _ => U256::from_be_bytes(rng.gen::<[u8; 32]>()) >> rng.gen_range(0..256),
            };
            let account = eoa(nonce, balance);
            let rlp = leaf(rng.gen_range(0..=64), &account, seed);
            let stored = compact(&rlp).expect("an account without storage or code");
            assert!(stored.len() + 64 <= rlp.len(), "{stored:x?} for {rlp:x?}");
            assert_eq!(expand(&stored).unwrap(), rlp);
        }
    }

    #[test]
    fn other_nodes_are_stored_as_they_are() {
        let contract = TrieAccount {
            nonce: 1,
            balance: U256::from(5),
            storage_root: keccak256("storage"),
            code_hash: KECCAK256_EMPTY,
        };
        let with_code = TrieAccount {
            code_hash: keccak256("code"),
            storage_root: EMPTY_ROOT_HASH,
            ..contract
        };
        let slot = {
            let mut rlp = Vec::new();
            let key = Nibbles::unpack(keccak256("slot"));
            alloy_rlp::Encodable::encode(
                &LeafNode::new(key, alloy_rlp::encode(U256::from(9))),
                &mut rlp,
            );
            rlp
        };
        let branch = {
            let mut rlp = Vec::new();
            alloy_rlp::Header {
                list: true,
                payload_length: 16 * 33 + 1,
            }
            .encode(&mut rlp);
            for _ in 0..16 {
                rlp.push(HASH_ITEM);
                rlp.extend_from_slice(EMPTY_ROOT_HASH.as_slice());
            }
            rlp.push(0x80);
            rlp
        };
        for rlp in [
            leaf(40, &contract, 1),
            leaf(40, &with_code, 2),
            slot,
            branch,
        ] {
            assert_eq!(compact(&rlp), None);
            assert_eq!(expand(&rlp).unwrap(), rlp);
        }
    }

    #[test]
    fn a_damaged_compact_leaf_is_refused() {
        let stored = compact(&leaf(50, &eoa(3, U256::from(1_000_000)), 3)).unwrap();
        for damaged in [&stored[..stored.len() - 1], &[&stored[..], &[1]].concat()] {
            assert!(matches!(expand(damaged), Err(TrieError::Corrupt(_))));
        }
    }
}

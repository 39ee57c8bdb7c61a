//! The state trie of the head or of a recent block: eth_getProof, and simulations and block
//! building on an earlier block.
//!
//! Only the current trie is stored. The trie of block `b` is the current one with every
//! account and slot that the blocks after `b` changed (their change sets) set back to its value
//! at `b` (from the state history), kept in memory over the stored nodes; its root is checked
//! against `b`'s state root. Within the proof window (`--rpc-eth-proof-window`), that costs what
//! the later blocks changed, instead of a copy of every overwritten trie node on disk.

use std::collections::{BTreeMap, BTreeSet};

use alloy_primitives::{Address, B256, U256};
use alloy_rpc_types_eth::{EIP1186AccountProofResponse, EIP1186StorageProof};
use alloy_serde::JsonStorageKey;

use super::{codec, reader::StateAt, Storage, StorageError};
use l2node_trie as trie;
use l2node_trie::state::AccountChange;

impl Storage {
    /// The first block whose trie this node can read (proofs, simulations on it): the proof
    /// window's distance behind the head, no earlier than the state history kept.
    pub fn first_proof_block(&self) -> Result<u64, StorageError> {
        let snap = self.snapshot()?;
        Ok(snap
            .proofs_from
            .max(snap.state_from)
            .min(snap.head.unwrap_or(0)))
    }

    /// Blocks before the head whose trie can be read (`--rpc-eth-proof-window`).
    pub fn proof_window(&self) -> u64 {
        self.proof_window
    }

    /// Runs `f` on the state trie of block `block`, or answers `Err(first)` when `block`
    /// predates `first`, the first block whose trie this node can read (the head's always is).
    pub fn with_trie_at<R>(
        &self,
        block: u64,
        f: impl FnOnce(&dyn trie::TrieStore) -> R,
    ) -> Result<Result<R, u64>, StorageError> {
        let snap = self.snapshot()?;
        let head = snap.head.unwrap_or(0);
        let nodes = snap.trie()?;
        if block >= head {
            return Ok(Ok(f(&nodes)));
        }
        let first = snap.proofs_from.max(snap.state_from);
        if block < first {
            return Ok(Err(first.min(head)));
        }
        // What the blocks after `block` changed, set back to its value at `block`.
        let mut touched: BTreeMap<Address, BTreeSet<U256>> = BTreeMap::new();
        for entry in snap.table(&snap.change_sets)?.range(block + 1..=head)? {
            let (number, set) = entry?;
            decode_change_set(number.value(), set.value(), &mut touched)?;
        }
        let state = StateAt::new(snap.clone(), self.snapshots.clone(), Some(block));
        let inverse = changes_to(&state, touched)?;
        let mut overlay = trie::OverlayTrie::new(&nodes);
        let root = trie::apply_changes(&mut overlay, &inverse)?;
        // The header of this snapshot: a reorganisation meanwhile does not show here.
        let header: alloy_consensus::Header = snap
            .table(&snap.headers)?
            .get(block)?
            .map(|v| codec::decode_rlp("headers", codec::header_parts(v.value()).1))
            .transpose()?
            .ok_or_else(|| codec::corrupt("headers", format!("block {block} is missing")))?;
        let expected = header.state_root;
        if root != expected {
            return Err(codec::corrupt(
                "change_sets",
                format!("the trie set back to block {block} has root {root}, not {expected}"),
            ));
        }
        Ok(Ok(f(&overlay)))
    }

    /// EIP-1186 proof of `address` and `slots` against the state root of block `block`, or
    /// `Err(first)` as [`Storage::with_trie_at`] says.
    pub fn proof(
        &self,
        address: Address,
        slots: &[B256],
        block: u64,
    ) -> Result<Result<EIP1186AccountProofResponse, u64>, StorageError> {
        let p = match self.with_trie_at(block, |trie| trie::account_proof(trie, address, slots))? {
            Ok(p) => p?,
            Err(first) => return Ok(Err(first)),
        };
        let (balance, nonce, code_hash) = match &p.account {
            Some(a) => (a.balance, a.nonce, a.code_hash),
            None => (U256::ZERO, 0, revm::primitives::KECCAK_EMPTY),
        };
        Ok(Ok(EIP1186AccountProofResponse {
            address,
            balance,
            code_hash,
            nonce,
            storage_hash: p.storage_root,
            account_proof: p.account_proof,
            storage_proof: p
                .storage_proofs
                .into_iter()
                .map(|s| EIP1186StorageProof {
                    key: JsonStorageKey::Hash(s.slot),
                    value: s.value,
                    proof: s.proof,
                })
                .collect(),
        }))
    }
}

/// The changes that set the accounts and slots of `touched` to their values in `state`.
pub(crate) fn changes_to(
    state: &StateAt,
    touched: BTreeMap<Address, BTreeSet<U256>>,
) -> Result<Vec<AccountChange>, StorageError> {
    touched
        .into_iter()
        .map(|(address, slots)| {
            let storage = slots
                .into_iter()
                .map(|slot| Ok((slot, crate::StateReader::storage(state, address, slot)?)))
                .collect::<Result<_, StorageError>>()?;
            Ok(AccountChange {
                address,
                before: None,
                info: state.account_state(address)?,
                new_code: None,
                storage_before: Vec::new(),
                storage_wiped: false,
                storage,
            })
        })
        .collect()
}

/// Adds the accounts and slots of block `number`'s change set (`tables::CHANGE_SETS`).
pub(crate) fn decode_change_set(
    number: u64,
    mut set: &[u8],
    touched: &mut BTreeMap<Address, BTreeSet<U256>>,
) -> Result<(), StorageError> {
    let bad = || {
        codec::corrupt(
            "change_sets",
            format!("block {number}'s entry is cut short"),
        )
    };
    while !set.is_empty() {
        if set.len() < 24 {
            return Err(bad());
        }
        let address = Address::from_slice(&set[..20]);
        let count = u32::from_be_bytes(set[20..24].try_into().expect("4 bytes")) as usize;
        set = &set[24..];
        if set.len() < count * 32 {
            return Err(bad());
        }
        let slots = touched.entry(address).or_default();
        for slot in set[..count * 32].chunks_exact(32) {
            slots.insert(U256::from_be_slice(slot));
        }
        set = &set[count * 32..];
    }
    Ok(())
}

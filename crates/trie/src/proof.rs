//! Merkle proofs (`eth_getProof`) read from the path-keyed trie.

use alloy_primitives::{keccak256, Address, Bytes, B256, U256};
use alloy_rlp::Decodable;
use alloy_trie::{Nibbles, TrieAccount, EMPTY_ROOT_HASH};

use super::TrieError;
use super::{account_prefix, node::Node, storage_prefix, store::TrieStore, update::node_key};

/// Proof nodes for one account and some of its storage slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountProofNodes {
    /// The account as stored in the trie, `None` when absent (the proof is then an exclusion
    /// proof).
    pub account: Option<TrieAccount>,
    /// The account's storage root (`EMPTY_ROOT_HASH` when absent or without storage).
    pub storage_root: B256,
    /// RLP of the account-trie nodes on the path to the account, root first. Nodes embedded in
    /// their parent (RLP shorter than 32 bytes) are not listed separately.
    pub account_proof: Vec<Bytes>,
    /// One proof per requested slot, in request order.
    pub storage_proofs: Vec<StorageProofNodes>,
}

/// Proof of one storage slot against the account's storage root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageProofNodes {
    /// The requested slot.
    pub slot: B256,
    /// Its value (zero when unset).
    pub value: U256,
    /// RLP of the storage-trie nodes on the path to the slot, root first.
    pub proof: Vec<Bytes>,
}

/// Merkle proof for eth_getProof: account proof nodes (RLP, root first) and per-slot proofs.
pub fn account_proof<S: TrieStore + ?Sized>(
    store: &S,
    address: Address,
    slots: &[B256],
) -> Result<AccountProofNodes, TrieError> {
    let hashed = keccak256(address);
    let (account_proof, leaf) = path_proof(store, &account_prefix(), Nibbles::unpack(hashed))?;
    let account = leaf
        .map(|value| {
            TrieAccount::decode(&mut value.as_slice())
                .map_err(|e| TrieError::Corrupt(format!("account leaf: {e}")))
        })
        .transpose()?;
    let storage_root = account.as_ref().map_or(EMPTY_ROOT_HASH, |a| a.storage_root);
    let prefix = storage_prefix(&hashed);
    let mut storage_proofs = Vec::with_capacity(slots.len());
    for slot in slots {
        let (proof, leaf) = if account.is_some() {
            path_proof(store, &prefix, Nibbles::unpack(keccak256(slot)))?
        } else {
            (Vec::new(), None)
        };
        let value = leaf
            .map(|value| {
                U256::decode(&mut value.as_slice())
                    .map_err(|e| TrieError::Corrupt(format!("storage leaf: {e}")))
            })
            .transpose()?
            .unwrap_or_default();
        storage_proofs.push(StorageProofNodes {
            slot: *slot,
            value,
            proof,
        });
    }
    Ok(AccountProofNodes {
        account,
        storage_root,
        account_proof,
        storage_proofs,
    })
}

/// Nodes on the path to `key` (root first, embedded nodes skipped) and the leaf value if found.
fn path_proof<S: TrieStore + ?Sized>(
    store: &S,
    prefix: &[u8],
    key: Nibbles,
) -> Result<(Vec<Bytes>, Option<Vec<u8>>), TrieError> {
    let mut proof = Vec::new();
    let mut path = Nibbles::new();
    let Some(mut rlp) = store.get(prefix)? else {
        return Ok((proof, None));
    };
    proof.push(Bytes::from(rlp.clone()));
    loop {
        let next_ref = match Node::decode(&rlp)? {
            Node::Leaf { key: rest, value } => {
                return Ok((proof, (path.join(&rest) == key).then_some(value)));
            }
            Node::Extension { key: ext, child } => {
                if !key.slice(path.len()..).starts_with(&ext) {
                    return Ok((proof, None));
                }
                path = path.join(&ext);
                child
            }
            Node::Branch { children } => {
                let nibble = key.get_unchecked(path.len());
                let Some(child) = children[nibble as usize].clone() else {
                    return Ok((proof, None));
                };
                path.push(nibble);
                child
            }
        };
        rlp = store
            .get(&node_key(prefix, &path))?
            .ok_or_else(|| TrieError::Corrupt(format!("missing trie node at path {path:?}")))?;
        if next_ref.is_hash() {
            proof.push(Bytes::from(rlp.clone()));
        }
    }
}

//! State snapshots in chunks that are each checked against the state root.
//!
//! A snapshot of the state at block H is cut by the account trie's structure: the root node and
//! the branch nodes one nibble below it (the *top*), and one chunk per subtrie under them (at
//! one or two nibbles, so 256 chunks on any sizeable state). A joining node checks the top
//! against H's state root, which gives it the reference of every chunk's subtrie; it rebuilds
//! each chunk's subtrie (storage tries included) from the chunk's accounts and takes the chunk
//! only when the rebuilt node is the referenced one. A peer that alters one account fails that
//! chunk alone, which is fetched again from another peer: nothing has to be taken on trust.

use alloy_primitives::{keccak256, B256, U256};
use alloy_trie::{nodes::RlpNode, Nibbles, EMPTY_ROOT_HASH};

use super::{
    account_prefix, encode_account,
    node::Node,
    slot_update, storage_prefix,
    update::{node_key, prepare, TrieUpdater},
    TrieError, TrieStore,
};
use crate::state::AccountState;

/// One account of a chunk, with all its non-zero slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapAccount {
    /// `keccak256(address)`: its key in the account trie.
    pub hashed: B256,
    /// Nonce, balance and code hash.
    pub info: AccountState,
    /// Every non-zero slot (any order).
    pub storage: Vec<(U256, U256)>,
}

/// A node of the top of the account trie: its nibble path (one nibble per byte) and RLP.
pub type TopNode = (Vec<u8>, Vec<u8>);

/// The top of the account trie: `(nibble path, node RLP)` for the root and for every branch
/// node one nibble below it. Empty for the empty trie.
pub fn snapshot_top<S: TrieStore + ?Sized>(store: &S) -> Result<Vec<TopNode>, TrieError> {
    let Some(root) = store.get(&account_prefix())? else {
        return Ok(Vec::new());
    };
    let mut top = Vec::with_capacity(17);
    if let Node::Branch { children } = Node::decode(&root)? {
        for nibble in 0..16u8 {
            if children[nibble as usize].is_none() {
                continue;
            }
            let path = Nibbles::from_nibbles([nibble]);
            let rlp = store
                .get(&node_key(&account_prefix(), &path))?
                .ok_or_else(|| {
                    TrieError::Corrupt(format!("missing account trie node {nibble:x}"))
                })?;
            if matches!(Node::decode(&rlp)?, Node::Branch { .. }) {
                top.push((vec![nibble], rlp));
            }
        }
    }
    top.insert(0, (Vec::new(), root));
    Ok(top)
}

/// A chunk to fetch: the nibble path of its subtrie and the reference its rebuilt node must
/// have (a hash, or the RLP of a node shorter than 32 bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkPlan {
    /// Nibbles (one per byte) shared by the hashed addresses of the chunk's accounts.
    pub path: Vec<u8>,
    /// The reference of the node at `path` in the trie of `state_root`.
    pub expected: RlpNode,
}

/// Checks a peer's top (see [`snapshot_top`]) against `state_root` and returns the chunks of
/// the snapshot, in key order. `Err` names what does not match.
pub fn plan_chunks(state_root: B256, top: &[TopNode]) -> Result<Vec<ChunkPlan>, String> {
    if state_root == EMPTY_ROOT_HASH {
        return if top.is_empty() {
            Ok(Vec::new())
        } else {
            Err("nodes sent for an empty state".into())
        };
    }
    let [(root_path, root), rest @ ..] = top else {
        return Err("no root node".into());
    };
    if !root_path.is_empty() || keccak256(root) != state_root {
        return Err(format!(
            "the root node does not hash to the state root {state_root}"
        ));
    }
    let root_node = Node::decode(root).map_err(|e| e.to_string())?;
    let Node::Branch { children } = root_node else {
        if !rest.is_empty() {
            return Err("nodes below a root that is not a branch".into());
        }
        return Ok(vec![ChunkPlan {
            path: Vec::new(),
            expected: RlpNode::from_rlp(root),
        }]);
    };
    let mut rest = rest.iter().peekable();
    let mut plan = Vec::new();
    for (nibble, child) in children.iter().enumerate() {
        let Some(child) = child else { continue };
        let nibble = nibble as u8;
        match rest.next_if(|(path, _)| path == &[nibble]) {
            Some((_, rlp)) => {
                if &RlpNode::from_rlp(rlp) != child {
                    return Err(format!(
                        "the node at nibble {nibble:x} is not the root's child"
                    ));
                }
                let Node::Branch { children } = Node::decode(rlp).map_err(|e| e.to_string())?
                else {
                    return Err(format!("the node at nibble {nibble:x} is not a branch"));
                };
                for (second, grandchild) in children.iter().enumerate() {
                    if let Some(expected) = grandchild {
                        plan.push(ChunkPlan {
                            path: vec![nibble, second as u8],
                            expected: expected.clone(),
                        });
                    }
                }
            }
            None => plan.push(ChunkPlan {
                path: vec![nibble],
                expected: child.clone(),
            }),
        }
    }
    if rest.next().is_some() {
        return Err("nodes out of order or under no child of the root".into());
    }
    Ok(plan)
}

/// Writes one chunk into `store` (a store without nodes at or below `chunk.path`): every
/// account's storage trie and the account subtrie at `chunk.path`, and answers whether the
/// node built at `chunk.path` is `chunk.expected`. On `false` the caller must drop what was
/// written (the write transaction). Accounts must be sorted by `hashed`, each under the path.
pub fn write_chunk<S: TrieStore>(
    store: &mut S,
    chunk: &ChunkPlan,
    accounts: &[SnapAccount],
) -> Result<bool, TrieError> {
    let path = Nibbles::from_nibbles(&chunk.path);
    let mut leaves = Vec::with_capacity(accounts.len());
    for account in accounts {
        let key = Nibbles::unpack(account.hashed);
        if !key.starts_with(&path) || leaves.last().is_some_and(|(last, _)| *last >= key) {
            return Ok(false);
        }
        let prefix = storage_prefix(&account.hashed);
        let slots = account
            .storage
            .iter()
            .map(|(slot, value)| slot_update(*slot, *value))
            .collect();
        let storage_root = TrieUpdater::new(&mut *store, &prefix).apply(&prepare(slots))?;
        leaves.push((key, encode_account(&account.info, storage_root)));
    }
    let inserts: Vec<(Nibbles, &[u8])> = leaves.iter().map(|(k, v)| (*k, v.as_slice())).collect();
    let prefix = account_prefix();
    let Some(node) = TrieUpdater::new(&mut *store, &prefix).build(path, &inserts)? else {
        return Ok(false);
    };
    let encoded = node.encode();
    if encoded.node_ref != chunk.expected {
        return Ok(false);
    }
    store.put(&node_key(&prefix, &path), &encoded.rlp)?;
    Ok(true)
}

/// Writes the top nodes (checked by [`plan_chunks`]) once every chunk is in.
pub fn write_top<S: TrieStore>(store: &mut S, top: &[TopNode]) -> Result<(), TrieError> {
    for (path, rlp) in top {
        store.put(
            &node_key(&account_prefix(), &Nibbles::from_nibbles(path)),
            rlp,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use alloy_primitives::Address;
    use alloy_trie::KECCAK_EMPTY;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    use super::*;
    use crate::{apply_changes, state::AccountChange, state_root, MemoryTrieStore};

    fn state(accounts: usize, seed: u64) -> Vec<AccountChange> {
        let mut rng = StdRng::seed_from_u64(seed);
        (0..accounts)
            .map(|i| AccountChange {
                address: Address::from_word(keccak256(rng.gen::<u64>().to_be_bytes())),
                before: None,
                info: Some(AccountState {
                    nonce: rng.gen_range(0..5),
                    balance: U256::from(rng.gen::<u64>()),
                    code_hash: if i % 7 == 0 {
                        B256::repeat_byte(7)
                    } else {
                        KECCAK_EMPTY
                    },
                }),
                new_code: None,
                storage_before: Vec::new(),
                storage_wiped: false,
                storage: if i % 7 == 0 {
                    (0..rng.gen_range(1..20u64))
                        .map(|s| (U256::from(s), U256::from(rng.gen::<u32>())))
                        .collect()
                } else {
                    Vec::new()
                },
            })
            .collect()
    }

    /// The chunks of a source trie: its accounts grouped by chunk path.
    fn chunks(changes: &[AccountChange], plan: &[ChunkPlan]) -> Vec<Vec<SnapAccount>> {
        let mut sorted: BTreeMap<B256, SnapAccount> = BTreeMap::new();
        for c in changes {
            let hashed = keccak256(c.address);
            sorted.insert(
                hashed,
                SnapAccount {
                    hashed,
                    info: c.info.unwrap(),
                    storage: c.storage.clone(),
                },
            );
        }
        plan.iter()
            .map(|chunk| {
                let path = Nibbles::from_nibbles(&chunk.path);
                sorted
                    .values()
                    .filter(|a| Nibbles::unpack(a.hashed).starts_with(&path))
                    .cloned()
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_snapshot_rebuilds_the_same_trie_at_any_size_and_refuses_an_altered_account() {
        for (size, seed) in [(1, 1), (2, 2), (17, 3), (300, 4), (5_000, 5)] {
            let changes = state(size, seed);
            let mut source = MemoryTrieStore::new();
            let root = apply_changes(&mut source, &changes).unwrap();
            let top = snapshot_top(&source).unwrap();
            let plan = plan_chunks(root, &top).unwrap();
            let accounts = chunks(&changes, &plan);
            assert_eq!(accounts.iter().map(Vec::len).sum::<usize>(), size);

            let mut copy = MemoryTrieStore::new();
            for (chunk, accounts) in plan.iter().zip(&accounts) {
                assert!(
                    write_chunk(&mut copy, chunk, accounts).unwrap(),
                    "{size}: {chunk:?}"
                );
            }
            write_top(&mut copy, &top).unwrap();
            assert_eq!(state_root(&copy).unwrap(), root);
            assert_eq!(copy, source, "{size}: every node, as the source stores it");

            // One balance changed, one slot changed, one account left out: each is refused.
            let (chunk, accounts) = plan.iter().zip(&accounts).next_back().unwrap();
            let mut altered = accounts.clone();
            altered[0].info.balance += U256::from(1);
            assert!(!write_chunk(&mut MemoryTrieStore::new(), chunk, &altered).unwrap());
            if let Some(a) = altered.iter_mut().find(|a| !a.storage.is_empty()) {
                a.info.balance -= U256::from(1);
                a.storage[0].1 += U256::from(1);
                assert!(!write_chunk(&mut MemoryTrieStore::new(), chunk, &altered).unwrap());
            }
            if accounts.len() > 1 {
                assert!(!write_chunk(&mut MemoryTrieStore::new(), chunk, &accounts[1..]).unwrap());
            }
        }
    }

    #[test]
    fn a_top_that_does_not_hash_to_the_root_is_refused() {
        let changes = state(300, 9);
        let mut source = MemoryTrieStore::new();
        let root = apply_changes(&mut source, &changes).unwrap();
        let mut top = snapshot_top(&source).unwrap();
        assert!(plan_chunks(B256::repeat_byte(1), &top).is_err());
        let last = top.last_mut().unwrap();
        last.1[5] ^= 1;
        assert!(plan_chunks(root, &top).is_err());
        assert_eq!(plan_chunks(EMPTY_ROOT_HASH, &[]).unwrap(), Vec::new());
    }
}

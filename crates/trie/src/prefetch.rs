//! Reading a block's trie paths before its update: geth's trie prefetcher, and reth's fetching
//! of proofs beside execution.
//!
//! A block's update at ten million accounts spends most of its time in store reads: the nodes
//! below the writer's node cache, one random B-tree lookup each. They depend only on which keys
//! the block touches, which execution learns one account and one slot at a time. Whoever
//! executes can therefore hand each touched key to another thread, which walks the key's path
//! in the store and keeps the nodes it reads ([`Prefetched`]); the update then takes them from
//! there instead of from the store ([`crate::buffer::WriteBack::apply_prefetched`]).
//!
//! The nodes are the store's values as of the read: they are right for an update over that same
//! store only, which the caller checks (storage compares the head and the trie's write-out
//! point). A key whose path was not fetched, or was fetched only in part, is read from the store
//! as before, so an unfinished prefetch is never wrong, only less useful.

use alloy_primitives::{map::HashMap, B256};
use alloy_trie::{nodes::LeafNodeRef, Nibbles, EMPTY_ROOT_HASH};

use crate::{
    account_prefix, encode_account, node::Node, state::AccountState, storage_prefix,
    store::TrieStore, update::node_key, TrieError,
};

/// Store values read ahead of an update, by store key (`None`: the key is absent).
#[derive(Debug, Default)]
pub struct Prefetched {
    nodes: HashMap<Vec<u8>, Option<Vec<u8>>>,
}

impl Prefetched {
    /// Nothing fetched yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of store keys read.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// `true` when no key was read.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// What the store held under `key` when it was read, if it was.
    pub(crate) fn get(&self, key: &[u8]) -> Option<&Option<Vec<u8>>> {
        self.nodes.get(key)
    }

    /// Reads the account trie's nodes on the path of the account whose hashed address is
    /// `hashed`, from depth `from_depth` (the levels above are kept by the writer's node cache,
    /// [`crate::buffer::WriteBack::prefetch_from_depth`]). With the account's `current` state,
    /// its leaf is not read where its parent's reference is that of the leaf without storage:
    /// the update recognises it there the same way (a block's changes carry the state before).
    pub fn account(
        &mut self,
        store: &dyn TrieStore,
        hashed: &B256,
        from_depth: usize,
        current: Option<&AccountState>,
    ) -> Result<(), TrieError> {
        let leaf = current.map(|current| encode_account(current, EMPTY_ROOT_HASH));
        self.path(
            store,
            &account_prefix(),
            hashed,
            from_depth,
            leaf.as_deref(),
        )
    }

    /// Reads the nodes on the path of the slot whose hashed key is `hashed_slot` in the storage
    /// trie of the account whose hashed address is `hashed`.
    pub fn slot(
        &mut self,
        store: &dyn TrieStore,
        hashed: &B256,
        hashed_slot: &B256,
    ) -> Result<(), TrieError> {
        self.path(store, &storage_prefix(hashed), hashed_slot, 0, None)
    }

    /// Reads the stored nodes on the path to `key` in the trie under `prefix`, from depth
    /// `depth` down to the leaf (or to a branch whose reference below is that of a leaf holding
    /// `leaf`), or to where the path leaves the trie. Levels above `depth` are taken to be
    /// branches: if they are not, the deeper keys read are absent and the walk stops.
    fn path(
        &mut self,
        store: &dyn TrieStore,
        prefix: &[u8],
        key: &B256,
        mut depth: usize,
        leaf: Option<&[u8]>,
    ) -> Result<(), TrieError> {
        let nibbles = Nibbles::unpack(key);
        while depth < nibbles.len() {
            let store_key = node_key(prefix, &nibbles.slice(..depth));
            if !self.nodes.contains_key(store_key.as_slice()) {
                let value = store.get(&store_key)?;
                self.nodes.insert(store_key.to_vec(), value);
            }
            let Some(Some(rlp)) = self.nodes.get(store_key.as_slice()) else {
                return Ok(());
            };
            depth = match Node::decode(rlp)? {
                Node::Branch { children } => {
                    let below = nibbles.slice(depth + 1..);
                    let child = &children[usize::from(nibbles.get_unchecked(depth))];
                    if let (Some(leaf), Some(child)) = (leaf, child) {
                        if LeafNodeRef::new(&below, leaf).rlp(&mut Vec::new()) == *child {
                            return Ok(());
                        }
                    }
                    depth + 1
                }
                Node::Extension { key: shared, .. }
                    if nibbles.slice(depth..).starts_with(&shared) =>
                {
                    depth + shared.len()
                }
                // A leaf (this key's or another's that the update splits), or an extension
                // away from the key: nothing deeper is on the path.
                _ => return Ok(()),
            };
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use alloy_primitives::{keccak256, Address, U256};

    use super::*;
    use crate::{
        apply_changes,
        state::{AccountChange, AccountState},
        MemoryTrieStore,
    };

    /// Records every key read from the store it wraps.
    struct Reads<'a> {
        store: &'a MemoryTrieStore,
        keys: std::sync::Mutex<Vec<Vec<u8>>>,
    }

    impl TrieStore for Reads<'_> {
        fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TrieError> {
            self.keys.lock().unwrap().push(key.to_vec());
            self.store.get(key)
        }
    }

    fn account(i: u64, storage: Vec<(U256, U256)>) -> AccountChange {
        AccountChange {
            address: Address::with_last_byte(i as u8).create2(B256::ZERO, B256::ZERO),
            info: Some(AccountState {
                nonce: i,
                balance: U256::from(i),
                code_hash: alloy_primitives::KECCAK256_EMPTY,
            }),
            before: None,
            new_code: None,
            storage_wiped: false,
            storage,
        }
    }

    /// Prefetches `block`'s paths over `store` (with each account's state before, when the
    /// block's changes carry it), checks that the update reads nothing it did not fetch, and
    /// returns how many keys it fetched.
    fn prefetch_covers_the_update(store: &MemoryTrieStore, block: &[AccountChange]) -> usize {
        let mut prefetched = Prefetched::new();
        for change in block {
            let hashed = keccak256(change.address);
            prefetched
                .account(store, &hashed, 0, change.before.as_ref())
                .unwrap();
            for (slot, _) in &change.storage {
                let slot = keccak256(slot.to_be_bytes::<32>());
                prefetched.slot(store, &hashed, &slot).unwrap();
            }
        }
        let reads = Reads {
            store,
            keys: Default::default(),
        };
        let mut overlay = crate::OverlayTrie::new(&reads);
        apply_changes(&mut overlay, block).unwrap();
        for key in reads.keys.into_inner().unwrap() {
            assert_eq!(
                prefetched.get(&key),
                Some(&store.get(&key).unwrap()),
                "the update read {key:?}, which the prefetch did not"
            );
        }
        prefetched.len()
    }

    #[test]
    fn a_prefetched_path_holds_every_node_the_update_reads() {
        let mut store = MemoryTrieStore::new();
        let base: Vec<_> = (0..200)
            .map(|i| {
                account(
                    i,
                    if i < 100 {
                        vec![(U256::from(i % 3), U256::from(7))]
                    } else {
                        vec![]
                    },
                )
            })
            .collect();
        apply_changes(&mut store, &base).unwrap();
        // Existing accounts with a new slot, and new accounts.
        let block: Vec<_> = (90..110)
            .chain(200..210)
            .map(|i| account(i, vec![(U256::from(9), U256::from(i))]))
            .collect();
        prefetch_covers_the_update(&store, &block);
        // Transfers between accounts without storage, each change with the state before: the
        // update recognises their leaves, and the prefetch reads them no more than it does.
        let transfers = |before: bool| -> Vec<AccountChange> {
            base[100..]
                .iter()
                .map(|old| {
                    let state = old.info.unwrap();
                    AccountChange {
                        info: Some(AccountState {
                            nonce: state.nonce + 1,
                            ..state
                        }),
                        before: before.then_some(state),
                        ..old.clone()
                    }
                })
                .collect()
        };
        let without = prefetch_covers_the_update(&store, &transfers(false));
        let with = prefetch_covers_the_update(&store, &transfers(true));
        assert!(
            with < without,
            "{with} keys read knowing the state before, {without} without"
        );
    }

    #[test]
    fn a_walk_stops_where_the_path_leaves_the_trie() {
        let mut store = MemoryTrieStore::new();
        apply_changes(&mut store, &[account(1, vec![])]).unwrap();
        let mut prefetched = Prefetched::new();
        // One account: the root is its leaf, the only node read for any key.
        prefetched
            .account(&store, &keccak256(Address::ZERO), 0, None)
            .unwrap();
        assert_eq!(prefetched.len(), 1);
        // From below the root: the key there is absent, and the walk ends.
        let mut deeper = Prefetched::new();
        deeper.account(&store, &B256::ZERO, 3, None).unwrap();
        assert_eq!(deeper.len(), 1);
        assert_eq!(deeper.nodes.values().next(), Some(&None));
    }
}

//! The state trie: an Ethereum Merkle Patricia Trie persisted node by node, keyed by nibble path.
//!
//! Layout in a [`TrieStore`] (one byte per nibble in paths):
//! - account trie node at path `p`: `[0x00] ++ p`; keys are `keccak256(address)`, leaf values the
//!   RLP of `[nonce, balance, storageRoot, codeHash]`;
//! - storage trie node of an account: `[0x01] ++ keccak256(address) ++ p`; keys are
//!   `keccak256(slot as 32-byte big endian)`, leaf values the RLP of the slot value. Deleting the
//!   prefix `[0x01] ++ keccak256(address)` wipes one account's storage.
//!
//! Every node is stored under its own path, including nodes embedded in their parent (RLP shorter
//! than 32 bytes), so traversal never decodes embedded children. The root hash is always keccak of
//! the root node's RLP. [`apply_changes`] updates only the paths the block touches (see the
//! `update` module), so the cost of a block grows with the keys it changes, not with the state size,
//! and nothing has to be rebuilt at startup (but a write-back buffer a crash lost, which its owner
//! replays). Large blocks can be updated on several threads
//! ([`apply_changes_parallel`]), and the writes of recent blocks can be kept in memory ahead of
//! the store ([`buffer::WriteBack`]).

use alloy_primitives::{keccak256, Address, B256, U256};
use alloy_rlp::Decodable;
use alloy_trie::{HashBuilder, Nibbles, TrieAccount, EMPTY_ROOT_HASH};

use crate::state::{AccountChange, AccountState};

pub mod buffer;
pub mod snap;
pub mod state;

mod compact;

mod node;
mod parallel;
mod proof;
mod store;
mod update;

pub use parallel::apply_changes_parallel;
pub use proof::{account_proof, AccountProofNodes, StorageProofNodes};
pub use store::{MemoryTrieStore, OverlayTrie, OverlayWrites, TrieStore};

use update::{prepare, trie_root, TrieUpdater, Value};

/// Errors of the trie: its store failed, or a stored node does not decode.
#[derive(Debug, thiserror::Error)]
pub enum TrieError {
    /// The redb table holding the nodes failed.
    #[error("trie node store: {0}")]
    Store(#[from] redb::StorageError),
    /// A write through a store opened for reading (proofs and roots of a read snapshot).
    #[error("trie store opened read-only")]
    ReadOnly,
    /// A stored node is missing or does not decode: the database is damaged.
    #[error("corrupt trie node: {0}")]
    Corrupt(String),
}

/// First key byte of account-trie nodes.
const ACCOUNT_TRIE: u8 = 0x00;
/// First key byte of storage-trie nodes.
const STORAGE_TRIE: u8 = 0x01;

/// The store keys of the account trie's nodes (for a scan of them).
pub fn account_trie_keys() -> std::ops::Range<&'static [u8]> {
    &[ACCOUNT_TRIE]..&[STORAGE_TRIE]
}

/// Store-key prefix of the account trie.
fn account_prefix() -> [u8; 1] {
    [ACCOUNT_TRIE]
}

/// Length of a storage trie's store-key prefix: [`STORAGE_TRIE`] ++ hashed address.
const STORAGE_PREFIX_LEN: usize = 33;

/// Store-key prefix of one account's storage trie (by hashed address).
fn storage_prefix(hashed_address: &B256) -> [u8; STORAGE_PREFIX_LEN] {
    let mut prefix = [0u8; STORAGE_PREFIX_LEN];
    prefix[0] = STORAGE_TRIE;
    prefix[1..].copy_from_slice(hashed_address.as_slice());
    prefix
}

/// RLP of the account leaf `[nonce, balance, storageRoot, codeHash]`.
fn encode_account(info: &AccountState, storage_root: B256) -> Vec<u8> {
    alloy_rlp::encode(TrieAccount::new(
        info.nonce,
        info.balance,
        storage_root,
        info.code_hash,
    ))
}

/// Storage-trie key and leaf value of a slot write (`None` deletes: the value is zero).
fn slot_update(slot: U256, value: U256) -> (B256, Option<Vec<u8>>) {
    (
        keccak256(slot.to_be_bytes::<32>()),
        (!value.is_zero()).then(|| alloy_rlp::encode(value)),
    )
}

/// Apply one block's changes (accounts sorted by address or not — handle both) and return the new state root.
///
/// For each change: info `None` deletes the account leaf and its whole storage trie;
/// `storage_wiped` drops the storage trie first; then storage slot writes are applied (value zero
/// deletes the slot). Several changes for one address are applied in order.
pub fn apply_changes<S: TrieStore>(
    store: &mut S,
    changes: &[AccountChange],
) -> Result<B256, TrieError> {
    let ordered = by_hashed_address(changes);
    let updates = account_updates(store, &ordered)?;
    TrieUpdater::new(store, &account_prefix()).apply(&prepare(updates))
}

/// Changes paired with their hashed address, sorted by it. Stable: changes for one address keep
/// their order.
fn by_hashed_address(changes: &[AccountChange]) -> Vec<(B256, &AccountChange)> {
    let mut ordered: Vec<(B256, &AccountChange)> = changes
        .iter()
        .map(|change| (keccak256(change.address), change))
        .collect();
    ordered.sort_by_key(|(hashed, _)| *hashed);
    ordered
}

/// A hashed key and its new leaf value (`None` deletes it).
type KeyUpdate = (B256, Option<Value>);

/// The account leaf `new` with the storage root of the account leaf `old`.
fn with_storage_root_of(new: &[u8], old: &[u8]) -> Result<Vec<u8>, TrieError> {
    let decode = |mut rlp: &[u8]| {
        TrieAccount::decode(&mut rlp)
            .map_err(|e| TrieError::Corrupt(format!("account leaf does not decode: {e}")))
    };
    let mut account = decode(new)?;
    account.storage_root = decode(old)?.storage_root;
    Ok(alloy_rlp::encode(account))
}

/// Applies each account's storage changes (wipes first) and returns the account-trie updates:
/// the new leaf of each account, or `None` for a deleted one.
fn account_updates<S: TrieStore + ?Sized>(
    store: &mut S,
    ordered: &[(B256, &AccountChange)],
) -> Result<Vec<KeyUpdate>, TrieError> {
    let mut updates = Vec::with_capacity(ordered.len());
    // The last account whose storage an earlier change of this batch wiped or wrote (the
    // changes of one account are adjacent and in order).
    let mut storage_changed = None;
    for (hashed, change) in ordered {
        let prefix = storage_prefix(hashed);
        let changes_storage =
            change.info.is_none() || change.storage_wiped || !change.storage.is_empty();
        // An empty storage trie has no nodes, not even its root: nothing to wipe.
        if (change.info.is_none() || change.storage_wiped) && store.get(&prefix)?.is_some() {
            store.delete_prefix(&prefix)?;
        }
        let leaf = match &change.info {
            None => None,
            // Storage untouched: the storage root stays the one in the account's current leaf
            // (a transfer's accounts cost no read of their storage trie). An account without
            // a leaf has no storage trie: deleting a leaf wipes it, above. The leaf now is the
            // account before the block with, as a guess, no storage (right for every account
            // without storage, and checked against the leaf's hash).
            Some(info) if !changes_storage && storage_changed != Some(*hashed) => {
                Some(Value::keep_storage_root(
                    encode_account(info, EMPTY_ROOT_HASH),
                    change
                        .before
                        .map(|before| encode_account(&before, EMPTY_ROOT_HASH)),
                ))
            }
            Some(info) => {
                // What the caller says the account and its slots held before the block, unless
                // an earlier change of this batch changed them (or its storage went): their
                // leaves are then recognised by hash rather than read. The account's leaf held
                // the storage root stored now.
                let hinted = !change.storage_wiped && storage_changed != Some(*hashed);
                let hints: &[(U256, U256)] = if hinted { &change.storage_before } else { &[] };
                let slot_before = |slot: &U256| {
                    let i = hints.binary_search_by_key(slot, |(s, _)| *s).ok()?;
                    Some(hints[i].1).filter(|value| !value.is_zero())
                };
                let slots = change.storage.iter().map(|(slot, value)| {
                    let (key, leaf) = slot_update(*slot, *value);
                    let current = slot_before(slot).map(alloy_rlp::encode);
                    (key, leaf.map(|bytes| Value::with_current(bytes, current)))
                });
                let (stored_root, storage_root) = TrieUpdater::new(&mut *store, &prefix)
                    .apply_keeping_root(&prepare(slots.collect()))?;
                let current_leaf = change.before.filter(|_| hinted).map(|before| {
                    let root = stored_root
                        .as_deref()
                        .map_or(EMPTY_ROOT_HASH, node::root_hash);
                    encode_account(&before, root)
                });
                Some(Value::with_current(
                    encode_account(info, storage_root),
                    current_leaf,
                ))
            }
        };
        if changes_storage {
            storage_changed = Some(*hashed);
        }
        updates.push((*hashed, leaf));
    }
    Ok(updates)
}

/// Current state root (`EMPTY_ROOT_HASH` for an empty trie) without changes.
pub fn state_root<S: TrieStore + ?Sized>(store: &S) -> Result<B256, TrieError> {
    trie_root(store, &account_prefix())
}

/// Storage root of one account as currently stored (`EMPTY_ROOT_HASH` when it has none).
pub fn storage_root<S: TrieStore + ?Sized>(store: &S, address: Address) -> Result<B256, TrieError> {
    trie_root(store, &storage_prefix(&keccak256(address)))
}

/// Root of a trie over `(hashed key, leaf value)` pairs, built from scratch.
fn root_from_scratch(mut leaves: Vec<(B256, Vec<u8>)>) -> B256 {
    leaves.sort_by_key(|(key, _)| *key);
    let mut builder = HashBuilder::default();
    for (key, value) in &leaves {
        builder.add_leaf(Nibbles::unpack(key), value);
    }
    builder.root()
}

/// Reference: root from scratch with `alloy_trie::HashBuilder` over a full account set (used for
/// genesis checks and tests).
///
/// Zero-valued slots are skipped; for a repeated slot (or address) the last entry wins.
pub fn state_root_from_scratch(
    accounts: impl IntoIterator<Item = (Address, AccountState, Vec<(U256, U256)>)>,
) -> B256 {
    let mut by_key = std::collections::BTreeMap::new();
    for (address, info, storage) in accounts {
        let mut slots = std::collections::BTreeMap::new();
        for (slot, value) in storage {
            let (key, leaf) = slot_update(slot, value);
            slots.insert(key, leaf);
        }
        let slots: Vec<_> = slots
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .collect();
        let storage_root = if slots.is_empty() {
            EMPTY_ROOT_HASH
        } else {
            root_from_scratch(slots)
        };
        by_key.insert(keccak256(address), encode_account(&info, storage_root));
    }
    root_from_scratch(by_key.into_iter().collect())
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::store::tests::TRIE_NODES;
    use std::{collections::BTreeMap, str::FromStr};

    use alloy_primitives::Bytes;
    use alloy_trie::{proof::verify_proof, KECCAK_EMPTY};
    use rand::{rngs::StdRng, Rng, SeedableRng};

    use super::{update::tests::walk_trie, *};

    type GenesisAccount = (Address, AccountState, Vec<(U256, U256)>);
    type Model = BTreeMap<Address, (AccountState, BTreeMap<U256, U256>)>;

    fn scratch(model: &Model) -> B256 {
        state_root_from_scratch(
            model
                .iter()
                .map(|(a, (info, slots))| (*a, *info, slots.clone().into_iter().collect())),
        )
    }

    fn scratch_storage_root(slots: &BTreeMap<U256, U256>) -> B256 {
        let leaves: Vec<_> = slots
            .iter()
            .filter_map(|(s, v)| match slot_update(*s, *v) {
                (k, Some(v)) => Some((k, v)),
                _ => None,
            })
            .collect();
        if leaves.is_empty() {
            EMPTY_ROOT_HASH
        } else {
            root_from_scratch(leaves)
        }
    }

    fn apply_to_model(model: &mut Model, change: &AccountChange) {
        let Some(info) = change.info else {
            model.remove(&change.address);
            return;
        };
        let entry = model.entry(change.address).or_default();
        if change.storage_wiped {
            entry.1.clear();
        }
        for (slot, value) in &change.storage {
            if value.is_zero() {
                entry.1.remove(slot);
            } else {
                entry.1.insert(*slot, *value);
            }
        }
        entry.0 = info;
    }

    /// Every stored node is reachable from the roots and every reference matches its child.
    fn assert_no_stale_nodes(store: &MemoryTrieStore) {
        let (mut nodes, accounts) = walk_trie(store, &account_prefix());
        for (hashed, _) in &accounts {
            let (storage_nodes, _) = walk_trie(store, &storage_prefix(hashed));
            nodes.extend(storage_nodes);
        }
        let stored: Vec<_> = store.iter().map(|(k, _)| k.to_vec()).collect();
        assert_eq!(stored, nodes.into_iter().collect::<Vec<_>>());
    }

    /// `n` distinct test addresses.
    pub(crate) fn address_pool(n: u64) -> Vec<Address> {
        (0..n)
            .map(|i| Address::from_word(B256::from(U256::from(i))))
            .collect()
    }

    pub(crate) fn random_change(rng: &mut StdRng, pool: &[Address]) -> AccountChange {
        let address = pool[rng.gen_range(0..pool.len())];
        if rng.gen_bool(0.2) {
            return AccountChange::deletion(address);
        }
        let balance = if rng.gen_bool(0.5) {
            U256::from(rng.gen::<u8>())
        } else {
            U256::from(rng.gen::<u128>())
        };
        let code_hash = if rng.gen_bool(0.7) {
            KECCAK_EMPTY
        } else {
            B256::from(U256::from(rng.gen::<u64>()))
        };
        let storage = (0..rng.gen_range(0..6))
            .map(|_| {
                let slot = U256::from(rng.gen_range(0..40u64));
                let value = if rng.gen_bool(0.3) {
                    U256::ZERO
                } else {
                    U256::from(rng.gen_range(1..1000u64))
                };
                (slot, value)
            })
            .collect();
        AccountChange {
            address,
            before: None,
            info: Some(AccountState {
                nonce: rng.gen_range(0..5),
                balance,
                code_hash,
            }),
            new_code: None,
            storage_before: Vec::new(),
            storage_wiped: rng.gen_bool(0.1),
            storage,
        }
    }

    /// What a caller may say of an account before its change: what the model holds (right unless
    /// the same batch changed the account already), nothing, or something wrong.
    fn before_hint(rng: &mut StdRng, model: &Model, address: Address) -> Option<AccountState> {
        match rng.gen_range(0..4) {
            0 => None,
            1 => Some(AccountState {
                nonce: 99,
                ..AccountState::default()
            }),
            _ => model.get(&address).map(|(info, _)| *info),
        }
    }

    /// What a caller may say of the slots an account's change writes: what the model holds
    /// (right unless the same batch changed them already), nothing, or something wrong.
    fn storage_hint(rng: &mut StdRng, model: &Model, change: &AccountChange) -> Vec<(U256, U256)> {
        let held = |slot: &U256| {
            model
                .get(&change.address)
                .and_then(|(_, slots)| slots.get(slot).copied())
                .unwrap_or_default()
        };
        let mut hint: Vec<(U256, U256)> = match rng.gen_range(0..4) {
            0 => return Vec::new(),
            1 => change
                .storage
                .iter()
                .map(|(slot, _)| (*slot, held(slot) + U256::from(1)))
                .collect(),
            _ => change
                .storage
                .iter()
                .map(|(slot, _)| (*slot, held(slot)))
                .collect(),
        };
        hint.sort();
        hint.dedup_by_key(|(slot, _)| *slot);
        hint
    }

    #[test]
    fn incremental_root_equals_from_scratch_over_random_blocks_and_deleting_all_empties_the_store()
    {
        let mut rng = StdRng::seed_from_u64(42);
        let pool = address_pool(300);
        let mut store = MemoryTrieStore::new();
        let mut model = Model::new();
        for step in 0..400 {
            let count = if step % 50 == 0 {
                120
            } else {
                rng.gen_range(1..12)
            };
            let mut changes: Vec<_> = (0..count).map(|_| random_change(&mut rng, &pool)).collect();
            if rng.gen_bool(0.5) {
                changes.sort_by_key(|c| c.address);
            }
            for change in &mut changes {
                change.before = before_hint(&mut rng, &model, change.address);
                change.storage_before = storage_hint(&mut rng, &model, change);
                apply_to_model(&mut model, change);
            }
            let root = apply_changes(&mut store, &changes).unwrap();
            assert_eq!(root, scratch(&model), "step {step}");
            assert_eq!(state_root(&store).unwrap(), root);
            for change in &changes {
                let expected = model
                    .get(&change.address)
                    .map_or(EMPTY_ROOT_HASH, |(_, s)| scratch_storage_root(s));
                assert_eq!(
                    storage_root(&store, change.address).unwrap(),
                    expected,
                    "step {step}"
                );
            }
            if step % 20 == 0 {
                assert_no_stale_nodes(&store);
            }
        }
        assert_no_stale_nodes(&store);
        let deletes: Vec<_> = model
            .keys()
            .map(|address| AccountChange::deletion(*address))
            .collect();
        assert_eq!(
            apply_changes(&mut store, &deletes).unwrap(),
            EMPTY_ROOT_HASH
        );
        assert_eq!(state_root(&store).unwrap(), EMPTY_ROOT_HASH);
        assert!(store.is_empty());
    }

    #[test]
    fn the_update_on_threads_leaves_the_serial_updates_root_and_nodes() {
        let mut rng = StdRng::seed_from_u64(7);
        let pool = address_pool(3_000);
        let mut store = MemoryTrieStore::new();
        let mut model = Model::new();
        for step in 0..60 {
            let count = rng.gen_range(64..400);
            let mut changes: Vec<_> = (0..count).map(|_| random_change(&mut rng, &pool)).collect();
            for change in &mut changes {
                change.before = before_hint(&mut rng, &model, change.address);
                change.storage_before = storage_hint(&mut rng, &model, change);
                apply_to_model(&mut model, change);
            }
            let mut serial = store.clone();
            let expected = apply_changes(&mut serial, &changes).unwrap();
            let base = store.clone();
            let threads = [2, 3, 16][step % 3];
            let root = parallel::apply_on_threads(&mut store, &base, &changes, threads).unwrap();
            assert_eq!(root, expected, "step {step}");
            assert_eq!(root, scratch(&model), "step {step}");
            assert!(store == serial, "step {step}: stored nodes differ");
        }
        assert_no_stale_nodes(&store);

        // A block that deletes all accounts but one collapses the root; then the last one goes.
        let mut addresses: Vec<Address> = model.keys().copied().collect();
        let last = addresses.pop().unwrap();
        let deletes: Vec<_> = addresses.into_iter().map(AccountChange::deletion).collect();
        let mut serial = store.clone();
        let expected = apply_changes(&mut serial, &deletes).unwrap();
        let base = store.clone();
        assert_eq!(
            parallel::apply_on_threads(&mut store, &base, &deletes, 2).unwrap(),
            expected
        );
        assert!(store == serial);
        assert_no_stale_nodes(&store);
        let base = store.clone();
        assert_eq!(
            parallel::apply_on_threads(&mut store, &base, &[AccountChange::deletion(last)], 2)
                .unwrap(),
            EMPTY_ROOT_HASH
        );
        assert!(store.is_empty());
    }

    #[test]
    fn the_update_on_threads_runs_serially_over_a_base_that_is_not_the_store() {
        let mut rng = StdRng::seed_from_u64(9);
        let pool = address_pool(500);
        let mut store = MemoryTrieStore::new();
        let first: Vec<_> = (0..200).map(|_| random_change(&mut rng, &pool)).collect();
        apply_changes(&mut store, &first).unwrap();
        let stale = MemoryTrieStore::new();
        let changes: Vec<_> = (0..200).map(|_| random_change(&mut rng, &pool)).collect();
        let mut serial = store.clone();
        let expected = apply_changes(&mut serial, &changes).unwrap();
        assert_eq!(
            parallel::apply_on_threads(&mut store, &stale, &changes, 2).unwrap(),
            expected
        );
        assert!(store == serial);
    }

    #[test]
    fn empty_block_keeps_root_and_empty_trie_has_empty_root() {
        let mut store = MemoryTrieStore::new();
        assert_eq!(state_root(&store).unwrap(), EMPTY_ROOT_HASH);
        assert_eq!(apply_changes(&mut store, &[]).unwrap(), EMPTY_ROOT_HASH);
        assert_eq!(state_root_from_scratch([]), EMPTY_ROOT_HASH);
    }

    /// `testdata/genesis/<name>.json` of the repository root, or its `.json.gz` (large files).
    fn read_genesis(name: &str) -> serde_json::Value {
        let base = format!(
            "{}/../../testdata/genesis/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let gz = format!("{base}.gz");
        if std::path::Path::new(&gz).exists() {
            let file = std::fs::File::open(&gz).unwrap();
            serde_json::from_reader(std::io::BufReader::new(flate2::read::GzDecoder::new(file)))
                .unwrap()
        } else {
            serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap()
        }
    }

    /// Accounts of a genesis file as `(address, state, storage)` and its published state root.
    fn genesis_accounts(name: &str) -> (Vec<GenesisAccount>, B256) {
        let json = read_genesis(name);
        let root = B256::from_str(json["stateRoot"].as_str().unwrap()).unwrap();
        let mut accounts = Vec::new();
        for (address, account) in json["alloc"].as_object().unwrap() {
            let address = Address::from_str(address).unwrap();
            let number = |v: &serde_json::Value| U256::from_str(v.as_str().unwrap()).unwrap();
            let balance = account.get("balance").map_or(U256::ZERO, number);
            let nonce = account.get("nonce").map_or(0, |n| number(n).to::<u64>());
            let code_hash = account
                .get("code")
                .map(|c| Bytes::from_str(c.as_str().unwrap()).unwrap())
                .filter(|c| !c.is_empty())
                .map_or(KECCAK_EMPTY, keccak256);
            let storage = account
                .get("storage")
                .and_then(|s| s.as_object())
                .map(|s| {
                    s.iter()
                        .map(|(k, v)| {
                            let word = |x: &str| U256::from_be_bytes(B256::from_str(x).unwrap().0);
                            (word(k), word(v.as_str().unwrap()))
                        })
                        .collect()
                })
                .unwrap_or_default();
            accounts.push((
                address,
                AccountState {
                    nonce,
                    balance,
                    code_hash,
                },
                storage,
            ));
        }
        (accounts, root)
    }

    fn check_genesis(name: &str) {
        let (accounts, expected) = genesis_accounts(name);
        assert_eq!(
            state_root_from_scratch(accounts.clone()),
            expected,
            "{name} from scratch"
        );
        let changes: Vec<_> = accounts
            .into_iter()
            .map(|(address, info, storage)| AccountChange {
                address,
                before: None,
                info: Some(info),
                new_code: None,
                storage_before: Vec::new(),
                storage_wiped: false,
                storage,
            })
            .collect();
        let mut store = MemoryTrieStore::new();
        assert_eq!(
            apply_changes(&mut store, &changes).unwrap(),
            expected,
            "{name} incremental"
        );
        // Applied again in small blocks onto a fresh store, in reverse order.
        let mut store = MemoryTrieStore::new();
        let mut root = EMPTY_ROOT_HASH;
        for chunk in changes.rchunks(500) {
            root = apply_changes(&mut store, chunk).unwrap();
        }
        assert_eq!(root, expected, "{name} incremental in blocks");
    }

    #[test]
    fn mainnet_genesis_state_root_matches_published_root() {
        check_genesis("mainnet");
    }

    #[test]
    fn sepolia_genesis_state_root_matches_published_root() {
        check_genesis("sepolia");
    }

    #[test]
    fn holesky_genesis_with_code_and_storage_matches_published_root() {
        check_genesis("holesky");
    }

    #[test]
    fn account_and_storage_proofs_verify_against_the_roots() {
        let mut rng = StdRng::seed_from_u64(3);
        let pool = address_pool(200);
        let mut store = MemoryTrieStore::new();
        let mut model = Model::new();
        for _ in 0..20 {
            let changes: Vec<_> = (0..30).map(|_| random_change(&mut rng, &pool)).collect();
            changes.iter().for_each(|c| apply_to_model(&mut model, c));
            apply_changes(&mut store, &changes).unwrap();
        }
        let root = state_root(&store).unwrap();
        let slots: Vec<B256> = (0..45u64).map(|s| B256::from(U256::from(s))).collect();
        let absent = Address::repeat_byte(0xee);
        for address in pool.iter().copied().chain([absent]) {
            let proof = account_proof(&store, address, &slots).unwrap();
            let key = Nibbles::unpack(keccak256(address));
            let expected = model
                .get(&address)
                .map(|(info, slots)| encode_account(info, scratch_storage_root(slots)));
            assert_eq!(proof.account.map(alloy_rlp::encode), expected);
            verify_proof(root, key, expected, &proof.account_proof).unwrap();
            let storage = model
                .get(&address)
                .map(|(_, s)| s.clone())
                .unwrap_or_default();
            assert_eq!(proof.storage_root, scratch_storage_root(&storage));
            for slot_proof in &proof.storage_proofs {
                let value = storage
                    .get(&U256::from_be_bytes(slot_proof.slot.0))
                    .copied()
                    .unwrap_or_default();
                assert_eq!(slot_proof.value, value);
                let expected = (!value.is_zero()).then(|| alloy_rlp::encode(value));
                let key = Nibbles::unpack(keccak256(slot_proof.slot));
                verify_proof(proof.storage_root, key, expected, &slot_proof.proof).unwrap();
            }
        }
        let empty = account_proof(&MemoryTrieStore::new(), absent, &slots[..1]).unwrap();
        verify_proof(
            EMPTY_ROOT_HASH,
            Nibbles::unpack(keccak256(absent)),
            None,
            &empty.account_proof,
        )
        .unwrap();
    }

    #[test]
    fn redb_table_store_gives_same_roots_as_memory_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trie.redb");
        let mut rng = StdRng::seed_from_u64(9);
        let pool = address_pool(150);
        let mut memory = MemoryTrieStore::new();
        let mut last = EMPTY_ROOT_HASH;
        for _ in 0..3 {
            // Reopen the database each round: the trie persists, nothing is rebuilt.
            let db = redb::Database::create(&path).unwrap();
            for _ in 0..15 {
                let changes: Vec<_> = (0..20).map(|_| random_change(&mut rng, &pool)).collect();
                let expected = apply_changes(&mut memory, &changes).unwrap();
                let tx = db.begin_write().unwrap();
                let root = {
                    let mut table = tx.open_table(TRIE_NODES).unwrap();
                    assert_eq!(state_root(&table).unwrap(), last);
                    apply_changes(&mut table, &changes).unwrap()
                };
                tx.commit().unwrap();
                assert_eq!(root, expected);
                last = root;
            }
        }
        let db = redb::Database::create(&path).unwrap();
        let read = redb::ReadableDatabase::begin_read(&db).unwrap();
        let read_table = read.open_table(TRIE_NODES).unwrap();
        assert_eq!(state_root(&read_table).unwrap(), last);
        let proof = account_proof(&read_table, pool[0], &[]).unwrap();
        assert_eq!(proof, account_proof(&memory, pool[0], &[]).unwrap());
        let tx = db.begin_write().unwrap();
        let table = tx.open_table(TRIE_NODES).unwrap();
        let mut stored_bytes = 0;
        let stored: Vec<(Vec<u8>, Vec<u8>)> = redb::ReadableTable::iter(&table)
            .unwrap()
            .map(|e| {
                let (k, v) = e.unwrap();
                stored_bytes += v.value().len();
                let rlp = compact::expand(v.value()).unwrap().into_owned();
                (k.value().to_vec(), rlp)
            })
            .collect();
        let in_memory: Vec<_> = memory
            .iter()
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect();
        assert_eq!(stored, in_memory);
        // The leaves of accounts without storage or code are kept compact.
        let rlp_bytes: usize = memory.iter().map(|(_, v)| v.len()).sum();
        assert!(stored_bytes < rlp_bytes, "{stored_bytes} of {rlp_bytes}");
    }

    /// Counts store operations of the wrapped store.
    struct CountingStore<'a> {
        inner: &'a mut MemoryTrieStore,
        reads: std::cell::Cell<usize>,
        storage_reads: std::cell::Cell<usize>,
        ops: usize,
    }

    impl<'a> CountingStore<'a> {
        fn new(inner: &'a mut MemoryTrieStore) -> Self {
            Self {
                inner,
                reads: Default::default(),
                storage_reads: Default::default(),
                ops: 0,
            }
        }
    }

    impl TrieStore for CountingStore<'_> {
        fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TrieError> {
            self.reads.set(self.reads.get() + 1);
            if key[0] == STORAGE_TRIE {
                self.storage_reads.set(self.storage_reads.get() + 1);
            }
            self.inner.get(key)
        }
        fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), TrieError> {
            self.ops += 1;
            self.inner.put(key, value)
        }
        fn delete(&mut self, key: &[u8]) -> Result<(), TrieError> {
            self.ops += 1;
            self.inner.delete(key)
        }
        fn delete_prefix(&mut self, prefix: &[u8]) -> Result<(), TrieError> {
            self.ops += 1;
            self.inner.delete_prefix(prefix)
        }
    }

    /// Store reads and writes, and the root, of one 100-account block on top of `base` accounts
    /// (EOAs), each account's change carrying `before(its index)`.
    fn block_store_ops(
        base: u64,
        before: impl Fn(u64) -> Option<AccountState>,
    ) -> (usize, usize, B256) {
        let state = |i: u64, nonce: u64| AccountState {
            nonce,
            balance: U256::from(i),
            code_hash: KECCAK_EMPTY,
        };
        let account = |i: u64, nonce: u64, before: Option<AccountState>| AccountChange {
            address: Address::from_word(keccak256(i.to_be_bytes())),
            before,
            info: Some(state(i, nonce)),
            new_code: None,
            storage_before: Vec::new(),
            storage_wiped: false,
            storage: vec![],
        };
        let mut store = MemoryTrieStore::new();
        apply_changes(
            &mut store,
            &(0..base).map(|i| account(i, 1, None)).collect::<Vec<_>>(),
        )
        .unwrap();
        let block: Vec<_> = (0..100)
            .map(|i| i * (base / 100))
            .map(|i| account(i, 2, before(i)))
            .collect();
        let mut counting = CountingStore::new(&mut store);
        let root = apply_changes(&mut counting, &block).unwrap();
        (counting.reads.get(), counting.ops, root)
    }

    #[test]
    fn an_account_known_before_the_block_is_updated_without_reading_its_leaf() {
        let unknown = block_store_ops(30_000, |_| None);
        let known = block_store_ops(30_000, |i| {
            Some(AccountState {
                nonce: 1,
                balance: U256::from(i),
                code_hash: KECCAK_EMPTY,
            })
        });
        let wrong = block_store_ops(30_000, |i| {
            Some(AccountState {
                nonce: 7,
                balance: U256::from(i),
                code_hash: KECCAK_EMPTY,
            })
        });
        // Same root and writes whatever the hint; a right one saves each account's leaf read
        // (but where two of the block's accounts share the leaf's parent), a wrong one nothing.
        assert_eq!((known.1, known.2), (unknown.1, unknown.2));
        assert_eq!(wrong, unknown);
        assert!(
            known.0 + 95 <= unknown.0,
            "{} reads with the accounts known, {} without",
            known.0,
            unknown.0
        );
    }

    #[test]
    fn an_account_whose_storage_is_unchanged_keeps_its_root_without_reading_its_storage_trie() {
        let contract = Address::repeat_byte(0xc0);
        let eoa = Address::repeat_byte(0xe0);
        let change = |address, nonce, storage: Vec<(u64, u64)>| AccountChange {
            address,
            before: None,
            info: Some(AccountState {
                nonce,
                balance: U256::from(nonce),
                code_hash: if address == contract {
                    B256::repeat_byte(0xcc)
                } else {
                    KECCAK_EMPTY
                },
            }),
            new_code: None,
            storage_before: Vec::new(),
            storage_wiped: false,
            storage: storage
                .into_iter()
                .map(|(slot, value)| (U256::from(slot), U256::from(value)))
                .collect(),
        };
        fn apply<S: TrieStore>(store: &mut S, model: &mut Model, changes: &[AccountChange]) {
            changes.iter().for_each(|c| apply_to_model(model, c));
            assert_eq!(apply_changes(store, changes).unwrap(), scratch(model));
        }
        let mut store = MemoryTrieStore::new();
        let mut model = Model::new();
        let block = [
            change(contract, 1, vec![(1, 2), (3, 4)]),
            change(eoa, 1, vec![]),
        ];
        apply(&mut store, &mut model, &block);
        // Balances and nonces only: the contract keeps its storage root, read from its leaf.
        let mut counting = CountingStore::new(&mut store);
        let block = [change(contract, 2, vec![]), change(eoa, 2, vec![])];
        apply(&mut counting, &mut model, &block);
        assert_eq!(counting.storage_reads.get(), 0);
        // A storage write, then a change without one, in one block: the second keeps the
        // root the first made.
        let block = [
            change(contract, 3, vec![(1, 9)]),
            change(contract, 4, vec![]),
        ];
        apply(&mut store, &mut model, &block);
        assert_eq!(
            storage_root(&store, contract).unwrap(),
            scratch_storage_root(&model[&contract].1)
        );
    }

    /// A contract whose slots and account the caller knows before the block: the slots' leaves
    /// and the account's are recognised by hash, not read; the root and writes are the same.
    #[test]
    fn slots_known_before_the_block_are_updated_without_reading_their_leaves() {
        let contract = |i: u64| Address::from_word(keccak256(i.to_be_bytes()));
        let state = |nonce| AccountState {
            nonce,
            balance: U256::from(nonce),
            code_hash: B256::repeat_byte(0xcc),
        };
        let slots = |nonce: u64| -> Vec<(U256, U256)> {
            (0..6u64)
                .map(|s| (U256::from(s), U256::from(nonce * 100 + s + 1)))
                .collect()
        };
        let change = |i, nonce, known: bool| AccountChange {
            address: contract(i),
            before: known.then(|| state(nonce - 1)),
            info: Some(state(nonce)),
            new_code: None,
            storage_before: if known { slots(nonce - 1) } else { Vec::new() },
            storage_wiped: false,
            storage: slots(nonce),
        };
        let mut base = MemoryTrieStore::new();
        let contracts = 0..50u64;
        let created: Vec<_> = contracts.clone().map(|i| change(i, 1, false)).collect();
        apply_changes(&mut base, &created).unwrap();
        let ops = |known| {
            let mut store = base.clone();
            let block: Vec<_> = contracts.clone().map(|i| change(i, 2, known)).collect();
            let mut counting = CountingStore::new(&mut store);
            let root = apply_changes(&mut counting, &block).unwrap();
            let reads = counting.reads.get();
            (reads, counting.ops, root, store)
        };
        let (unknown_reads, unknown_ops, unknown_root, unknown_store) = ops(false);
        let (known_reads, known_ops, known_root, known_store) = ops(true);
        assert_eq!((known_root, known_ops), (unknown_root, unknown_ops));
        assert!(known_store == unknown_store);
        // Each contract: its six slots' leaves and its account leaf are no longer read.
        assert!(
            known_reads + 50 * 7 <= unknown_reads,
            "{known_reads} reads with the slots known, {unknown_reads} without"
        );
    }

    #[test]
    fn block_store_ops_grow_with_touched_accounts_not_state_size() {
        let (small_reads, small_writes, _) = block_store_ops(1_000, |_| None);
        let (large_reads, large_writes, _) = block_store_ops(30_000, |_| None);
        // Only nodes on the 100 touched paths are read and rewritten: about the trie depth (3 to
        // 5 here) per account (their storage tries are not read: no storage changed).
        assert!(
            large_writes <= 100 * 6,
            "{large_writes} writes for 100 accounts"
        );
        assert!(
            large_reads <= 100 * 6,
            "{large_reads} reads for 100 accounts"
        );
        assert!(
            large_writes < small_writes * 2,
            "writes: {small_writes} vs {large_writes}"
        );
        assert!(
            large_reads < small_reads * 2,
            "reads: {small_reads} vs {large_reads}"
        );
    }
}

//! Incremental, path-keyed Merkle Patricia Trie updates.
//!
//! One [`TrieUpdater::apply`] call takes a batch of sorted key updates and walks the trie once,
//! descending only into subtrees that some update touches (updates are split by nibble at each
//! branch). Only nodes on touched paths are read, re-encoded and re-hashed, so the cost is
//! `O(touched keys × depth)`, independent of the number of untouched keys.
//!
//! Ownership rule of the recursion: a call handling the node at `path` never writes or deletes the
//! store entry at `path` itself; it returns the new node for that position and its caller decides
//! whether to store it there, merge it into its own node (and delete the entry), or delete it.

use alloy_primitives::B256;
use alloy_trie::{
    nodes::{LeafNodeRef, RlpNode},
    Nibbles, EMPTY_ROOT_HASH,
};
use arrayvec::ArrayVec;

use super::TrieError;
use super::{
    node::{root_hash, Node},
    store::TrieStore,
};

/// A full key and its new value (`None` deletes the key).
pub(crate) type Update = (Nibbles, Option<Value>);

/// A key's new leaf value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Value {
    /// The new leaf's bytes (an account keeping its storage root: with the empty root).
    bytes: Vec<u8>,
    /// An account leaf whose storage is unchanged: its storage root is the one of the leaf it
    /// replaces (none: the empty root). The leaf is read by the update anyway (or recognised,
    /// below), so the storage trie's root is never read for it.
    keep_storage_root: bool,
    /// What the key's leaf holds now, when the caller knows it (the account or slot before the
    /// block): a parent's reference to that leaf is then recognised by its hash and the leaf is
    /// not read from the store. A wrong guess costs one hash, and the leaf is read as without one.
    current: Option<Vec<u8>>,
}

impl Value {
    /// An account leaf (encoded with the empty storage root) that keeps the storage root of the
    /// leaf it replaces, and the leaf the caller believes is stored now, if any.
    pub(crate) fn keep_storage_root(bytes: Vec<u8>, current: Option<Vec<u8>>) -> Self {
        Self {
            bytes,
            keep_storage_root: true,
            current,
        }
    }

    /// A leaf value, and the leaf the caller believes is stored now, if any.
    pub(crate) fn with_current(bytes: Vec<u8>, current: Option<Vec<u8>>) -> Self {
        Self {
            bytes,
            keep_storage_root: false,
            current,
        }
    }
}

impl From<Vec<u8>> for Value {
    fn from(bytes: Vec<u8>) -> Self {
        Self {
            bytes,
            keep_storage_root: false,
            current: None,
        }
    }
}

/// Sort updates by key and keep the last update of each key.
pub(crate) fn prepare<V: Into<Value>>(mut updates: Vec<(B256, Option<V>)>) -> Vec<Update> {
    // Stable: of one key's updates, the last stays last.
    updates.sort_by_key(|(key, _)| *key);
    let mut out: Vec<Update> = Vec::with_capacity(updates.len());
    let mut last_key = None;
    for (key, value) in updates {
        let value = value.map(Into::into);
        if last_key == Some(key) {
            if let Some(last) = out.last_mut() {
                last.1 = value;
            }
        } else {
            out.push((Nibbles::unpack(key), value));
            last_key = Some(key);
        }
    }
    out
}

/// Longest node key: a storage trie's prefix and a full path of 64 nibbles.
const MAX_NODE_KEY: usize = crate::STORAGE_PREFIX_LEN + 64;

/// Store key of the node at `path` in the trie identified by `prefix`, one byte a nibble. Built
/// on the stack: every node read and write makes one.
pub(crate) fn node_key(prefix: &[u8], path: &Nibbles) -> ArrayVec<u8, MAX_NODE_KEY> {
    let mut key = ArrayVec::new();
    key.try_extend_from_slice(prefix)
        .expect("a trie prefix is at most STORAGE_PREFIX_LEN bytes");
    key.extend(path.iter());
    key
}

/// Root hash of the trie identified by `prefix`.
pub(crate) fn trie_root<S: TrieStore + ?Sized>(
    store: &S,
    prefix: &[u8],
) -> Result<B256, TrieError> {
    Ok(store
        .get(prefix)?
        .map_or(EMPTY_ROOT_HASH, |rlp| root_hash(&rlp)))
}

/// Load the node at `path`, if any.
pub(crate) fn load<S: TrieStore + ?Sized>(
    store: &S,
    prefix: &[u8],
    path: &Nibbles,
) -> Result<Option<Node>, TrieError> {
    store
        .get(&node_key(prefix, path))?
        .map(|rlp| Node::decode(&rlp))
        .transpose()
}

/// A branch's child after an update: its nibble, whether it existed, its new node (`None`: gone).
pub(crate) struct Child {
    pub nibble: u8,
    pub existed: bool,
    pub node: Option<Node>,
}

/// Sorted updates grouped by their nibble at `depth` (all share the nibbles before it).
pub(crate) fn by_nibble(depth: usize, updates: &[Update]) -> impl Iterator<Item = (u8, &[Update])> {
    updates
        .chunk_by(move |(a, _), (b, _)| a.get_unchecked(depth) == b.get_unchecked(depth))
        .map(move |group| (group[0].0.get_unchecked(depth), group))
}

/// The key and current leaf value of the one update in `group`, when it knows what the key's leaf
/// holds now: a parent's reference may then be recognised as that leaf ([`recognised_leaf`]).
fn known_leaf(group: &[Update]) -> Option<(&Nibbles, &Vec<u8>)> {
    match group {
        [(
            key,
            Some(Value {
                current: Some(current),
                ..
            }),
        )] => Some((key, current)),
        _ => None,
    }
}

/// The leaf at `path` that its parent references as `child`, when that is the leaf of `key`
/// holding `current`: the store need not be read. A wrong guess costs one hash of the leaf.
fn recognised_leaf(
    child: &RlpNode,
    path: &Nibbles,
    (key, current): (&Nibbles, &Vec<u8>),
) -> Option<Node> {
    let key = key.slice(path.len()..);
    let mut rlp = Vec::new();
    let node_ref = LeafNodeRef::new(&key, current).rlp(&mut rlp);
    (node_ref == *child).then(|| Node::Leaf {
        key,
        value: current.clone(),
    })
}

/// Applies update batches to one trie (the account trie or one storage trie).
pub(crate) struct TrieUpdater<'a, S: TrieStore + ?Sized> {
    store: &'a mut S,
    prefix: &'a [u8],
}

impl<'a, S: TrieStore + ?Sized> TrieUpdater<'a, S> {
    /// Updater for the trie whose nodes live under `prefix`.
    pub(crate) fn new(store: &'a mut S, prefix: &'a [u8]) -> Self {
        Self { store, prefix }
    }

    /// Apply sorted, deduplicated updates (see [`prepare`]) and return the new root hash.
    pub(crate) fn apply(self, updates: &[Update]) -> Result<B256, TrieError> {
        self.apply_keeping_root(updates).map(|(_, root)| root)
    }

    /// [`TrieUpdater::apply`], also returning the root node's RLP before the updates (`None`:
    /// the trie was empty).
    pub(crate) fn apply_keeping_root(
        mut self,
        updates: &[Update],
    ) -> Result<(Option<Vec<u8>>, B256), TrieError> {
        let root_path = Nibbles::new();
        let stored = self.store.get(&node_key(self.prefix, &root_path))?;
        if updates.is_empty() {
            let root = stored.as_deref().map_or(EMPTY_ROOT_HASH, root_hash);
            return Ok((stored, root));
        }
        let existing = stored.as_deref().map(Node::decode).transpose()?;
        let existed = existing.is_some();
        let root = self.update(root_path, existing, updates)?;
        Ok((stored, self.store_root(existed, root)?))
    }

    /// Store `root` as the trie's root node (delete it when the trie became empty) and return the
    /// root hash.
    pub(crate) fn store_root(
        &mut self,
        existed: bool,
        root: Option<Node>,
    ) -> Result<B256, TrieError> {
        let root_path = Nibbles::new();
        match root {
            None => {
                if existed {
                    self.delete(&root_path)?;
                }
                Ok(EMPTY_ROOT_HASH)
            }
            Some(node) => {
                let enc = node.encode();
                let hash = root_hash(&enc.rlp);
                self.put(&root_path, enc.rlp)?;
                Ok(hash)
            }
        }
    }

    pub(crate) fn load(&self, path: &Nibbles) -> Result<Option<Node>, TrieError> {
        load(self.store, self.prefix, path)
    }

    pub(crate) fn load_existing(&self, path: &Nibbles) -> Result<Node, TrieError> {
        self.load(path)?
            .ok_or_else(|| TrieError::Corrupt(format!("missing trie node at path {path:?}")))
    }

    /// The node at `path`, which its parent references as `child`, above `updates`. When the
    /// one update knows its current leaf ([`known_leaf`]): as held in memory, else that leaf if
    /// `child` is its hash, else as stored. Asking memory first spares the guess's hash wherever
    /// the node is a branch at hand: an account's single update reaches its leaf through two or
    /// three such branches. Otherwise as read.
    fn load_child(
        &self,
        child: &RlpNode,
        path: &Nibbles,
        updates: &[Update],
    ) -> Result<Node, TrieError> {
        if let Some(leaf) = known_leaf(updates) {
            if let Some(rlp) = self.store.get_in_memory(&node_key(self.prefix, path)) {
                return Node::decode(&rlp);
            }
            if let Some(leaf) = recognised_leaf(child, path, leaf) {
                return Ok(leaf);
            }
        }
        self.load_existing(path)
    }

    fn put(&mut self, path: &Nibbles, rlp: Vec<u8>) -> Result<(), TrieError> {
        self.store.put_owned(&node_key(self.prefix, path), rlp)
    }

    fn delete(&mut self, path: &Nibbles) -> Result<(), TrieError> {
        self.store.delete(&node_key(self.prefix, path))
    }

    /// New node for position `path` (currently holding `node`) after `updates`, all of whose
    /// keys start with `path`. Everything strictly below `path` is persisted on return.
    pub(crate) fn update(
        &mut self,
        path: Nibbles,
        node: Option<Node>,
        updates: &[Update],
    ) -> Result<Option<Node>, TrieError> {
        match node {
            None => {
                let inserts: Vec<(Nibbles, &[u8])> = updates
                    .iter()
                    .filter_map(|(key, value)| value.as_ref().map(|v| (*key, &v.bytes[..])))
                    .collect();
                self.build(path, &inserts)
            }
            Some(Node::Leaf { key, value }) => {
                // Treat the existing leaf as one more insert unless an update overrides it.
                let full = path.join(&key);
                // An account update of this leaf that keeps the leaf's storage root.
                let kept = match updates.binary_search_by(|(key, _)| key.cmp(&full)) {
                    Ok(i) => match &updates[i].1 {
                        Some(new) if new.keep_storage_root => {
                            Some(crate::with_storage_root_of(&new.bytes, &value)?)
                        }
                        _ => None,
                    },
                    Err(_) => None,
                };
                let mut pending = Some((full, value.as_slice()));
                let mut merged: Vec<(Nibbles, &[u8])> = Vec::with_capacity(updates.len() + 1);
                for (key, value) in updates {
                    if let Some((leaf_key, _)) = pending {
                        if *key == leaf_key {
                            pending = None;
                        } else if leaf_key < *key {
                            merged.extend(pending.take());
                        }
                    }
                    if let Some(value) = value {
                        let bytes = match &kept {
                            Some(kept) if *key == full => kept.as_slice(),
                            _ => &value.bytes,
                        };
                        merged.push((*key, bytes));
                    }
                }
                merged.extend(pending);
                self.build(path, &merged)
            }
            Some(Node::Extension { key, child }) => {
                self.update_extension(path, key, child, updates)
            }
            Some(Node::Branch { children }) => self.update_branch(path, children, updates),
        }
    }

    fn update_extension(
        &mut self,
        path: Nibbles,
        key: Nibbles,
        child: RlpNode,
        updates: &[Update],
    ) -> Result<Option<Node>, TrieError> {
        let depth = path.len();
        let shared = |full: &Nibbles| full.slice(depth..).common_prefix_length(&key);
        // Keys are sorted, so the shortest shared prefix is at one of the ends.
        let split = shared(&updates[0].0).min(shared(&updates[updates.len() - 1].0));
        if split >= key.len() {
            let child_path = path.join(&key);
            let child_node = self.load_existing(&child_path)?;
            let new_child = self.update(child_path, Some(child_node), updates)?;
            return self.wrap_extension(key, child_path, new_child);
        }
        // Some update leaves the extension at `split`: turn `key[split]` into a branch there
        // whose only child is the rest of the extension, then update that branch.
        let branch_path = path.join(&key.slice(..split));
        let nibble = key.get_unchecked(split);
        let mut child_path = branch_path;
        child_path.push(nibble);
        let child_ref = if split + 1 == key.len() {
            child
        } else {
            let rest = Node::Extension {
                key: key.slice(split + 1..),
                child,
            }
            .encode();
            self.put(&child_path, rest.rlp)?;
            rest.node_ref
        };
        let mut children: Box<[Option<RlpNode>; 16]> = Box::default();
        children[nibble as usize] = Some(child_ref);
        let branch = self.update_branch(branch_path, children, updates)?;
        if split == 0 {
            Ok(branch)
        } else {
            self.wrap_extension(key.slice(..split), branch_path, branch)
        }
    }

    /// The node at the extension's position when the node below it (at `child_path`) became
    /// `child`: keeps the extension over a branch, merges with a leaf or extension.
    fn wrap_extension(
        &mut self,
        key: Nibbles,
        child_path: Nibbles,
        child: Option<Node>,
    ) -> Result<Option<Node>, TrieError> {
        Ok(match child {
            None => {
                self.delete(&child_path)?;
                None
            }
            Some(branch @ Node::Branch { .. }) => {
                let enc = branch.encode();
                self.put(&child_path, enc.rlp)?;
                Some(Node::Extension {
                    key,
                    child: enc.node_ref,
                })
            }
            Some(Node::Leaf { key: rest, value }) => {
                self.delete(&child_path)?;
                Some(Node::Leaf {
                    key: key.join(&rest),
                    value,
                })
            }
            Some(Node::Extension { key: rest, child }) => {
                self.delete(&child_path)?;
                Some(Node::Extension {
                    key: key.join(&rest),
                    child,
                })
            }
        })
    }

    fn update_branch(
        &mut self,
        path: Nibbles,
        children: Box<[Option<RlpNode>; 16]>,
        updates: &[Update],
    ) -> Result<Option<Node>, TrieError> {
        let mut updated = Vec::new();
        for (nibble, group) in by_nibble(path.len(), updates) {
            let mut child_path = path;
            child_path.push(nibble);
            let existed = children[nibble as usize].is_some();
            let existing = match &children[nibble as usize] {
                None => None,
                Some(child) => Some(self.load_child(child, &child_path, group)?),
            };
            let node = self.update(child_path, existing, group)?;
            updated.push(Child {
                nibble,
                existed,
                node,
            });
        }
        self.finish_branch(path, children, updated)
    }

    /// The node at the branch's position `path` once its children in `updated` have their new
    /// nodes (everything below them stored): stores the updated children, or collapses the
    /// branch when one child is left.
    pub(crate) fn finish_branch(
        &mut self,
        path: Nibbles,
        mut children: Box<[Option<RlpNode>; 16]>,
        updated: Vec<Child>,
    ) -> Result<Option<Node>, TrieError> {
        // Updated children still present: nibble, node, its RLP.
        let mut changed: Vec<(u8, Node, Vec<u8>)> = Vec::new();
        for Child {
            nibble,
            existed,
            node,
        } in updated
        {
            match node {
                Some(node) => {
                    let enc = node.encode();
                    children[nibble as usize] = Some(enc.node_ref);
                    changed.push((nibble, node, enc.rlp));
                }
                None => {
                    if existed {
                        let mut child_path = path;
                        child_path.push(nibble);
                        self.delete(&child_path)?;
                    }
                    children[nibble as usize] = None;
                }
            }
        }

        let mut present = children.iter().enumerate().filter(|(_, c)| c.is_some());
        let only = match (present.next(), present.next()) {
            (None, _) => return Ok(None),
            (Some((nibble, _)), None) => nibble as u8,
            _ => {
                for (nibble, _, rlp) in changed {
                    let mut child_path = path;
                    child_path.push(nibble);
                    self.put(&child_path, rlp)?;
                }
                return Ok(Some(Node::Branch { children }));
            }
        };

        // One child left: collapse this branch into an extension or leaf.
        let mut child_path = path;
        child_path.push(only);
        let (child, rlp) = match changed.into_iter().find(|(nibble, ..)| *nibble == only) {
            Some((_, node, rlp)) => (node, Some(rlp)),
            None => (self.load_existing(&child_path)?, None),
        };
        let head = Nibbles::from_nibbles([only]);
        Ok(Some(match child {
            Node::Leaf { key, value } => {
                self.delete(&child_path)?;
                Node::Leaf {
                    key: head.join(&key),
                    value,
                }
            }
            Node::Extension { key, child } => {
                self.delete(&child_path)?;
                Node::Extension {
                    key: head.join(&key),
                    child,
                }
            }
            Node::Branch { .. } => {
                if let Some(rlp) = rlp {
                    self.put(&child_path, rlp)?;
                }
                let child = children[only as usize].take().expect("child present");
                Node::Extension { key: head, child }
            }
        }))
    }

    /// Node for the empty position `path` holding `inserts` (sorted, unique, all under `path`);
    /// every node below `path` is stored, the returned one is not.
    pub(crate) fn build(
        &mut self,
        path: Nibbles,
        inserts: &[(Nibbles, &[u8])],
    ) -> Result<Option<Node>, TrieError> {
        let depth = path.len();
        match inserts {
            [] => Ok(None),
            [(key, value)] => Ok(Some(Node::Leaf {
                key: key.slice(depth..),
                value: value.to_vec(),
            })),
            [(first, _), .., (last, _)] => {
                let shared = first.common_prefix_length(last);
                if shared == depth {
                    return self.build_branch(path, inserts).map(Some);
                }
                let branch_path = first.slice(..shared);
                let branch = self.build_branch(branch_path, inserts)?.encode();
                self.put(&branch_path, branch.rlp)?;
                Ok(Some(Node::Extension {
                    key: first.slice(depth..shared),
                    child: branch.node_ref,
                }))
            }
        }
    }

    fn build_branch(
        &mut self,
        path: Nibbles,
        inserts: &[(Nibbles, &[u8])],
    ) -> Result<Node, TrieError> {
        let depth = path.len();
        let mut children: Box<[Option<RlpNode>; 16]> = Box::default();
        let mut start = 0;
        while start < inserts.len() {
            let nibble = inserts[start].0.get_unchecked(depth);
            let mut end = start + 1;
            while end < inserts.len() && inserts[end].0.get_unchecked(depth) == nibble {
                end += 1;
            }
            let mut child_path = path;
            child_path.push(nibble);
            if let Some(child) = self.build(child_path, &inserts[start..end])? {
                let enc = child.encode();
                self.put(&child_path, enc.rlp)?;
                children[nibble as usize] = Some(enc.node_ref);
            }
            start = end;
        }
        Ok(Node::Branch { children })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use alloy_trie::HashBuilder;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    use super::*;
    use crate::MemoryTrieStore;

    /// Store keys of reachable nodes and `(full key, value)` of every leaf.
    pub(crate) type Walked = (BTreeSet<Vec<u8>>, Vec<(B256, Vec<u8>)>);

    /// Walk the trie under `prefix` checking every parent reference against the stored child;
    /// returns the store keys of all reachable nodes and the full keys of all leaves.
    pub(crate) fn walk_trie<S: TrieStore>(store: &S, prefix: &[u8]) -> Walked {
        fn walk<S: TrieStore>(
            store: &S,
            prefix: &[u8],
            path: Nibbles,
            expected: Option<&RlpNode>,
            nodes: &mut BTreeSet<Vec<u8>>,
            leaves: &mut Vec<(B256, Vec<u8>)>,
        ) {
            let key = node_key(prefix, &path);
            let rlp = store.get(&key).unwrap().expect("reachable node is stored");
            if let Some(expected) = expected {
                assert_eq!(
                    &RlpNode::from_rlp(&rlp),
                    expected,
                    "stale reference at {path:?}"
                );
            }
            nodes.insert(key.to_vec());
            match Node::decode(&rlp).unwrap() {
                Node::Leaf { key, value } => {
                    leaves.push((B256::from_slice(&path.join(&key).pack()), value));
                }
                Node::Extension { key, child } => {
                    assert!(!key.is_empty());
                    walk(store, prefix, path.join(&key), Some(&child), nodes, leaves);
                }
                Node::Branch { children } => {
                    assert!(
                        children.iter().flatten().count() >= 2,
                        "branch with < 2 children"
                    );
                    for (i, child) in children.iter().enumerate() {
                        if let Some(child) = child {
                            let mut child_path = path;
                            child_path.push(i as u8);
                            walk(store, prefix, child_path, Some(child), nodes, leaves);
                        }
                    }
                }
            }
        }
        let mut nodes = BTreeSet::new();
        let mut leaves = Vec::new();
        if store.get(prefix).unwrap().is_some() {
            walk(store, prefix, Nibbles::new(), None, &mut nodes, &mut leaves);
        }
        (nodes, leaves)
    }

    fn reference_root(model: &BTreeMap<B256, Vec<u8>>) -> B256 {
        let mut builder = HashBuilder::default();
        for (key, value) in model {
            builder.add_leaf(Nibbles::unpack(key), value);
        }
        builder.root()
    }

    /// Keys that share long prefixes and differ in the last nibbles, so that extensions, deep
    /// branches and embedded (< 32 byte) nodes all occur.
    fn clustered_key(rng: &mut StdRng) -> B256 {
        let mut key = [0u8; 32];
        let depth = rng.gen_range(0..32);
        for (i, byte) in key.iter_mut().enumerate() {
            *byte = if i < depth {
                [0x00, 0x01, 0x10][rng.gen_range(0..3)]
            } else {
                0
            };
        }
        key[31] = [0x00, 0x01, 0x02, 0x10, 0x20, 0xff][rng.gen_range(0..6)];
        if rng.gen_bool(0.3) {
            key[rng.gen_range(0..32)] = rng.gen();
        }
        B256::from(key)
    }

    #[test]
    fn clustered_keys_with_embedded_nodes_match_hash_builder() {
        let mut rng = StdRng::seed_from_u64(7);
        let mut store = MemoryTrieStore::new();
        let mut model = BTreeMap::new();
        let prefix = [0x05u8];
        let mut embedded_seen = 0;
        for step in 0..400 {
            let mut batch = Vec::new();
            for _ in 0..rng.gen_range(1..12) {
                let key = if !model.is_empty() && rng.gen_bool(0.4) {
                    *model.keys().nth(rng.gen_range(0..model.len())).unwrap()
                } else {
                    clustered_key(&mut rng)
                };
                let value = if rng.gen_bool(0.35) {
                    None
                } else {
                    let len = if rng.gen_bool(0.7) {
                        1
                    } else {
                        rng.gen_range(2..40)
                    };
                    Some(
                        (0..len)
                            .map(|_| rng.gen_range(1..=255u8))
                            .collect::<Vec<u8>>(),
                    )
                };
                batch.push((key, value));
            }
            for (key, value) in &batch {
                match value {
                    Some(value) => model.insert(*key, value.clone()),
                    None => model.remove(key),
                };
            }
            let root = TrieUpdater::new(&mut store, &prefix)
                .apply(&prepare(batch))
                .unwrap();
            assert_eq!(root, reference_root(&model), "step {step}");
            let (nodes, leaves) = walk_trie(&store, &prefix);
            assert_eq!(nodes.len(), store.len(), "stale nodes at step {step}");
            embedded_seen += store
                .iter()
                .filter(|(k, v)| k.len() > 1 && v.len() < 32)
                .count();
            assert_eq!(
                leaves,
                model
                    .iter()
                    .map(|(k, v)| (*k, v.clone()))
                    .collect::<Vec<_>>()
            );
        }
        assert!(
            embedded_seen > 0,
            "the key set must exercise embedded nodes"
        );
        let deletes: Vec<(B256, Option<Vec<u8>>)> = model.keys().map(|k| (*k, None)).collect();
        let root = TrieUpdater::new(&mut store, &prefix)
            .apply(&prepare(deletes))
            .unwrap();
        assert_eq!(root, EMPTY_ROOT_HASH);
        assert!(store.is_empty());
    }

    #[test]
    fn last_update_of_a_repeated_key_wins() {
        let key = B256::repeat_byte(1);
        let prepared = prepare(vec![
            (key, Some(vec![1])),
            (B256::ZERO, None),
            (key, Some(vec![2])),
        ]);
        assert_eq!(prepared.len(), 2);
        assert_eq!(
            prepared[1],
            (Nibbles::unpack(key), Some(Value::from(vec![2])))
        );
    }
}

//! Key-value stores for trie nodes: the [`TrieStore`] trait, an in-memory store and redb tables.

use std::{borrow::Cow, collections::BTreeMap, sync::Arc};

use alloy_primitives::map::HashMap;

use redb::ReadableTable;

use super::{compact, TrieError};

/// Key-value store of trie nodes. Keys are opaque byte strings built by this module.
///
/// A read-only view implements `get` only: the writes default to [`TrieError::ReadOnly`].
pub trait TrieStore {
    /// The value stored under `key`, if any.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TrieError>;
    /// The value under `key` when the store holds it in memory; `None` when it would have to be
    /// read from disk, or is absent. A block's update looks here before it recognises an
    /// account's leaf by its hash: a node at hand needs no guess, and every guess costs a hash.
    fn get_in_memory(&self, _key: &[u8]) -> Option<Vec<u8>> {
        None
    }
    /// Store `value` under `key`, replacing any previous value.
    fn put(&mut self, _key: &[u8], _value: &[u8]) -> Result<(), TrieError> {
        Err(TrieError::ReadOnly)
    }
    /// [`put`](Self::put) of a value the caller is done with: a store that keeps its values in
    /// memory takes it over instead of copying it.
    fn put_owned(&mut self, key: &[u8], value: Vec<u8>) -> Result<(), TrieError> {
        self.put(key, &value)
    }
    /// Remove `key` (no error when it is absent).
    fn delete(&mut self, _key: &[u8]) -> Result<(), TrieError> {
        Err(TrieError::ReadOnly)
    }
    /// Delete every key starting with `prefix` (used to wipe an account's storage trie).
    fn delete_prefix(&mut self, _prefix: &[u8]) -> Result<(), TrieError> {
        Err(TrieError::ReadOnly)
    }
    /// Store what an overlay over this store wrote: its wipes, then its writes. A store that
    /// keeps its writes in memory takes them over instead of copying them.
    fn put_overlay(&mut self, writes: OverlayWrites) -> Result<(), TrieError> {
        writes.write_to(self)
    }
}

/// In-memory store (BTreeMap) for tests and benches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryTrieStore {
    nodes: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl MemoryTrieStore {
    /// An empty store (the empty trie).
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of stored entries (trie nodes).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// `true` when no node is stored.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// All stored entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.nodes.iter().map(|(k, v)| (k.as_slice(), v.as_slice()))
    }
}

impl TrieStore for MemoryTrieStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TrieError> {
        Ok(self.nodes.get(key).cloned())
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), TrieError> {
        self.put_owned(key, value.to_vec())
    }

    fn put_owned(&mut self, key: &[u8], value: Vec<u8>) -> Result<(), TrieError> {
        self.nodes.insert(key.to_vec(), value);
        Ok(())
    }

    fn delete(&mut self, key: &[u8]) -> Result<(), TrieError> {
        self.nodes.remove(key);
        Ok(())
    }

    fn delete_prefix(&mut self, prefix: &[u8]) -> Result<(), TrieError> {
        let keys: Vec<Vec<u8>> = self
            .nodes
            .range(prefix.to_vec()..)
            .map(|(k, _)| k)
            .take_while(|k| k.starts_with(prefix))
            .cloned()
            .collect();
        for key in keys {
            self.nodes.remove(&key);
        }
        Ok(())
    }
}

/// redb-backed store over a table opened inside the caller's write transaction. Nodes are kept
/// in the form `compact.rs` describes.
impl TrieStore for redb::Table<'_, &'static [u8], &'static [u8]> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TrieError> {
        read(self, key)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), TrieError> {
        match compact::compact(value) {
            Some(stored) => self.insert(key, stored.as_slice())?,
            None => self.insert(key, value)?,
        };
        Ok(())
    }

    fn delete(&mut self, key: &[u8]) -> Result<(), TrieError> {
        self.remove(key)?;
        Ok(())
    }

    fn delete_prefix(&mut self, prefix: &[u8]) -> Result<(), TrieError> {
        for key in keys_with_prefix(self, prefix)? {
            self.remove(key.as_slice())?;
        }
        Ok(())
    }
}

/// Read-only redb table (a read transaction), for [`super::state_root`], [`super::storage_root`]
/// and [`super::account_proof`]: every write fails with [`TrieError::ReadOnly`].
impl TrieStore for redb::ReadOnlyTable<&'static [u8], &'static [u8]> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TrieError> {
        read(self, key)
    }
}

/// The RLP of the node a redb table holds under `key`.
fn read(
    table: &impl ReadableTable<&'static [u8], &'static [u8]>,
    key: &[u8],
) -> Result<Option<Vec<u8>>, TrieError> {
    table
        .get(key)?
        .map(|v| compact::expand(v.value()).map(Cow::into_owned))
        .transpose()
}

type NodeTable<'t> = redb::Table<'t, &'static [u8], &'static [u8]>;

/// Every key of `nodes` under `prefix` (collected first: the caller then deletes them).
fn keys_with_prefix(nodes: &NodeTable<'_>, prefix: &[u8]) -> Result<Vec<Vec<u8>>, TrieError> {
    let mut keys = Vec::new();
    for entry in nodes.range::<&[u8]>(prefix..)? {
        let (key, _) = entry?;
        if !key.value().starts_with(prefix) {
            break;
        }
        keys.push(key.value().to_vec());
    }
    Ok(keys)
}

/// Writes kept in memory over a read-only trie (eth_simulateV1's blocks over a stored block):
/// reads see the writes first, then the base, except under a deleted prefix.
pub struct OverlayTrie<'a> {
    base: &'a dyn TrieStore,
    writes: OverlayWrites,
    /// Overlays put over this one and not merged into `writes` yet, oldest first (none wipes
    /// anything): a block's sixteen subtries are read where they are until the next write.
    pending: Vec<HashMap<Vec<u8>, Option<SharedRlp>>>,
}

impl<'a> OverlayTrie<'a> {
    /// An overlay with no writes yet over `base`.
    pub fn new(base: &'a dyn TrieStore) -> Self {
        Self {
            base,
            writes: OverlayWrites {
                wiped: Vec::new(),
                writes: HashMap::default(),
            },
            pending: Vec::new(),
        }
    }

    /// The overlay's writes, to replay on the store its base was read from.
    pub(crate) fn into_writes(mut self) -> OverlayWrites {
        self.merge_pending();
        self.writes
    }

    /// Merges the pending overlays into `writes`, the latest write of a key winning.
    fn merge_pending(&mut self) {
        let more = self.pending.iter().map(HashMap::len).sum();
        self.writes.writes.reserve(more);
        for writes in self.pending.drain(..) {
            self.writes.writes.extend(writes);
        }
    }
}

/// A written node's RLP, shared: the write-back buffer keeps each block's writes and the latest
/// write of each key, and both hold the same bytes.
pub(crate) type SharedRlp = Arc<Vec<u8>>;

/// What an [`OverlayTrie`] holds without its base: prefixes it wiped and keys it wrote.
pub struct OverlayWrites {
    /// Prefixes deleted in the overlay: the base's keys under them read as absent.
    wiped: Vec<Vec<u8>>,
    /// By key, unordered: a block's update reads and writes each of its thousands of nodes
    /// here, and a hash lookup costs a fraction of a B-tree's key comparisons (profiled: the
    /// comparisons were a tenth of the update's CPU). Writing out sorts them once.
    writes: HashMap<Vec<u8>, Option<SharedRlp>>,
}

impl OverlayWrites {
    /// What these writes say of `key` over a base: `Some(value)` if they wrote it (`None` for a
    /// deletion) or wiped a prefix of it, `None` when the base decides.
    pub(crate) fn get(&self, key: &[u8]) -> Option<Option<Vec<u8>>> {
        if let Some(value) = self.writes.get(key) {
            return Some(value.as_deref().cloned());
        }
        self.wiped
            .iter()
            .any(|p| key.starts_with(p))
            .then_some(None)
    }

    /// The wiped prefixes, in the order they were wiped.
    pub(crate) fn wiped(&self) -> &[Vec<u8>] {
        &self.wiped
    }

    /// Every written key (`None`: deleted), in no particular order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&Vec<u8>, &Option<SharedRlp>)> {
        self.writes.iter()
    }

    /// Key and value bytes written.
    pub(crate) fn bytes(&self) -> usize {
        self.writes
            .iter()
            .map(|(k, v)| k.len() + v.as_ref().map_or(0, |v| v.len()))
            .sum::<usize>()
            + self.wiped.iter().map(Vec::len).sum::<usize>()
    }

    /// Replay on `store`: the wiped prefixes first (the writes under them came after the wipe),
    /// then every write in key order (a B-tree store writes sorted keys fastest).
    pub(crate) fn write_to<S: TrieStore + ?Sized>(&self, store: &mut S) -> Result<(), TrieError> {
        for prefix in &self.wiped {
            store.delete_prefix(prefix)?;
        }
        let mut sorted: Vec<_> = self.writes.iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (key, value) in sorted {
            match value {
                Some(value) => store.put(key, value)?,
                None => store.delete(key)?,
            }
        }
        Ok(())
    }
}

impl OverlayTrie<'_> {
    /// The overlay's value of `key` (`Some(None)`: deleted), `None` when it is the base's.
    fn written(&self, key: &[u8]) -> Option<Option<Vec<u8>>> {
        match self.pending.iter().rev().find_map(|p| p.get(key)) {
            Some(found) => Some(found.as_deref().cloned()),
            None => self.writes.get(key),
        }
    }
}

impl TrieStore for OverlayTrie<'_> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TrieError> {
        match self.written(key) {
            Some(found) => Ok(found),
            None => self.base.get(key),
        }
    }

    fn get_in_memory(&self, key: &[u8]) -> Option<Vec<u8>> {
        match self.written(key) {
            Some(found) => found,
            None => self.base.get_in_memory(key),
        }
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), TrieError> {
        self.put_owned(key, value.to_vec())
    }

    fn put_owned(&mut self, key: &[u8], value: Vec<u8>) -> Result<(), TrieError> {
        self.merge_pending();
        self.writes
            .writes
            .insert(key.to_vec(), Some(Arc::new(value)));
        Ok(())
    }

    fn delete(&mut self, key: &[u8]) -> Result<(), TrieError> {
        self.merge_pending();
        self.writes.writes.insert(key.to_vec(), None);
        Ok(())
    }

    fn delete_prefix(&mut self, prefix: &[u8]) -> Result<(), TrieError> {
        self.merge_pending();
        self.writes.writes.retain(|k, _| !k.starts_with(prefix));
        self.writes.wiped.push(prefix.to_vec());
        Ok(())
    }

    fn put_overlay(&mut self, writes: OverlayWrites) -> Result<(), TrieError> {
        for prefix in &writes.wiped {
            self.delete_prefix(prefix)?;
        }
        self.pending.push(writes.writes);
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use redb::TableDefinition;

    /// A test table laid out as storage's `trie_nodes`.
    pub(crate) const TRIE_NODES: TableDefinition<'static, &'static [u8], &'static [u8]> =
        TableDefinition::new("trie_nodes");

    use super::*;

    fn exercise(store: &mut impl TrieStore) {
        store.put(&[1, 2], b"a").unwrap();
        store.put(&[1, 2, 3], b"b").unwrap();
        store.put(&[1, 3], b"c").unwrap();
        store.put(&[0], b"d").unwrap();
        assert_eq!(store.get(&[1, 2]).unwrap().as_deref(), Some(&b"a"[..]));
        store.delete_prefix(&[1, 2]).unwrap();
        assert_eq!(store.get(&[1, 2]).unwrap(), None);
        assert_eq!(store.get(&[1, 2, 3]).unwrap(), None);
        assert_eq!(store.get(&[1, 3]).unwrap().as_deref(), Some(&b"c"[..]));
        store.delete(&[0]).unwrap();
        store.delete(&[0]).unwrap();
        assert_eq!(store.get(&[0]).unwrap(), None);
    }

    #[test]
    fn overlay_reads_its_writes_over_the_base_and_hides_wiped_prefixes() {
        let mut base = MemoryTrieStore::new();
        base.put(&[1, 2], b"base").unwrap();
        base.put(&[1, 2, 3], b"deep").unwrap();
        base.put(&[7], b"other").unwrap();
        let mut overlay = OverlayTrie::new(&base);
        exercise(&mut overlay);
        assert_eq!(overlay.get(&[7]).unwrap().as_deref(), Some(&b"other"[..]));
        overlay.delete_prefix(&[7]).unwrap();
        assert_eq!(overlay.get(&[7]).unwrap(), None);
        overlay.put(&[7, 1], b"new").unwrap();
        assert_eq!(overlay.get(&[7, 1]).unwrap().as_deref(), Some(&b"new"[..]));
        assert_eq!(base.get(&[1, 2]).unwrap().as_deref(), Some(&b"base"[..]));
    }

    #[test]
    fn overlays_put_over_an_overlay_read_and_replay_as_if_written_in_order() {
        let base = MemoryTrieStore::new();
        let child = |writes: &[(&[u8], Option<&[u8]>)], wipe: Option<&[u8]>| {
            let mut overlay = OverlayTrie::new(&base);
            if let Some(prefix) = wipe {
                overlay.delete_prefix(prefix).unwrap();
            }
            for (key, value) in writes {
                match value {
                    Some(value) => overlay.put(key, value).unwrap(),
                    None => overlay.delete(key).unwrap(),
                }
            }
            overlay.into_writes()
        };
        let mut top = OverlayTrie::new(&base);
        top.put(&[5], b"top").unwrap();
        top.put(&[9, 1], b"wiped later").unwrap();
        top.put_overlay(child(&[(&[3], Some(b"first")), (&[1], Some(b"one"))], None))
            .unwrap();
        top.put_overlay(child(&[(&[3], Some(b"second")), (&[5], None)], None))
            .unwrap();
        // Read while pending: the latest overlay's write wins.
        assert_eq!(top.get(&[3]).unwrap().as_deref(), Some(&b"second"[..]));
        assert_eq!(top.get(&[5]).unwrap(), None);
        // A wipe reaches what was written before it, pending or not, and not what comes after.
        top.put_overlay(child(&[(&[9, 2], Some(b"after"))], Some(&[9])))
            .unwrap();
        assert_eq!(top.get(&[9, 1]).unwrap(), None);
        top.put(&[4], b"last").unwrap();
        let writes = top.into_writes();
        let mut replayed = MemoryTrieStore::new();
        writes.write_to(&mut replayed).unwrap();
        let entries: Vec<_> = replayed.iter().collect();
        assert_eq!(
            entries,
            [
                (&[1][..], &b"one"[..]),
                (&[3][..], &b"second"[..]),
                (&[4][..], &b"last"[..]),
                (&[9, 2][..], &b"after"[..]),
            ]
        );
        assert_eq!(writes.wiped(), [vec![9u8]]);
    }

    /// Records the order of the writes it gets.
    #[derive(Default)]
    struct Recorder(Vec<Vec<u8>>);

    impl TrieStore for Recorder {
        fn get(&self, _key: &[u8]) -> Result<Option<Vec<u8>>, TrieError> {
            Ok(None)
        }
        fn put(&mut self, key: &[u8], _value: &[u8]) -> Result<(), TrieError> {
            self.0.push(key.to_vec());
            Ok(())
        }
        fn delete(&mut self, key: &[u8]) -> Result<(), TrieError> {
            self.0.push(key.to_vec());
            Ok(())
        }
    }

    #[test]
    fn overlay_writes_reach_a_store_in_key_order() {
        let base = MemoryTrieStore::new();
        let mut overlay = OverlayTrie::new(&base);
        let mut keys: Vec<Vec<u8>> = (0..200u32)
            .map(|i| i.wrapping_mul(2_654_435_761).to_be_bytes().to_vec())
            .collect();
        for (i, key) in keys.iter().enumerate() {
            if i % 7 == 0 {
                overlay.delete(key).unwrap();
            } else {
                overlay.put(key, b"v").unwrap();
            }
        }
        let mut store = Recorder::default();
        store.put_overlay(overlay.into_writes()).unwrap();
        keys.sort();
        assert_eq!(store.0, keys);
    }

    #[test]
    fn memory_store_delete_prefix_removes_only_prefixed_keys() {
        let mut store = MemoryTrieStore::new();
        exercise(&mut store);
        assert_eq!(store.len(), 1);
    }

    #[test]
    fn redb_store_delete_prefix_removes_only_prefixed_keys_and_read_only_table_reads() {
        let dir = tempfile::tempdir().unwrap();
        let db = redb::Database::create(dir.path().join("t.redb")).unwrap();
        let tx = db.begin_write().unwrap();
        {
            let mut table = tx.open_table(TRIE_NODES).unwrap();
            exercise(&mut table);
        }
        tx.commit().unwrap();
        let read = redb::ReadableDatabase::begin_read(&db).unwrap();
        let mut table = read.open_table(TRIE_NODES).unwrap();
        assert_eq!(
            TrieStore::get(&table, &[1, 3]).unwrap().as_deref(),
            Some(&b"c"[..])
        );
        assert!(table.put(&[9], b"x").is_err());
    }
}

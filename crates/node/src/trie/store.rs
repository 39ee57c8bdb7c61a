//! Key-value stores for trie nodes: the [`TrieStore`] trait, an in-memory store and redb tables.

use std::collections::BTreeMap;

use redb::{ReadableTable, TableDefinition};

use crate::storage::StorageError;

/// The redb table holding trie nodes, keyed by `[trie id] ++ nibble path` (see the module docs).
pub const TRIE_NODES: TableDefinition<'static, &'static [u8], &'static [u8]> =
    TableDefinition::new("trie_nodes");

/// Key-value store of trie nodes. Keys are opaque byte strings built by this module.
pub trait TrieStore {
    /// The value stored under `key`, if any.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError>;
    /// Store `value` under `key`, replacing any previous value.
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), StorageError>;
    /// Remove `key` (no error when it is absent).
    fn delete(&mut self, key: &[u8]) -> Result<(), StorageError>;
    /// Delete every key starting with `prefix` (used to wipe an account's storage trie).
    fn delete_prefix(&mut self, prefix: &[u8]) -> Result<(), StorageError>;
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
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.nodes.get(key).cloned())
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), StorageError> {
        self.nodes.insert(key.to_vec(), value.to_vec());
        Ok(())
    }

    fn delete(&mut self, key: &[u8]) -> Result<(), StorageError> {
        self.nodes.remove(key);
        Ok(())
    }

    fn delete_prefix(&mut self, prefix: &[u8]) -> Result<(), StorageError> {
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

fn db_err(err: impl std::fmt::Display) -> StorageError {
    StorageError::Database(err.to_string())
}

/// redb-backed store over a table opened inside the caller's write transaction.
impl TrieStore for redb::Table<'_, &'static [u8], &'static [u8]> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(ReadableTable::get(self, key)
            .map_err(db_err)?
            .map(|v| v.value().to_vec()))
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), StorageError> {
        self.insert(key, value).map_err(db_err)?;
        Ok(())
    }

    fn delete(&mut self, key: &[u8]) -> Result<(), StorageError> {
        self.remove(key).map_err(db_err)?;
        Ok(())
    }

    fn delete_prefix(&mut self, prefix: &[u8]) -> Result<(), StorageError> {
        let mut keys = Vec::new();
        for entry in self.range::<&[u8]>(prefix..).map_err(db_err)? {
            let (key, _) = entry.map_err(db_err)?;
            let key = key.value();
            if !key.starts_with(prefix) {
                break;
            }
            keys.push(key.to_vec());
        }
        for key in keys {
            self.remove(key.as_slice()).map_err(db_err)?;
        }
        Ok(())
    }
}

/// Read-only redb table (a read transaction), for [`super::state_root`], [`super::storage_root`]
/// and [`super::account_proof`]: every write fails with [`StorageError::Database`].
impl TrieStore for redb::ReadOnlyTable<&'static [u8], &'static [u8]> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(ReadableTable::get(self, key)
            .map_err(db_err)?
            .map(|v| v.value().to_vec()))
    }

    fn put(&mut self, _key: &[u8], _value: &[u8]) -> Result<(), StorageError> {
        Err(read_only())
    }

    fn delete(&mut self, _key: &[u8]) -> Result<(), StorageError> {
        Err(read_only())
    }

    fn delete_prefix(&mut self, _prefix: &[u8]) -> Result<(), StorageError> {
        Err(read_only())
    }
}

fn read_only() -> StorageError {
    StorageError::Database("trie store opened read-only".into())
}

#[cfg(test)]
mod tests {
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

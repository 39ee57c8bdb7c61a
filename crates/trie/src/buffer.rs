//! A write-back buffer of trie nodes: the nodes recent blocks wrote, kept in memory ahead of the
//! store and written to it together every few blocks.
//!
//! A block's update mostly rewrites nodes near the root, which every block rewrites again, and
//! each node written to a B-tree store dirties a page of its own. Keeping the writes of recent
//! blocks in memory takes every store write out of the block's update, and a flush writes each
//! node once however many of the buffered blocks rewrote it, in key order. This is geth's path
//! database buffer and reth's in-memory blocks ahead of its persistence task. Whoever owns the
//! store must be able to rebuild the buffer after a crash (storage replays its change sets).
//!
//! Two views read through the buffer: the block writer's ([`WriteBack::apply`]), through one map
//! of the latest value of each key, and readers' ([`Layers`]), through the immutable writes of
//! each block up to the one they read, so that a reader keeps its block while later ones are
//! buffered.

use std::sync::Arc;

use alloy_primitives::{
    map::{HashMap, HashSet},
    B256,
};

use crate::{
    apply_changes_parallel,
    state::AccountChange,
    store::{OverlayTrie, OverlayWrites},
    TrieError, TrieStore,
};

/// Buffers with more keys than this are freed on a thread of their own (a thread start costs
/// about what freeing a thousand keys does).
const DROP_ELSEWHERE_ENTRIES: usize = 1_000;

/// The trie writes of the blocks after the store's, oldest first (what readers of the latest of
/// them see over the store). Cloning shares the writes.
#[derive(Clone, Default)]
pub struct Layers(Vec<Arc<OverlayWrites>>);

impl Layers {
    /// The trie as of the latest buffered block, over `store` (the stored trie they follow).
    pub fn over<'a>(&'a self, store: &'a dyn TrieStore) -> LayeredTrie<'a> {
        LayeredTrie {
            layers: &self.0,
            store,
        }
    }

    /// Number of buffered blocks.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// `true` when nothing is buffered (the store holds the latest trie).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A read-only view of [`Layers`] over a store: the newest block's write of a key wins.
pub struct LayeredTrie<'a> {
    layers: &'a [Arc<OverlayWrites>],
    store: &'a dyn TrieStore,
}

impl TrieStore for LayeredTrie<'_> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TrieError> {
        for layer in self.layers.iter().rev() {
            if let Some(found) = layer.get(key) {
                return Ok(found);
            }
        }
        self.store.get(key)
    }
}

/// The buffer: each block's writes for readers, and their merge for the block writer.
#[derive(Default)]
pub struct WriteBack {
    layers: Layers,
    /// The latest write of every buffered key (`None`: deleted).
    merged: HashMap<Vec<u8>, Option<Vec<u8>>>,
    /// Storage tries wiped while buffering (their key prefixes): the store's keys under them
    /// read as absent unless `merged` holds a later write.
    wiped: HashSet<Vec<u8>>,
    /// Key and value bytes of the buffered blocks' writes.
    bytes: usize,
}

/// The writer's view: the merged writes over the stored trie.
struct Merged<'a, B: ?Sized> {
    buffer: &'a WriteBack,
    store: &'a B,
}

impl<B: TrieStore + ?Sized> TrieStore for Merged<'_, B> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TrieError> {
        if let Some(value) = self.buffer.merged.get(key) {
            return Ok(value.clone());
        }
        if wiped_in(&self.buffer.wiped, key) {
            return Ok(None);
        }
        self.store.get(key)
    }
}

/// The storage trie a key belongs to (its 33-byte prefix), `None` for account-trie keys. Only
/// storage tries are wiped ([`crate::apply_changes`]).
fn storage_trie_of(key: &[u8]) -> Option<&[u8]> {
    (key.first() == Some(&crate::STORAGE_TRIE))
        .then(|| key.get(..crate::STORAGE_PREFIX_LEN))
        .flatten()
}

/// Whether `key` is in one of the `wiped` storage tries: one lookup, however many were wiped.
fn wiped_in(wiped: &HashSet<Vec<u8>>, key: &[u8]) -> bool {
    !wiped.is_empty() && storage_trie_of(key).is_some_and(|t| wiped.contains(t))
}

/// One block's trie writes from [`WriteBack::apply`], not yet buffered: the caller buffers them
/// ([`WriteBack::push`]) or flushes them ([`WriteBack::flush`]) once its block is committed.
pub struct BlockWrites {
    writes: OverlayWrites,
    bytes: usize,
}

impl WriteBack {
    /// Applies one block's `changes` to the trie of the latest buffered block over `store` (the
    /// stored trie the buffer follows) on every core; the buffer is unchanged. Returns the new
    /// state root and the block's writes.
    pub fn apply<B: TrieStore + Sync>(
        &self,
        store: &B,
        changes: &[AccountChange],
    ) -> Result<(B256, BlockWrites), TrieError> {
        let view = Merged {
            buffer: self,
            store,
        };
        let mut overlay = OverlayTrie::new(&view);
        let root = apply_changes_parallel(&mut overlay, &view, changes)?;
        let writes = overlay.into_writes();
        let bytes = writes.bytes();
        Ok((root, BlockWrites { writes, bytes }))
    }

    /// Buffers a block's writes after the others.
    pub fn push(&mut self, block: BlockWrites) {
        let BlockWrites { writes, bytes } = block;
        if !writes.wiped().is_empty() {
            let wiped: HashSet<Vec<u8>> = writes.wiped().iter().cloned().collect();
            debug_assert!(wiped.iter().all(|p| storage_trie_of(p) == Some(p)));
            self.merged.retain(|k, _| !wiped_in(&wiped, k));
            self.wiped.extend(wiped);
        }
        for (key, value) in writes.entries() {
            self.merged.insert(key.clone(), value.clone());
        }
        self.bytes += bytes;
        self.layers.0.push(Arc::new(writes));
    }

    /// Writes the buffered blocks and then `block` (if any) to `store`, each key once and in key
    /// order. The buffer is unchanged: [`WriteBack::clear`] it once the store's writes are
    /// committed.
    pub fn flush<S: TrieStore + ?Sized>(
        &self,
        block: Option<&BlockWrites>,
        store: &mut S,
    ) -> Result<(), TrieError> {
        for prefix in &self.wiped {
            store.delete_prefix(prefix)?;
        }
        let mut entries: Vec<_> = self.merged.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (key, value) in entries {
            match value {
                Some(value) => store.put(key, value)?,
                None => store.delete(key)?,
            }
        }
        match block {
            Some(block) => block.writes.write_to(store),
            None => Ok(()),
        }
    }

    /// Empties the buffer (after a flush, or when the store's trie is replaced).
    pub fn clear(&mut self) {
        let old = std::mem::take(self);
        // Freeing a full buffer's nodes takes tens of milliseconds: not on the block's path.
        // Readers' snapshots may still share its layers, which they free in the end.
        if old.merged.len() >= DROP_ELSEWHERE_ENTRIES {
            // Without a thread it is freed here, as a small one is.
            let _ = std::thread::Builder::new()
                .name("trie-free".into())
                .spawn(move || drop(old));
        }
    }

    /// The buffered blocks' writes, for readers of the latest of them.
    pub fn layers(&self) -> Layers {
        self.layers.clone()
    }

    /// Number of buffered blocks.
    pub fn blocks(&self) -> usize {
        self.layers.len()
    }

    /// Key and value bytes of the buffered writes (the merged map holds at most as many again).
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl BlockWrites {
    /// Key and value bytes of this block's writes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use alloy_primitives::{Address, U256};
    use rand::{rngs::StdRng, Rng, SeedableRng};

    use super::*;
    use crate::{
        apply_changes,
        state::AccountState,
        state_root,
        tests::{address_pool, random_change},
        MemoryTrieStore,
    };

    /// Random blocks through the buffer, flushed every `every` blocks, leave the store node for
    /// node as applying them directly does; each block's root is the direct root, and a reader
    /// that kept an earlier block's layers still reads that block's trie.
    #[test]
    fn buffered_blocks_flushed_every_few_leave_the_store_as_direct_writes_do() {
        for every in [1, 3, 7] {
            let mut rng = StdRng::seed_from_u64(every);
            let pool = address_pool(300);
            let mut direct = MemoryTrieStore::new();
            let mut store = MemoryTrieStore::new();
            let mut buffer = WriteBack::default();
            let mut kept: Vec<(Layers, MemoryTrieStore, B256)> = Vec::new();
            for number in 0..24u64 {
                let count = rng.gen_range(20..120);
                let changes: Vec<_> = (0..count).map(|_| random_change(&mut rng, &pool)).collect();
                let expected = apply_changes(&mut direct, &changes).unwrap();
                let (root, block) = buffer.apply(&store, &changes).unwrap();
                assert_eq!(root, expected, "block {number}, flush every {every}");
                if buffer.blocks() + 1 >= every as usize {
                    buffer.flush(Some(&block), &mut store).unwrap();
                    buffer.clear();
                } else {
                    buffer.push(block);
                }
                let layers = buffer.layers();
                assert_eq!(state_root(&layers.over(&store)).unwrap(), expected);
                if rng.gen_bool(0.3) {
                    kept.push((layers, store.clone(), expected));
                }
            }
            buffer.flush(None, &mut store).unwrap();
            buffer.clear();
            assert_eq!(store, direct, "flush every {every}");
            for (layers, base, root) in &kept {
                assert_eq!(state_root(&layers.over(base)).unwrap(), *root);
            }
        }
    }

    /// An account deleted (its storage trie wiped) while buffered, then created again with new
    /// slots: the store's old slots stay gone, the new ones are there, before and after a flush.
    #[test]
    fn a_storage_trie_wiped_in_the_buffer_hides_the_stored_one() {
        let address = Address::repeat_byte(7);
        let with_slots = |nonce, slots: &[(u64, u64)]| AccountChange {
            address,
            info: Some(AccountState {
                nonce,
                balance: U256::from(1),
                code_hash: B256::repeat_byte(1),
            }),
            new_code: None,
            storage_wiped: false,
            storage: slots
                .iter()
                .map(|&(s, v)| (U256::from(s), U256::from(v)))
                .collect(),
        };
        let blocks = [
            vec![with_slots(1, &[(1, 10), (2, 20), (3, 30)])],
            vec![AccountChange::deletion(address)],
            vec![with_slots(2, &[(4, 40)])],
        ];
        let mut direct = MemoryTrieStore::new();
        let mut store = MemoryTrieStore::new();
        let mut buffer = WriteBack::default();
        for (i, changes) in blocks.iter().enumerate() {
            let expected = apply_changes(&mut direct, changes).unwrap();
            let (root, block) = buffer.apply(&store, changes).unwrap();
            assert_eq!(root, expected);
            if i == 0 {
                buffer.flush(Some(&block), &mut store).unwrap();
            } else {
                buffer.push(block);
            }
        }
        assert_eq!(buffer.blocks(), 2);
        assert_eq!(
            state_root(&buffer.layers().over(&store)).unwrap(),
            state_root(&direct).unwrap()
        );
        buffer.flush(None, &mut store).unwrap();
        assert_eq!(store, direct);
    }
}

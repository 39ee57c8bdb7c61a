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
//!
//! The writer also keeps account-trie nodes as stored (a clean node cache, as geth's path
//! database keeps clean nodes ahead of its disk): the upper levels, which every block reads a
//! thousand of at random, and as far as its budget goes the branches below them, each a B-tree
//! lookup whose page is rarely in the store's own cache once the trie outgrows it. The cache
//! holds only values the store holds: it is filled from a scan of the stored trie
//! ([`WriteBack::cache_warmer`]), from the writer's reads of the store and from write-outs once
//! they are committed ([`WriteBack::flushed`]), and dropped with everything else when the store
//! changes behind the buffer ([`WriteBack::clear`]).

use std::{
    borrow::Cow,
    sync::{Arc, Mutex},
};

use alloy_primitives::{
    map::{HashMap, HashSet},
    B256,
};

use crate::{
    apply_changes_parallel,
    state::AccountChange,
    store::{OverlayTrie, OverlayWrites, SharedRlp},
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

/// Account-trie nodes this deep or shallower are cached whatever they are: the four levels below
/// the root, 69,905 positions whatever the state's size, about 44 MiB once all are branches. A
/// block of a thousand accounts reads about a thousand nodes at the fourth level.
const SHALLOW_DEPTH: usize = 4;

/// Bytes the shallow levels take at most (69,905 nodes of at most 532 bytes, a full branch):
/// deeper nodes are cached only in what the budget leaves beyond this, so that they never crowd
/// out the levels every block reads.
const SHALLOW_RESERVE: usize = 69_905 * (532 + 532 / 8 + CACHED_NODE_OVERHEAD);

/// Deepest account-trie node the cache keeps: its path fits the cache's 64-bit key (a length and
/// 15 nibbles). Two of a billion accounts or so share fifteen nibbles: deeper branches are
/// rare, and read from the store.
const MAX_CACHED_DEPTH: usize = 15;

/// Bytes a cached node costs beyond its value and the allocator's rounding of it
/// ([`NodeCache::cost`]): the map's slot (key, boxed value and control byte, at its load
/// factor). The count is approximate: while the map grows it holds its old table too.
const CACHED_NODE_OVERHEAD: usize = 48;

/// Clean account-trie nodes as the store holds them: every node of the [`SHALLOW_DEPTH`] levels
/// below the root, and below them the branches (and extensions) whatever their depth, as far as
/// the budget goes. Leaves are not kept: a block recognises the leaves of the accounts it changes
/// by the hash their parent holds ([`crate::apply_changes`]), so the deepest node an account's
/// update reads is its leaf's parent branch. At ten million accounts the branches below the
/// fourth level, about 3.3 million, take about 650 MiB: with them in memory a block of
/// transfers reads the store only for the leaves new accounts split. The default budget (48
/// MiB) holds the shallow levels and a few MiB of deeper branches. The cache is emptied when
/// the store changes behind the buffer ([`WriteBack::clear`]: an unwind, a snapshot's import),
/// and fills again as blocks read their nodes.
#[derive(Default)]
struct NodeCache {
    /// By [`NodeCache::key`].
    nodes: HashMap<u64, Box<[u8]>>,
    /// What [`NodeCache::cost`] counts for the cached nodes of the shallow levels.
    shallow: usize,
    /// The same for the deeper nodes.
    deep: usize,
    /// Most bytes the nodes may take: once reached, only nodes already cached are updated, and
    /// one that would grow past it is dropped. The deeper nodes take at most what is left beyond
    /// [`SHALLOW_RESERVE`].
    budget: usize,
}

impl NodeCache {
    /// The cache's key for the store's `key`, `None` for nodes it never keeps (storage tries,
    /// paths deeper than [`MAX_CACHED_DEPTH`]): the path's length in the top four bits, then its
    /// nibbles.
    fn key(key: &[u8]) -> Option<u64> {
        let (&trie, path) = key.split_first()?;
        if trie != crate::ACCOUNT_TRIE
            || path.len() > MAX_CACHED_DEPTH
            || path.iter().any(|&nibble| nibble > 0x0f)
        {
            return None;
        }
        let nibbles = path.iter().enumerate().fold(0u64, |packed, (i, &nibble)| {
            packed | (u64::from(nibble) << (56 - 4 * i))
        });
        Some((path.len() as u64) << 60 | nibbles)
    }

    /// Whether the node under cache key `key` belongs to the shallow levels.
    fn is_shallow(key: u64) -> bool {
        (key >> 60) as usize <= SHALLOW_DEPTH
    }

    /// Bytes the cache counts for a node holding `value`: with the allocator's rounding to its
    /// size classes (up to a quarter above a value's size, an eighth on average) and the slot.
    fn cost(value: &[u8]) -> usize {
        value.len() + value.len() / 8 + CACHED_NODE_OVERHEAD
    }

    /// Bytes counted for the shallow or the deeper nodes.
    fn used(&mut self, shallow: bool) -> &mut usize {
        if shallow {
            &mut self.shallow
        } else {
            &mut self.deep
        }
    }

    /// Whether a node read from the store under cache key `key` may be taken in: the cache has
    /// room for its kind and keeps nodes like `value`.
    fn takes(&self, key: u64, value: &[u8]) -> bool {
        let (used, limit) = if Self::is_shallow(key) {
            (self.shallow, self.budget)
        } else if crate::node::is_leaf(value) {
            return false;
        } else {
            (self.deep, self.budget.saturating_sub(SHALLOW_RESERVE))
        };
        used + Self::cost(value) <= limit
    }

    /// The store's value of `key` is `value` from now on (`None`: absent).
    fn set(&mut self, key: &[u8], value: Option<&[u8]>) {
        if let Some(key) = Self::key(key) {
            self.set_cached(key, value);
        }
    }

    /// [`NodeCache::set`] by cache key.
    fn set_cached(&mut self, key: u64, value: Option<&[u8]>) {
        if self.budget == 0 {
            return;
        }
        self.remove(key);
        if let Some(value) = value.filter(|value| self.takes(key, value)) {
            self.insert(key, Box::from(value));
        }
    }

    /// The store key of cache key `key`.
    fn store_key(key: u64) -> Vec<u8> {
        let depth = (key >> 60) as usize;
        let path = (0..depth).map(|i| (key >> (56 - 4 * i)) as u8 & 0x0f);
        std::iter::once(crate::ACCOUNT_TRIE).chain(path).collect()
    }

    /// [`NodeCache::set`] by cache key, for a value read from the store and taken over.
    fn put(&mut self, key: u64, value: Vec<u8>) {
        self.remove(key);
        if self.takes(key, &value) {
            self.insert(key, value.into_boxed_slice());
        }
    }

    fn remove(&mut self, key: u64) {
        if let Some(old) = self.nodes.remove(&key) {
            *self.used(Self::is_shallow(key)) -= Self::cost(&old);
        }
    }

    /// Caches `value` under `key`, which [`NodeCache::takes`].
    fn insert(&mut self, key: u64, value: Box<[u8]>) {
        *self.used(Self::is_shallow(key)) += Self::cost(&value);
        self.nodes.insert(key, value);
    }
}

/// Fills a [`WriteBack`]'s node cache from a scan of the stored account trie in key order
/// ([`WriteBack::cache_warmer`]). A scan in key order meets a subtree's deep branches before the
/// next subtree's shallower ones; where the budget does not take every branch, a node makes room
/// by dropping deeper ones it took earlier, so that the cache ends with the shallowest levels
/// that fit, each shallower node serving sixteen times the accounts of one a level below.
pub struct CacheWarmer<'a> {
    cache: &'a mut NodeCache,
    /// The deeper nodes taken, by depth.
    deep: Vec<Vec<u64>>,
}

impl CacheWarmer<'_> {
    /// The store holds `stored` under `key`, in the form a redb table keeps nodes in
    /// (`compact.rs`): cached if the cache keeps such nodes and has room, or can make it from
    /// deeper nodes.
    pub fn take(&mut self, key: &[u8], stored: &[u8]) -> Result<(), TrieError> {
        let Some(cached) = NodeCache::key(key).filter(|_| self.cache.budget > 0) else {
            return Ok(());
        };
        let value = &*crate::compact::expand(stored)?;
        if !NodeCache::is_shallow(cached) && !crate::node::is_leaf(value) {
            let depth = (cached >> 60) as usize;
            let room = self.cache.budget.saturating_sub(SHALLOW_RESERVE);
            let cost = NodeCache::cost(value);
            while self.cache.deep + cost > room {
                let deeper = self.deep[depth + 1..].iter_mut().rev();
                match deeper.filter_map(Vec::pop).next() {
                    Some(victim) => self.cache.remove(victim),
                    None => return Ok(()),
                }
            }
            self.deep[depth].push(cached);
        }
        self.cache.set(key, Some(value));
        Ok(())
    }
}

/// The buffer: each block's writes for readers, their merge for the block writer, and the
/// writer's clean node cache.
#[derive(Default)]
pub struct WriteBack {
    layers: Layers,
    /// The latest write of every buffered key, shared with its block's layer.
    merged: Latest,
    /// Storage tries wiped while buffering (their key prefixes): the store's keys under them
    /// read as absent unless `merged` holds a later write.
    wiped: HashSet<Vec<u8>>,
    /// Key and value bytes of the buffered blocks' writes.
    bytes: usize,
    /// Stored account-trie nodes, read before the store (under `merged`).
    cache: NodeCache,
}

/// The latest write of every buffered key (`None`: deleted). Account-trie nodes, which every
/// read of the writer's view looks up first and every block rewrites thousands of, are kept by
/// their cache key ([`NodeCache::key`]): a lookup compares keys in the map's table, without
/// following a pointer to a key elsewhere in memory. Other keys (storage tries) by store key.
#[derive(Default)]
struct Latest {
    account: HashMap<u64, Option<SharedRlp>>,
    other: HashMap<Vec<u8>, Option<SharedRlp>>,
}

impl Latest {
    /// The latest write of `key` (whose cache key is `cached`), if buffered.
    fn get(&self, key: &[u8], cached: Option<u64>) -> Option<&Option<SharedRlp>> {
        match cached {
            Some(cached) => self.account.get(&cached),
            None => self.other.get(key),
        }
    }

    /// `value` is the latest write of `key`. Nodes near the root are rewritten by every block:
    /// their entry is reused.
    fn set(&mut self, key: &[u8], value: &Option<SharedRlp>) {
        let latest = match NodeCache::key(key) {
            Some(cached) => self.account.entry(cached).or_default(),
            None => match self.other.get_mut(key) {
                Some(latest) => latest,
                None => self.other.entry(key.to_vec()).or_default(),
            },
        };
        latest.clone_from(value);
    }

    fn len(&self) -> usize {
        self.account.len() + self.other.len()
    }

    /// Every buffered key (as stored) and its latest write, in key order.
    fn sorted(&self) -> Vec<(Cow<'_, [u8]>, &Option<SharedRlp>)> {
        let account = self
            .account
            .iter()
            .map(|(&cached, value)| (Cow::Owned(NodeCache::store_key(cached)), value));
        let other = self
            .other
            .iter()
            .map(|(key, value)| (Cow::Borrowed(&key[..]), value));
        let mut entries: Vec<_> = account.chain(other).collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        entries
    }
}

/// The writer's view: the merged writes over the cached and stored trie. Nodes read from the
/// store that the cache would take are noted, for the cache once the block is buffered.
struct Merged<'a, B: ?Sized> {
    buffer: &'a WriteBack,
    store: &'a B,
    read: Mutex<Vec<(u64, Vec<u8>)>>,
}

impl<B: ?Sized> Merged<'_, B> {
    /// The value of `key` (whose cache key is `cached`) in the buffer or the node cache
    /// (`Some(None)`: deleted or wiped), `None` when only the store knows it.
    fn held(&self, key: &[u8], cached: Option<u64>) -> Option<Option<Vec<u8>>> {
        if let Some(value) = self.buffer.merged.get(key, cached) {
            return Some(value.as_deref().cloned());
        }
        if wiped_in(&self.buffer.wiped, key) {
            return Some(None);
        }
        let value = self.buffer.cache.nodes.get(&cached?)?;
        Some(Some(value.to_vec()))
    }
}

impl<B: TrieStore + ?Sized> TrieStore for Merged<'_, B> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TrieError> {
        let cached = NodeCache::key(key);
        if let Some(value) = self.held(key, cached) {
            return Ok(value);
        }
        let cache = &self.buffer.cache;
        let cached = cached.filter(|_| cache.budget > 0);
        let value = self.store.get(key)?;
        // Only what the cache would take is noted (nothing once it is full).
        if let (Some(cached), Some(value)) = (cached, &value) {
            if cache.takes(cached, value) {
                let mut read = self.read.lock().unwrap_or_else(|e| e.into_inner());
                read.push((cached, value.clone()));
            }
        }
        Ok(value)
    }

    fn get_in_memory(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.held(key, NodeCache::key(key)).flatten()
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
    /// Cacheable nodes the update read from the store (by cache key), as stored.
    read: Vec<(u64, Vec<u8>)>,
}

impl WriteBack {
    /// A buffer whose clean node cache may take `bytes` (0: no cache).
    pub fn with_node_cache(bytes: usize) -> Self {
        let mut buffer = Self::default();
        buffer.cache.budget = bytes;
        buffer
    }

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
            read: Mutex::default(),
        };
        let mut overlay = OverlayTrie::new(&view);
        let root = apply_changes_parallel(&mut overlay, &view, changes)?;
        let writes = overlay.into_writes();
        let bytes = writes.bytes();
        let read = view.read.into_inner().unwrap_or_else(|e| e.into_inner());
        Ok((
            root,
            BlockWrites {
                writes,
                bytes,
                read,
            },
        ))
    }

    /// Buffers a block's writes after the others, once the block is committed without them
    /// (the store is as the block's update read it).
    pub fn push(&mut self, block: BlockWrites) {
        let BlockWrites {
            writes,
            bytes,
            read,
        } = block;
        self.cache_reads(read);
        if !writes.wiped().is_empty() {
            let wiped: HashSet<Vec<u8>> = writes.wiped().iter().cloned().collect();
            debug_assert!(wiped.iter().all(|p| storage_trie_of(p) == Some(p)));
            // Only storage tries are wiped: their keys are not account-trie keys.
            self.merged.other.retain(|k, _| !wiped_in(&wiped, k));
            self.wiped.extend(wiped);
        }
        for (key, value) in writes.entries() {
            self.merged.set(key, value);
        }
        self.bytes += bytes;
        self.layers.0.push(Arc::new(writes));
    }

    /// Writes the buffered blocks and then `block` (if any) to `store`, each key once and in key
    /// order. The buffer is unchanged: tell it with [`WriteBack::flushed`] once the store's writes
    /// are committed.
    pub fn flush<S: TrieStore + ?Sized>(
        &self,
        block: Option<&BlockWrites>,
        store: &mut S,
    ) -> Result<(), TrieError> {
        for prefix in &self.wiped {
            store.delete_prefix(prefix)?;
        }
        for (key, value) in self.merged.sorted() {
            match value {
                Some(value) => store.put(&key, value)?,
                None => store.delete(&key)?,
            }
        }
        match block {
            Some(block) => block.writes.write_to(store),
            None => Ok(()),
        }
    }

    /// Empties the buffer once its [`WriteBack::flush`] (with `block`, if any) is committed: the
    /// store now holds what was buffered, and so does the node cache.
    pub fn flushed(&mut self, block: Option<BlockWrites>) {
        let block = block.map(|block| {
            self.cache_reads(block.read);
            block.writes
        });
        // Storage tries are not cached, so their wiped prefixes cover no cached node.
        for (&key, value) in &self.merged.account {
            self.cache
                .set_cached(key, value.as_deref().map(Vec::as_slice));
        }
        for (key, value) in block.iter().flat_map(OverlayWrites::entries) {
            self.cache.set(key, value.as_deref().map(Vec::as_slice));
        }
        let cache = std::mem::take(&mut self.cache);
        self.start_over(cache);
    }

    /// Cacheable nodes an update read from the store, which still holds them.
    fn cache_reads(&mut self, read: Vec<(u64, Vec<u8>)>) {
        for (key, value) in read {
            self.cache.put(key, value);
        }
    }

    /// A filler of the node cache from a scan of the stored account trie in key order (what a
    /// node that has run a while holds), rather than a read at a time as blocks need them. Only
    /// for the store this buffer follows, as it is now (no write-out while it scans).
    pub fn cache_warmer(&mut self) -> CacheWarmer<'_> {
        CacheWarmer {
            cache: &mut self.cache,
            deep: vec![Vec::new(); MAX_CACHED_DEPTH + 1],
        }
    }

    /// Bytes and number of nodes in the node cache.
    pub fn cached(&self) -> (usize, usize) {
        (self.cache.shallow + self.cache.deep, self.cache.nodes.len())
    }

    /// Empties the buffer and the node cache, keeping the cache's budget: for a store whose trie
    /// was changed or replaced other than by this buffer's write-out.
    pub fn clear(&mut self) {
        let budget = self.cache.budget;
        self.start_over(NodeCache {
            budget,
            ..NodeCache::default()
        });
    }

    /// Empties the buffer, keeping `cache`.
    fn start_over(&mut self, cache: NodeCache) {
        let old = std::mem::replace(
            self,
            Self {
                cache,
                ..Self::default()
            },
        );
        // Freeing a full buffer's nodes takes tens of milliseconds: not on the block's path.
        // Readers' snapshots may still share its layers, which they free in the end.
        if old.merged.len() + old.cache.nodes.len() >= DROP_ELSEWHERE_ENTRIES {
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

    /// Key and value bytes of the buffered writes (the merged map shares the values).
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
    /// that kept an earlier block's layers still reads that block's trie. The node cache, without
    /// a limit or with room for a few nodes, stays within its budget and holds what the store
    /// holds.
    #[test]
    fn buffered_blocks_flushed_every_few_leave_the_store_as_direct_writes_do() {
        for (every, cache) in [(1, usize::MAX), (3, 0), (3, 2_000), (7, usize::MAX)] {
            let mut rng = StdRng::seed_from_u64(every);
            let pool = address_pool(300);
            let mut direct = MemoryTrieStore::new();
            let mut store = MemoryTrieStore::new();
            let mut buffer = WriteBack::with_node_cache(cache);
            let mut kept: Vec<(Layers, MemoryTrieStore, B256)> = Vec::new();
            for number in 0..24u64 {
                let count = rng.gen_range(20..120);
                let changes: Vec<_> = (0..count).map(|_| random_change(&mut rng, &pool)).collect();
                let expected = apply_changes(&mut direct, &changes).unwrap();
                let (root, block) = buffer.apply(&store, &changes).unwrap();
                assert_eq!(root, expected, "block {number}, flush every {every}");
                if buffer.blocks() + 1 >= every as usize {
                    buffer.flush(Some(&block), &mut store).unwrap();
                    buffer.flushed(Some(block));
                } else {
                    buffer.push(block);
                }
                assert_cache_is_stored(&buffer, &store);
                let layers = buffer.layers();
                assert_eq!(state_root(&layers.over(&store)).unwrap(), expected);
                if rng.gen_bool(0.3) {
                    kept.push((layers, store.clone(), expected));
                }
            }
            buffer.flush(None, &mut store).unwrap();
            buffer.flushed(None);
            assert_cache_is_stored(&buffer, &store);
            assert_eq!(store, direct, "flush every {every}");
            for (layers, base, root) in &kept {
                assert_eq!(state_root(&layers.over(base)).unwrap(), *root);
            }
            let cached = buffer.cache.nodes.len();
            match cache {
                0 => assert_eq!(cached, 0),
                usize::MAX => assert!(cached > 16, "{cached} nodes cached"),
                _ => assert!(cached > 0 && buffer.cache.shallow + buffer.cache.deep <= cache),
            }
        }
    }

    /// Every cached node is the store's value of its key unless the buffer wrote the key, no
    /// leaf is cached below the shallow levels, and the cache's byte counts are its nodes'.
    fn assert_cache_is_stored(buffer: &WriteBack, store: &MemoryTrieStore) {
        let (mut shallow, mut deep) = (0, 0);
        for (&cached, value) in &buffer.cache.nodes {
            let key = NodeCache::store_key(cached);
            assert_eq!(NodeCache::key(&key), Some(cached));
            if buffer.merged.get(&key, Some(cached)).is_none() {
                assert_eq!(
                    store.get(&key).unwrap().as_deref(),
                    Some(&value[..]),
                    "{key:?}"
                );
            }
            if NodeCache::is_shallow(cached) {
                shallow += NodeCache::cost(value);
            } else {
                assert!(!crate::node::is_leaf(value), "leaf cached at {key:?}");
                deep += NodeCache::cost(value);
            }
        }
        assert_eq!((shallow, deep), (buffer.cache.shallow, buffer.cache.deep));
    }

    /// A cached node that would grow past the budget is dropped, not kept over it; storage-trie
    /// nodes are never cached, nor leaves below the shallow levels; deeper nodes take only what
    /// the budget leaves beyond the shallow levels' reserve.
    #[test]
    fn the_node_cache_keeps_to_its_budget_and_to_branches_below_the_shallow_levels() {
        let leaf = crate::node::Node::Leaf {
            key: alloy_trie::Nibbles::from_nibbles([1, 2, 3]),
            value: vec![7; 70],
        }
        .encode()
        .rlp;
        let branch = vec![2u8; 532];
        let key = [crate::ACCOUNT_TRIE, 1, 2];
        let mut cache = NodeCache {
            budget: 200 + CACHED_NODE_OVERHEAD,
            ..NodeCache::default()
        };
        cache.set(&key, Some(&leaf));
        assert_eq!(
            cache
                .nodes
                .get(&NodeCache::key(&key).unwrap())
                .map(|v| &v[..]),
            Some(&leaf[..])
        );
        cache.set(&key, Some(&branch));
        assert!(cache.nodes.is_empty());
        assert_eq!(cache.shallow, 0);
        cache.set(&[crate::STORAGE_TRIE], Some(&leaf));
        assert!(cache.nodes.is_empty());

        let deep = [crate::ACCOUNT_TRIE, 1, 2, 3, 4, 5];
        let mut cache = NodeCache {
            budget: SHALLOW_RESERVE + NodeCache::cost(&branch) + 10,
            ..NodeCache::default()
        };
        cache.set(&deep, Some(&leaf));
        assert!(cache.nodes.is_empty(), "a deep leaf is not cached");
        cache.set(&deep, Some(&branch));
        assert_eq!(cache.deep, NodeCache::cost(&branch));
        // The reserve is left to the shallow levels: no room for a second deep branch.
        cache.set(&[crate::ACCOUNT_TRIE, 1, 2, 3, 4, 6], Some(&branch));
        assert_eq!(cache.nodes.len(), 1);
        cache.set(&key, Some(&branch));
        assert_eq!(cache.nodes.len(), 2);
        cache.set(&deep, None);
        assert_eq!((cache.nodes.len(), cache.deep), (1, 0));
        // Too deep for the cache's keys.
        assert_eq!(NodeCache::key(&[crate::ACCOUNT_TRIE; 17]), None);
    }

    /// A scan in key order that meets a subtree's deep branches first ends with the shallowest
    /// branches that fit: a later, shallower one takes the room of a deeper one taken before.
    #[test]
    fn a_warming_scan_keeps_the_shallowest_branches_that_fit() {
        let branch = vec![2u8; 300];
        let leaf = crate::node::Node::Leaf {
            key: alloy_trie::Nibbles::from_nibbles([1, 2, 3]),
            value: vec![7; 70],
        }
        .encode()
        .rlp;
        let key = |path: &[u8]| [&[crate::ACCOUNT_TRIE][..], path].concat();
        let mut buffer = WriteBack::with_node_cache(SHALLOW_RESERVE + 2 * NodeCache::cost(&branch));
        let scan = [
            key(&[1, 1]),
            key(&[1, 1, 1, 1, 1]),
            key(&[1, 1, 1, 1, 1, 2]),
            key(&[1, 1, 1, 1, 1, 2, 3]),
            key(&[2, 2, 2, 2, 2]),
        ];
        let mut warmer = buffer.cache_warmer();
        for path in &scan {
            warmer.take(path, &branch).unwrap();
        }
        warmer.take(&key(&[3, 3, 3, 3, 3, 3]), &leaf).unwrap();
        let mut cached: Vec<_> = buffer
            .cache
            .nodes
            .keys()
            .map(|&k| NodeCache::store_key(k))
            .collect();
        cached.sort();
        assert_eq!(cached, [scan[0].clone(), scan[1].clone(), scan[4].clone()]);
        assert_eq!(buffer.cache.deep, 2 * NodeCache::cost(&branch));
    }

    /// A store changed behind the buffer (an unwind writes the trie directly): once cleared,
    /// the buffer reads the store again, not the nodes it had cached.
    #[test]
    fn clearing_drops_the_node_cache_for_a_store_changed_behind_the_buffer() {
        let mut rng = StdRng::seed_from_u64(11);
        let pool = address_pool(300);
        let mut store = MemoryTrieStore::new();
        let mut buffer = WriteBack::with_node_cache(usize::MAX);
        for _ in 0..4 {
            let changes: Vec<_> = (0..100).map(|_| random_change(&mut rng, &pool)).collect();
            let (_, block) = buffer.apply(&store, &changes).unwrap();
            buffer.flush(Some(&block), &mut store).unwrap();
            buffer.flushed(Some(block));
        }
        assert!(!buffer.cache.nodes.is_empty());
        let behind: Vec<_> = (0..100).map(|_| random_change(&mut rng, &pool)).collect();
        apply_changes(&mut store, &behind).unwrap();
        buffer.clear();
        assert!(buffer.cache.nodes.is_empty());
        let changes: Vec<_> = (0..100).map(|_| random_change(&mut rng, &pool)).collect();
        let mut direct = store.clone();
        let (root, _) = buffer.apply(&store, &changes).unwrap();
        assert_eq!(root, apply_changes(&mut direct, &changes).unwrap());
    }

    /// An account deleted (its storage trie wiped) while buffered, then created again with new
    /// slots: the store's old slots stay gone, the new ones are there, before and after a flush.
    #[test]
    fn a_storage_trie_wiped_in_the_buffer_hides_the_stored_one() {
        let address = Address::repeat_byte(7);
        let with_slots = |nonce, slots: &[(u64, u64)]| AccountChange {
            address,
            before: None,
            info: Some(AccountState {
                nonce,
                balance: U256::from(1),
                code_hash: B256::repeat_byte(1),
            }),
            new_code: None,
            storage_before: Vec::new(),
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

//! [`apply_changes`](crate::apply_changes) on several threads: the account trie's sixteen
//! subtries below the root (with the storage tries of their accounts) are updated side by side,
//! each reading the block's parent trie from a shared read view and writing into its own overlay.
//! The calling thread, which alone holds the store, writes each finished overlay while the others
//! are computed, then finishes the root.
//!
//! Nodes in different subtries never share a store key (account-trie keys start with the
//! subtrie's nibble, storage-trie keys with the account's hashed address), so replaying the
//! overlays in any order gives the store exactly what the serial update leaves.

use std::sync::{
    atomic::{AtomicUsize, Ordering},
    OnceLock,
};

use alloy_primitives::B256;
use alloy_trie::{nodes::RlpNode, Nibbles};

use crate::{
    account_prefix, account_updates, by_hashed_address,
    node::Node,
    state::AccountChange,
    store::{OverlayTrie, OverlayWrites},
    update::{prepare, Child, TrieUpdater},
    TrieError, TrieStore,
};

/// Below this many changed accounts a block is updated on the calling thread: a thread start
/// costs tens of microseconds, about what a few dozen accounts' paths cost to update.
const PARALLEL_MIN_ACCOUNTS: usize = 64;

/// [`apply_changes`](crate::apply_changes) on up to as many threads as the machine has cores.
///
/// `base` must be a read view of what `store` holds before the call (the parent block's trie:
/// a read transaction of the database whose write transaction `store` is). The threads read
/// from `base`, so it must be shareable; `store` is written from the calling thread only. When
/// the two roots differ, or for small blocks and tries whose root is not a branch, the update
/// runs serially on `store`. The result, root and stored nodes, is the serial update's.
pub fn apply_changes_parallel<S, B>(
    store: &mut S,
    base: &B,
    changes: &[AccountChange],
) -> Result<B256, TrieError>
where
    S: TrieStore,
    B: TrieStore + Sync,
{
    // `available_parallelism` reads the cgroup files on every call: once is enough.
    static THREADS: OnceLock<usize> = OnceLock::new();
    let threads =
        *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    apply_on_threads(store, base, changes, threads)
}

/// [`apply_changes_parallel`] on `threads` threads (tests choose the count).
pub(crate) fn apply_on_threads<S, B>(
    store: &mut S,
    base: &B,
    changes: &[AccountChange],
    threads: usize,
) -> Result<B256, TrieError>
where
    S: TrieStore,
    B: TrieStore + Sync,
{
    let ordered = by_hashed_address(changes);
    let root_key = account_prefix();
    let root = store.get(&root_key)?;
    let branch = match &root {
        Some(rlp) if threads > 1 && ordered.len() >= PARALLEL_MIN_ACCOUNTS => {
            match Node::decode(rlp)? {
                Node::Branch { children } if base.get(&root_key)? == root => Some(children),
                _ => None,
            }
        }
        _ => None,
    };
    let Some(children) = branch else {
        let updates = account_updates(store, &ordered)?;
        return TrieUpdater::new(store, &root_key).apply(&prepare(updates));
    };

    let groups = by_root_nibble(&ordered);
    let next = AtomicUsize::new(0);
    let updated = std::thread::scope(|scope| {
        let (done, finished) = std::sync::mpsc::channel();
        for _ in 0..threads.min(groups.len()) {
            let (done, groups, next, children) = (done.clone(), &groups, &next, &children);
            let work = move || loop {
                let Some(&(nibble, accounts)) = groups.get(next.fetch_add(1, Ordering::Relaxed))
                else {
                    return;
                };
                if done
                    .send(subtrie(base, children, nibble, accounts))
                    .is_err()
                {
                    return; // the calling thread stopped at an error
                }
            };
            // Named, so that profiles and `top -H` tell the block's trie work apart. Without a
            // thread to be had, the calling thread does the work.
            let spawned = std::thread::Builder::new()
                .name("trie-update".into())
                .spawn_scoped(scope, work.clone());
            if spawned.is_err() {
                work();
            }
        }
        drop(done);
        // Each finished subtrie is written while the others are still being computed.
        let mut updated = Vec::with_capacity(groups.len());
        for result in finished {
            let (child, writes) = result?;
            store.put_overlay(writes)?;
            updated.push(child);
        }
        Ok::<_, TrieError>(updated)
    })?;
    let mut updater = TrieUpdater::new(store, &root_key);
    let root = updater.finish_branch(Nibbles::new(), children, updated)?;
    updater.store_root(true, root)
}

/// The (sorted) accounts grouped by the first nibble of their hashed address: one group per
/// subtrie below the root.
fn by_root_nibble<'c, 'a>(
    ordered: &'c [(B256, &'a AccountChange)],
) -> Vec<(u8, &'c [(B256, &'a AccountChange)])> {
    ordered
        .chunk_by(|(a, _), (b, _)| a[0] >> 4 == b[0] >> 4)
        .map(|group| (group[0].0[0] >> 4, group))
        .collect()
}

/// Update the subtrie below the root's child `nibble` (and its accounts' storage tries) over
/// `base`: the child's new node, and every node below it as overlay writes.
fn subtrie<B: TrieStore + Sync>(
    base: &B,
    children: &[Option<RlpNode>; 16],
    nibble: u8,
    accounts: &[(B256, &AccountChange)],
) -> Result<(Child, OverlayWrites), TrieError> {
    let mut overlay = OverlayTrie::new(base);
    let updates = prepare(account_updates(&mut overlay, accounts)?);
    let prefix = account_prefix();
    let mut updater = TrieUpdater::new(&mut overlay, &prefix);
    let path = Nibbles::from_nibbles([nibble]);
    let existed = children[nibble as usize].is_some();
    let existing = if existed {
        Some(updater.load_existing(&path)?)
    } else {
        None
    };
    let node = updater.update(path, existing, &updates)?;
    let child = Child {
        nibble,
        existed,
        node,
    };
    Ok((child, overlay.into_writes()))
}

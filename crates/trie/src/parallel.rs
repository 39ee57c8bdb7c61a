//! [`apply_changes`](crate::apply_changes) on several threads: the account trie's sixteen
//! subtries below the root (with the storage tries of their accounts) are updated side by side,
//! each reading the block's parent trie from a shared read view and writing into its own overlay;
//! the overlays are then written to the store and the root is finished on the calling thread.
//!
//! Nodes in different subtries never share a store key (account-trie keys start with the
//! subtrie's nibble, storage-trie keys with the account's hashed address), so replaying the
//! overlays in any order gives the store exactly what the serial update leaves.

use std::sync::OnceLock;

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

    let shares = shares(&ordered, threads);
    let children_ref = &children;
    let results = std::thread::scope(|scope| {
        let mut shares = shares.into_iter();
        let mine = shares.next().expect("at least one share");
        let spawned: Vec<_> = shares
            .map(|share| scope.spawn(move || subtries(base, children_ref, share)))
            .collect();
        let mut results = vec![subtries(base, children_ref, mine)];
        for handle in spawned {
            results.push(handle.join().expect("a trie update thread does not panic"));
        }
        results
    });

    let mut updated = Vec::with_capacity(16);
    for result in results {
        let (children, writes) = result?;
        writes.write_to(store)?;
        updated.extend(children);
    }
    let mut updater = TrieUpdater::new(store, &root_key);
    let root = updater.finish_branch(Nibbles::new(), children, updated)?;
    updater.store_root(true, root)
}

/// One thread's part: the accounts under some of the root's nibbles, grouped by nibble.
type Share<'c, 'a> = Vec<(u8, &'c [(B256, &'a AccountChange)])>;

/// Split the (sorted) accounts into at most `threads` runs of whole nibble groups, about equal
/// in accounts.
fn shares<'c, 'a>(ordered: &'c [(B256, &'a AccountChange)], threads: usize) -> Vec<Share<'c, 'a>> {
    let target = ordered.len().div_ceil(threads);
    let mut shares: Vec<Share<'c, 'a>> = vec![Vec::new()];
    let mut in_share = 0;
    let mut start = 0;
    while start < ordered.len() {
        let nibble = ordered[start].0[0] >> 4;
        let len = ordered[start..]
            .iter()
            .take_while(|(hashed, _)| hashed[0] >> 4 == nibble)
            .count();
        if in_share >= target && shares.len() < threads {
            shares.push(Vec::new());
            in_share = 0;
        }
        shares
            .last_mut()
            .expect("one share at least")
            .push((nibble, &ordered[start..start + len]));
        in_share += len;
        start += len;
    }
    shares
}

/// Update the subtries of one share over `base`: the new node of each touched root child, and
/// every node below them as overlay writes.
fn subtries<B: TrieStore + Sync>(
    base: &B,
    children: &[Option<RlpNode>; 16],
    share: Share<'_, '_>,
) -> Result<(Vec<Child>, OverlayWrites), TrieError> {
    let mut overlay = OverlayTrie::new(base);
    let prefix = account_prefix();
    let mut updated = Vec::with_capacity(share.len());
    for (nibble, accounts) in share {
        let updates = prepare(account_updates(&mut overlay, accounts)?);
        let mut updater = TrieUpdater::new(&mut overlay, &prefix);
        let path = Nibbles::from_nibbles([nibble]);
        let existed = children[nibble as usize].is_some();
        let existing = if existed {
            Some(updater.load_existing(&path)?)
        } else {
            None
        };
        let node = updater.update(path, existing, &updates)?;
        updated.push(Child {
            nibble,
            existed,
            node,
        });
    }
    Ok((updated, overlay.into_writes()))
}

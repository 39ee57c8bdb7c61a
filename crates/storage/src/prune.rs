//! A pruned node (`--history-window N`): the state history of blocks older than the window is
//! deleted as the chain grows, so the database stops growing with the state's past.
//!
//! Every history table (`account_history`, `storage_history`) keeps, per key,
//! the value before each block that changed it (except an account's creation), the block in
//! the last 8 bytes of the key. A
//! read of block `b` looks for the first entry after `b`; an entry of block `e` is needed only
//! by reads of blocks before `e`. Once the oldest readable block is `oldest = head - N`, every
//! entry of a block at or before `oldest` can go.
//!
//! The tables are ordered by key, not by block, so each commit sweeps on from where the last
//! one stopped (a cursor per table in `PRUNE_CURSORS`), looking at a bounded number of entries
//! and deleting the old ones, and wraps around at the end. Looking at [`PRUNE_SCAN_MIN`] or
//! four times as many entries as the block wrote, whichever is more, a sweep passes over a
//! table while it grows by a quarter at most: the history stays within about 4/3 of the
//! window's own.

use redb::{ReadableTable, ReadableTableMetadata, TableDefinition, TableHandle, WriteTransaction};

use super::{StorageError, ACCOUNT_HISTORY, META, STORAGE_HISTORY};
use crate::tables::{PRUNE_CURSORS, STATE_HISTORY_FROM};

/// The fewest entries a commit looks at in each history table: a few milliseconds of work.
pub(crate) const PRUNE_SCAN_MIN: u64 = 16_384;

/// The smallest `--history-window`: deeper than any reorganisation a Clique or dev chain makes
/// (geth keeps the state of the last 128 blocks).
pub const MIN_HISTORY_WINDOW: u64 = 128;

/// Lengths of the history tables before a block is written, to size the sweep.
pub(crate) struct Lengths([u64; 2]);

pub(crate) fn lengths(tx: &WriteTransaction) -> Result<Lengths, StorageError> {
    Ok(Lengths([
        tx.open_table(ACCOUNT_HISTORY)?.len()?,
        tx.open_table(STORAGE_HISTORY)?.len()?,
    ]))
}

/// After block `head` is written: moves the first readable block to `head - window` and sweeps
/// each history table on (see the module docs).
pub(crate) fn prune(
    tx: &WriteTransaction,
    head: u64,
    window: u64,
    before: &Lengths,
) -> Result<(), StorageError> {
    let oldest = head.saturating_sub(window);
    if oldest == 0 {
        return Ok(());
    }
    {
        let mut meta = tx.open_table(META)?;
        let from = meta.get(STATE_HISTORY_FROM)?.map_or(0, |v| v.value());
        if from < oldest {
            meta.insert(STATE_HISTORY_FROM, oldest)?;
        }
    }
    let mut cursors = tx.open_table(PRUNE_CURSORS)?;
    sweep(tx, &mut cursors, ACCOUNT_HISTORY, oldest, before.0[0])?;
    sweep(tx, &mut cursors, STORAGE_HISTORY, oldest, before.0[1])?;
    Ok(())
}

fn sweep<V: redb::Value + 'static>(
    tx: &WriteTransaction,
    cursors: &mut redb::Table<&str, &[u8]>,
    def: TableDefinition<&'static [u8], V>,
    oldest: u64,
    len_before: u64,
) -> Result<(), StorageError> {
    let mut table = tx.open_table(def)?;
    let written = table.len()?.saturating_sub(len_before);
    let budget = PRUNE_SCAN_MIN.max(written.saturating_mul(4));
    let name = def.name();
    let from = cursors
        .get(name)?
        .map(|v| v.value().to_vec())
        .unwrap_or_default();
    let mut old = Vec::new();
    let mut next = None;
    for (seen, entry) in (0u64..).zip(table.range::<&[u8]>(from.as_slice()..)?) {
        let (key, _) = entry?;
        let key = key.value();
        if seen == budget {
            next = Some(key.to_vec());
            break;
        }
        if super::codec::block_suffix(key) <= oldest {
            old.push(key.to_vec());
        }
    }
    for key in &old {
        table.remove(key.as_slice())?;
    }
    // At the end of the table the next sweep starts over from the first key.
    cursors.insert(name, next.unwrap_or_default().as_slice())?;
    Ok(())
}

//! The log index: which blocks may hold logs matching an address/topic filter.

use std::collections::BTreeSet;

use alloy_primitives::{Address, B256};
use redb::ReadableTable;

use super::{codec, Storage, StorageError};

/// An address/topic filter over a block range, as eth_getLogs gives it.
#[derive(Debug, Clone, Default)]
pub struct LogQuery {
    /// First block (inclusive).
    pub from: u64,
    /// Last block (inclusive).
    pub to: u64,
    /// Any of these emitters; empty = any.
    pub addresses: Vec<Address>,
    /// Per position, any of these topics; empty = any.
    pub topics: [Vec<B256>; 4],
}

impl Storage {
    /// Blocks in the range that may contain matching logs, ascending. Without address or topic
    /// constraints this is every block of the range; with them, only indexed blocks are visited,
    /// so a selective filter costs O(matching blocks), not O(range).
    pub fn log_candidate_blocks(&self, q: &LogQuery) -> Result<Vec<u64>, StorageError> {
        let snap = self.snapshot()?;
        let mut result: Option<BTreeSet<u64>> = None;
        if !q.addresses.is_empty() {
            let table = snap.table(&snap.log_addresses)?;
            let mut set = BTreeSet::new();
            for a in &q.addresses {
                collect(table, a.as_slice(), q.from, q.to, &mut set)?;
            }
            result = Some(set);
        }
        let table = snap.table(&snap.log_topics)?;
        for position in q.topics.iter().filter(|t| !t.is_empty()) {
            let mut set = BTreeSet::new();
            for t in position {
                collect(table, t.as_slice(), q.from, q.to, &mut set)?;
            }
            result = Some(match result {
                Some(prev) => prev.intersection(&set).copied().collect(),
                None => set,
            });
        }
        Ok(match result {
            Some(set) => set.into_iter().collect(),
            None => (q.from..=q.to).collect(),
        })
    }
}

fn collect(
    table: &impl ReadableTable<&'static [u8], ()>,
    prefix: &[u8],
    from: u64,
    to: u64,
    out: &mut BTreeSet<u64>,
) -> Result<(), StorageError> {
    let lo = codec::with_block(prefix, from);
    let hi = codec::with_block(prefix, to);
    for entry in table.range(lo.as_slice()..=hi.as_slice())? {
        out.insert(codec::block_suffix(entry?.0.value()));
    }
    Ok(())
}

impl Storage {
    /// Blocks in `from..=to` in which `address` changed (its balance, nonce or code: the account
    /// history) or emitted a log (the log index): at most `limit` of them, newest first when
    /// `newest_first`, else oldest first. A few index reads, never a scan of blocks.
    pub fn address_activity(
        &self,
        address: Address,
        from: u64,
        to: u64,
        newest_first: bool,
        limit: usize,
    ) -> Result<Vec<u64>, StorageError> {
        if from > to || limit == 0 {
            return Ok(Vec::new());
        }
        let snap = self.snapshot()?;
        let lo = codec::with_block(address.as_slice(), from);
        let hi = codec::with_block(address.as_slice(), to);
        let mut blocks = BTreeSet::new();
        // A change to an existing account has a history entry at its block; an account's
        // creation has none, and its block is in the record it wrote (`StoredAccount::at`): the
        // value of the account's next entry, or the current record. Those records are the
        // values of the entries looked at and the first record after `to`.
        let history = snap.table(&snap.account_history)?;
        let mut records = Vec::new();
        for entry in first(
            history.range(lo.as_slice()..=hi.as_slice())?,
            newest_first,
            limit,
        ) {
            let (key, value) = entry?;
            blocks.insert(codec::block_suffix(key.value()));
            records.push(value.value().to_vec());
        }
        let next = match to.checked_add(1) {
            Some(after) => {
                let after = codec::with_block(address.as_slice(), after);
                let last = codec::with_block(address.as_slice(), u64::MAX);
                history
                    .range(after.as_slice()..=last.as_slice())?
                    .next()
                    .transpose()?
                    .map(|(_, v)| v.value().to_vec())
            }
            None => None,
        };
        let next = match next {
            Some(record) => Some(record),
            None => snap.with_account(&address, |r| Ok(r.map(<[u8]>::to_vec)))?,
        };
        for record in records.iter().chain(&next) {
            if record.is_empty() {
                continue;
            }
            if let Some(written) = codec::decode_account(record)?.written {
                if (from..=to).contains(&written) {
                    blocks.insert(written);
                }
            }
        }
        let logs = snap.table(&snap.log_addresses)?;
        for key in first(
            logs.range(lo.as_slice()..=hi.as_slice())?,
            newest_first,
            limit,
        ) {
            blocks.insert(codec::block_suffix(key?.0.value()));
        }
        Ok(first(blocks.into_iter(), newest_first, limit))
    }
}

/// The first `limit` of `items`, from the back when `newest_first`.
fn first<T>(items: impl DoubleEndedIterator<Item = T>, newest_first: bool, limit: usize) -> Vec<T> {
    if newest_first {
        items.rev().take(limit).collect()
    } else {
        items.take(limit).collect()
    }
}

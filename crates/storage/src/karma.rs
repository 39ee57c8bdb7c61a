//! The Karma ledger's tables: written with each block by [`super::write`], read at any held
//! block (a ledger entry is keyed by the block that set it, so the value at block N is the last
//! entry at or before N: one range lookup, like the state history).

use alloy_primitives::{Address, B256};
use redb::{ReadableTable, WriteTransaction};

use super::{codec, snapshot::Snapshot, Storage, StorageError};
use crate::tables::{KARMA_DENY, KARMA_OPERATOR_DENY, KARMA_TIERS, KARMA_USAGE};
use l2node_trie::state::{DenyEntry, DenyReason, KarmaDelta, KarmaTier, KarmaUsage};

fn usage_prefix(sender: &Address, epoch: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(36);
    key.extend_from_slice(sender.as_slice());
    key.extend_from_slice(&epoch.to_be_bytes());
    key
}

fn encode_deny(entry: &Option<DenyEntry>) -> Vec<u8> {
    match entry {
        None => Vec::new(),
        Some(d) => {
            let reason = match d.reason {
                DenyReason::QuotaExceeded => 0u8,
                DenyReason::RlnViolation => 1,
                DenyReason::Operator => 2,
            };
            let mut v = vec![reason];
            v.extend_from_slice(&d.until_epoch.to_be_bytes());
            v
        }
    }
}

fn decode_deny(bytes: &[u8]) -> Result<Option<DenyEntry>, StorageError> {
    if bytes.is_empty() {
        return Ok(None);
    }
    let bad = || codec::corrupt("karma_deny", format!("bad entry {bytes:02x?}"));
    let reason = match bytes[0] {
        0 => DenyReason::QuotaExceeded,
        1 => DenyReason::RlnViolation,
        2 => DenyReason::Operator,
        _ => return Err(bad()),
    };
    let until = bytes
        .get(1..9)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_be_bytes)
        .ok_or_else(bad)?;
    Ok(Some(DenyEntry {
        reason,
        until_epoch: until,
    }))
}

/// Writes one block's ledger changes (inside the block's write transaction).
pub(super) fn write_delta(
    tx: &WriteTransaction,
    number: u64,
    delta: &KarmaDelta,
) -> Result<(), StorageError> {
    if delta.is_empty() {
        return Ok(());
    }
    let mut usage = tx.open_table(KARMA_USAGE)?;
    for (sender, epoch, u) in &delta.usage {
        let key = codec::with_block(&usage_prefix(sender, *epoch), number);
        usage.insert(key.as_slice(), (u.used, u.bonus))?;
    }
    let mut deny = tx.open_table(KARMA_DENY)?;
    for (sender, entry) in &delta.deny {
        let key = codec::with_block(sender.as_slice(), number);
        deny.insert(key.as_slice(), encode_deny(entry).as_slice())?;
    }
    if let Some(tiers) = &delta.tiers {
        let json = serde_json::to_vec(tiers).expect("tiers serialize");
        tx.open_table(KARMA_TIERS)?
            .insert(number, json.as_slice())?;
    }
    Ok(())
}

/// Removes what [`write_delta`] wrote for block `number` (the same `delta`).
pub(super) fn remove_delta(
    tx: &WriteTransaction,
    number: u64,
    delta: &KarmaDelta,
) -> Result<(), StorageError> {
    if delta.is_empty() {
        return Ok(());
    }
    let mut usage = tx.open_table(KARMA_USAGE)?;
    for (sender, epoch, _) in &delta.usage {
        usage.remove(codec::with_block(&usage_prefix(sender, *epoch), number).as_slice())?;
    }
    let mut deny = tx.open_table(KARMA_DENY)?;
    for (sender, _) in &delta.deny {
        deny.remove(codec::with_block(sender.as_slice(), number).as_slice())?;
    }
    if delta.tiers.is_some() {
        tx.open_table(KARMA_TIERS)?.remove(number)?;
    }
    Ok(())
}

/// One raw ledger record: table, key, value.
pub type LedgerRecord = (&'static str, Vec<u8>, Vec<u8>);

/// The ledger as of one block.
pub struct LedgerAt {
    snap: std::sync::Arc<Snapshot>,
    block: u64,
}

impl std::fmt::Debug for LedgerAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LedgerAt")
            .field("block", &self.block)
            .finish()
    }
}

impl LedgerAt {
    /// The block this view is at.
    pub fn block(&self) -> u64 {
        self.block
    }

    /// Whether this view is at the head of its snapshot.
    pub fn at_head(&self) -> bool {
        self.snap.head == Some(self.block)
    }

    /// The hash of the block this view is at (zero if this view holds no such block).
    pub fn block_hash(&self) -> Result<B256, StorageError> {
        self.snap.block_hash(self.block)
    }

    /// A sender's usage in `epoch`.
    pub fn usage(&self, sender: &Address, epoch: u64) -> Result<KarmaUsage, StorageError> {
        let table = self.snap.table(&self.snap.karma_usage)?;
        let prefix = usage_prefix(sender, epoch);
        let from = codec::with_block(&prefix, 0);
        let to = codec::with_block(&prefix, self.block);
        let last = table.range(from.as_slice()..=to.as_slice())?.next_back();
        Ok(match last {
            Some(e) => {
                let (used, bonus) = e?.1.value();
                KarmaUsage { used, bonus }
            }
            None => KarmaUsage::default(),
        })
    }

    /// A sender's latest deny entry (expired or not; the caller compares epochs).
    pub fn deny(&self, sender: &Address) -> Result<Option<DenyEntry>, StorageError> {
        let table = self.snap.table(&self.snap.karma_deny)?;
        let from = codec::with_block(sender.as_slice(), 0);
        let to = codec::with_block(sender.as_slice(), self.block);
        match table.range(from.as_slice()..=to.as_slice())?.next_back() {
            Some(e) => decode_deny(e?.1.value()),
            None => Ok(None),
        }
    }

    /// The tiers in force and the epoch they started in (`None` on a chain without Karma).
    pub fn tiers(&self) -> Result<Option<(u64, Vec<KarmaTier>)>, StorageError> {
        let table = self.snap.table(&self.snap.karma_tiers)?;
        match table.range(0..=self.block)?.next_back() {
            Some(e) => serde_json::from_slice(e?.1.value())
                .map(Some)
                .map_err(|e| codec::corrupt("karma_tiers", e.to_string())),
            None => Ok(None),
        }
    }

    /// Every ledger record up to this block, in key order: (table, key, value) as bytes. For
    /// comparing two databases that imported the same blocks.
    pub fn dump(&self) -> Result<Vec<LedgerRecord>, StorageError> {
        let mut out = Vec::new();
        for e in self.snap.table(&self.snap.karma_usage)?.iter()? {
            let (k, v) = e?;
            if codec::block_suffix(k.value()) <= self.block {
                let (used, bonus) = v.value();
                let value = [used.to_be_bytes(), bonus.to_be_bytes()].concat();
                out.push(("usage", k.value().to_vec(), value));
            }
        }
        for e in self.snap.table(&self.snap.karma_deny)?.iter()? {
            let (k, v) = e?;
            if codec::block_suffix(k.value()) <= self.block {
                out.push(("deny", k.value().to_vec(), v.value().to_vec()));
            }
        }
        for e in self
            .snap
            .table(&self.snap.karma_tiers)?
            .range(0..=self.block)?
        {
            let (k, v) = e?;
            out.push((
                "tiers",
                k.value().to_be_bytes().to_vec(),
                v.value().to_vec(),
            ));
        }
        Ok(out)
    }
}

impl Storage {
    /// The Karma ledger as of block `number` (`None` = the head).
    pub fn ledger_at(&self, number: Option<u64>) -> Result<LedgerAt, StorageError> {
        let snap = self.snapshot()?;
        let block = number.or(snap.head).unwrap_or(0);
        Ok(LedgerAt { snap, block })
    }

    /// Operator deny entries: sender -> last denied epoch.
    pub fn operator_deny_list(&self) -> Result<Vec<(Address, u64)>, StorageError> {
        use redb::ReadableDatabase;
        let tx = self.db.begin_read()?;
        let table = tx.open_table(KARMA_OPERATOR_DENY)?;
        let list = table
            .iter()?
            .map(|e| e.map(|(k, v)| (Address::from(*k.value()), v.value())))
            .collect::<Result<_, _>>()?;
        Ok(list)
    }

    /// Adds (`Some(until_epoch)`) or removes (`None`) an operator deny entry.
    pub fn set_operator_denied(
        &self,
        sender: &Address,
        until_epoch: Option<u64>,
    ) -> Result<(), StorageError> {
        let tx = self.db.begin_write()?;
        {
            let mut table = tx.open_table(KARMA_OPERATOR_DENY)?;
            match until_epoch {
                Some(e) => {
                    table.insert(&sender.0 .0, e)?;
                }
                None => {
                    table.remove(&sender.0 .0)?;
                }
            }
        }
        tx.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_entries_round_trip() {
        for entry in [
            None,
            Some(DenyEntry {
                reason: DenyReason::RlnViolation,
                until_epoch: 20_000,
            }),
            Some(DenyEntry {
                reason: DenyReason::Operator,
                until_epoch: u64::MAX,
            }),
        ] {
            assert_eq!(decode_deny(&encode_deny(&entry)).unwrap(), entry);
        }
        assert!(decode_deny(&[9, 0]).is_err());
    }
}

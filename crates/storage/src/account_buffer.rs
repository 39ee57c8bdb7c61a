//! The account records of the blocks whose trie nodes are buffered (`write.rs`).
//!
//! Addresses are random keys: written with each block, a block of 1,300 transfers to new
//! accounts dirtied about as many pages of `accounts`, and each commit copied, checksummed and
//! wrote them again, a quarter of a synced block's import at a million accounts. The records stay
//! in memory and are written, sorted, with the trie's write-out, so that a page is written once
//! per write-out rather than once per block. Readers look here first. Each block's records are
//! also written with it, together, under its number in `account_writes` (one append, not a page
//! per account), so that a crash loses none: opening the database writes them to `accounts`
//! before anything reads the state ([`replay`]).

use std::sync::Arc;

use alloy_primitives::Address;
use redb::{ReadableTable, Table, WriteTransaction};

use crate::{codec, tables::ACCOUNT_WRITES, StorageError, ACCOUNTS};

/// Bits of a block's address filter for each of its records: with two bits set per address,
/// about one lookup in a hundred of an address the block did not change searches its records.
const FILTER_BITS_PER_RECORD: usize = 16;

/// What one block wrote to `accounts`: each record it changed, by address (`None`: removed).
pub(crate) struct BlockAccounts {
    records: Vec<(Address, Option<Box<[u8]>>)>,
    /// A Bloom filter of the addresses: a lookup of a new account misses every buffered block,
    /// and a binary search of each (64 of them) took a fifth of a synced block's import.
    filter: Box<[u64]>,
}

impl BlockAccounts {
    /// A block's records, each address once.
    pub(crate) fn new(mut records: Vec<(Address, Option<Box<[u8]>>)>) -> Self {
        // A block's changes come in address order: nothing to do then.
        records.sort_unstable_by_key(|(a, _)| *a);
        let bits = (records.len() * FILTER_BITS_PER_RECORD)
            .next_power_of_two()
            .max(64);
        let mut filter = vec![0u64; bits / 64].into_boxed_slice();
        for (address, _) in &records {
            for bit in filter_bits(address, bits) {
                filter[bit / 64] |= 1 << (bit % 64);
            }
        }
        Self { records, filter }
    }

    /// Whether the block may have changed `address` (`false`: it did not).
    fn may_hold(&self, address: &Address) -> bool {
        filter_bits(address, self.filter.len() * 64)
            .into_iter()
            .all(|bit| self.filter[bit / 64] & (1 << (bit % 64)) != 0)
    }

    /// Its `account_writes` value: address ++ record length (one byte; 0: removed) ++ record,
    /// for each account.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let len = self
            .records
            .iter()
            .map(|(_, r)| 21 + r.as_ref().map_or(0, |r| r.len()));
        let mut out = Vec::with_capacity(len.sum());
        for (address, record) in &self.records {
            out.extend_from_slice(address.as_slice());
            let record = record.as_deref().unwrap_or_default();
            // A record is at most 84 bytes (`codec::encode_account`), and never empty.
            out.push(record.len() as u8);
            out.extend_from_slice(record);
        }
        out
    }

    /// Block `number`'s records from its `account_writes` value.
    fn decode(number: u64, mut bytes: &[u8]) -> Result<Self, StorageError> {
        let corrupt = || codec::corrupt("account_writes", format!("block {number}'s records"));
        let mut records = Vec::new();
        while !bytes.is_empty() {
            let (address, rest) = bytes.split_at_checked(20).ok_or_else(corrupt)?;
            let (&len, rest) = rest.split_first().ok_or_else(corrupt)?;
            let (record, rest) = rest.split_at_checked(len.into()).ok_or_else(corrupt)?;
            records.push((
                Address::from_slice(address),
                (len > 0).then(|| Box::from(record)),
            ));
            bytes = rest;
        }
        Ok(Self::new(records))
    }
}

/// The two filter bits of `address` in a filter of `bits` bits (a power of two): from its first
/// and second eight bytes, which for most addresses are as random as a hash (addresses that
/// share them, such as those with leading zero bytes, only make a lookup search the block).
fn filter_bits(address: &Address, bits: usize) -> [usize; 2] {
    let word = |at: usize| {
        u64::from_le_bytes(address[at..at + 8].try_into().expect("eight bytes")) as usize
    };
    [word(0) & (bits - 1), word(8) & (bits - 1)]
}

/// The buffered blocks' records, oldest first. Cloning shares them (a reader's snapshot keeps
/// the ones of its head).
#[derive(Clone, Default)]
pub(crate) struct AccountLayers(Vec<Arc<BlockAccounts>>);

impl AccountLayers {
    /// The latest buffered record of `address`: `None` if no buffered block changed it,
    /// `Some(None)` if the latest that did removed it.
    pub(crate) fn get(&self, address: &Address) -> Option<Option<&[u8]>> {
        self.0.iter().rev().find_map(|block| {
            if !block.may_hold(address) {
                return None;
            }
            let at = block
                .records
                .binary_search_by(|(a, _)| a.cmp(address))
                .ok()?;
            Some(block.records[at].1.as_deref())
        })
    }

    /// Every address a buffered block changed (with repeats).
    pub(crate) fn addresses(&self) -> impl Iterator<Item = &Address> {
        self.0.iter().flat_map(|b| b.records.iter().map(|(a, _)| a))
    }

    /// Buffers a committed block's records after the others.
    pub(crate) fn push(&mut self, block: BlockAccounts) {
        self.0.push(Arc::new(block));
    }

    /// Writes the buffered records and then `block`'s (if any) to `accounts`, in key order (of
    /// an address in two blocks, the later), and empties `account_writes`. The buffer is
    /// unchanged: [`AccountLayers::clear`] it once the write is committed.
    pub(crate) fn write(
        &self,
        block: Option<&BlockAccounts>,
        tx: &WriteTransaction,
    ) -> Result<(), StorageError> {
        let blocks = self.0.iter().map(|b| &**b).chain(block);
        let mut records: Vec<&(Address, Option<Box<[u8]>>)> =
            blocks.flat_map(|b| b.records.iter()).collect();
        // Stable: of equal addresses the later block comes last, and only it is written.
        records.sort_by_key(|(a, _)| *a);
        let mut accounts = tx.open_table(ACCOUNTS)?;
        for (i, (address, record)) in records.iter().enumerate() {
            if records.get(i + 1).is_some_and(|(next, _)| next == address) {
                continue;
            }
            match record {
                Some(record) => accounts.insert(&address.0 .0, &**record)?,
                None => accounts.remove(&address.0 .0)?,
            };
        }
        clear_writes(tx)
    }

    /// Empties the buffer (its records are in the table, or their blocks are gone).
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }
}

/// Removes every entry of `account_writes` (their records are in `accounts`).
fn clear_writes(tx: &WriteTransaction) -> Result<(), StorageError> {
    let mut writes: Table<u64, &[u8]> = tx.open_table(ACCOUNT_WRITES)?;
    writes.retain(|_, _| false)?;
    Ok(())
}

/// Writes the records of `account_writes` to `accounts`, oldest block first, and empties it:
/// what the buffer held when the node stopped without writing it out. Returns the number of
/// blocks replayed.
pub(crate) fn replay(tx: &WriteTransaction) -> Result<usize, StorageError> {
    let mut layers = AccountLayers::default();
    for entry in tx.open_table(ACCOUNT_WRITES)?.iter()? {
        let (number, bytes) = entry?;
        layers.push(BlockAccounts::decode(number.value(), bytes.value())?);
    }
    if !layers.0.is_empty() {
        layers.write(None, tx)?;
    }
    Ok(layers.0.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(records: &[(u8, Option<&[u8]>)]) -> BlockAccounts {
        BlockAccounts::new(
            records
                .iter()
                .map(|(a, r)| (Address::repeat_byte(*a), r.map(Box::from)))
                .collect(),
        )
    }

    #[test]
    fn the_latest_buffered_record_wins_and_is_written_in_place_of_the_earlier_ones() {
        let dir = tempfile::tempdir().unwrap();
        let db = redb::Database::create(dir.path().join("a.redb")).unwrap();
        let mut layers = AccountLayers::default();
        layers.push(block(&[
            (1, Some(b"one")),
            (2, Some(b"two")),
            (3, Some(b"3")),
        ]));
        layers.push(block(&[(2, None), (3, Some(b"three"))]));
        assert_eq!(
            layers.get(&Address::repeat_byte(1)),
            Some(Some(&b"one"[..]))
        );
        assert_eq!(layers.get(&Address::repeat_byte(2)), Some(None));
        assert_eq!(
            layers.get(&Address::repeat_byte(3)),
            Some(Some(&b"three"[..]))
        );
        assert_eq!(layers.get(&Address::repeat_byte(4)), None);

        // Written with the block, then replayed as after a crash.
        let tx = db.begin_write().unwrap();
        {
            let mut accounts = tx.open_table(ACCOUNTS).unwrap();
            accounts.insert(&[2; 20], &b"old"[..]).unwrap();
            let mut writes = tx.open_table(ACCOUNT_WRITES).unwrap();
            for (number, b) in (1..).zip(&layers.0) {
                writes.insert(number, b.encode().as_slice()).unwrap();
            }
        }
        assert_eq!(replay(&tx).unwrap(), 2);
        assert_eq!(replay(&tx).unwrap(), 0);
        let accounts = tx.open_table(ACCOUNTS).unwrap();
        let stored: Vec<(u8, Vec<u8>)> = accounts
            .iter()
            .unwrap()
            .map(|e| {
                let (k, v) = e.unwrap();
                (k.value()[0], v.value().to_vec())
            })
            .collect();
        assert_eq!(stored, [(1, b"one".to_vec()), (3, b"three".to_vec())]);
    }

    #[test]
    fn the_filter_passes_every_address_of_the_block_and_few_others() {
        let address = |i: u64| Address::from_word(alloy_primitives::keccak256(i.to_be_bytes()));
        let block = BlockAccounts::new((0..1_300).map(|i| (address(i), None)).collect());
        assert!((0..1_300).all(|i| block.may_hold(&address(i))));
        let passed = (1_300..101_300)
            .filter(|&i| block.may_hold(&address(i)))
            .count();
        assert!(passed < 2_000, "{passed} of 100,000 others passed");
        let layers = AccountLayers(vec![Arc::new(block)]);
        assert_eq!(layers.get(&address(7)), Some(None));
        assert_eq!(layers.get(&address(7_000)), None);
    }

    #[test]
    fn a_damaged_entry_is_refused() {
        let encoded = block(&[(1, Some(b"record"))]).encode();
        for damaged in [&encoded[..encoded.len() - 1], &encoded[..20]] {
            assert!(matches!(
                BlockAccounts::decode(7, damaged),
                Err(StorageError::Corrupt { .. })
            ));
        }
    }
}

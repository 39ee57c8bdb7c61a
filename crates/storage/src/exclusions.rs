//! The records of transactions that never landed: written in batches outside the block path
//! (they are not chain data), read by hash, expired by age and bounded in count.

use alloy_primitives::B256;
use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata};

use crate::tables::{TX_EXCLUSIONS, TX_EXCLUSIONS_BY_TIME};
use crate::{Storage, StorageError};

fn time_key(at: u64, hash: &B256) -> [u8; 40] {
    let mut key = [0u8; 40];
    key[..8].copy_from_slice(&at.to_be_bytes());
    key[8..].copy_from_slice(hash.as_slice());
    key
}

impl Storage {
    /// Stores `records` (hash, recorded-at in Unix seconds, encoded record), replacing earlier
    /// records of the same hashes, then drops records older than `keep_from` and the oldest
    /// beyond `max_records`. One write transaction without waiting for the disk: a crash may
    /// lose the last records, never the chain.
    pub fn put_exclusions(
        &self,
        records: &[(B256, u64, Vec<u8>)],
        keep_from: u64,
        max_records: u64,
    ) -> Result<(), StorageError> {
        let mut tx = self.db.begin_write()?;
        tx.set_durability(redb::Durability::None)
            .map_err(|e| StorageError::from(redb::Error::from(e)))?;
        {
            let mut by_hash = tx.open_table(TX_EXCLUSIONS)?;
            let mut by_time = tx.open_table(TX_EXCLUSIONS_BY_TIME)?;
            for (hash, at, record) in records {
                // The time first: an expiring time entry removes only the record it indexes.
                let value = [&at.to_be_bytes()[..], record].concat();
                by_hash.insert(&hash.0, value.as_slice())?;
                by_time.insert(time_key(*at, hash).as_slice(), ())?;
            }
            // Oldest first: past the age limit, or over the count.
            let mut excess = by_hash.len()?.saturating_sub(max_records);
            loop {
                let Some(entry) = by_time.first()? else { break };
                let key = entry.0.value().to_vec();
                drop(entry);
                let at = u64::from_be_bytes(key[..8].try_into().expect("8-byte time"));
                if at >= keep_from && excess == 0 {
                    break;
                }
                by_time.remove(key.as_slice())?;
                let hash: [u8; 32] = key[8..].try_into().expect("32-byte hash");
                // A hash recorded again later keeps its newer record (and its newer entry).
                let indexed = by_hash
                    .get(&hash)?
                    .is_some_and(|v| v.value().get(..8) == Some(&key[..8]));
                if indexed {
                    by_hash.remove(&hash)?;
                    excess = excess.saturating_sub(1);
                }
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The stored record of transaction `hash`, if any.
    pub fn exclusion(&self, hash: &B256) -> Result<Option<Vec<u8>>, StorageError> {
        let tx = self.db.begin_read()?;
        let table = tx.open_table(TX_EXCLUSIONS)?;
        Ok(table
            .get(&hash.0)?
            .map(|v| v.value().get(8..).unwrap_or_default().to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_expire_by_age_and_count() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(&dir.path().join("db")).unwrap();
        let h = |i: u8| B256::repeat_byte(i);
        let rec = |i: u8, at: u64| (h(i), at, vec![i]);
        s.put_exclusions(&[rec(1, 100), rec(2, 200), rec(3, 300)], 0, 10)
            .unwrap();
        assert_eq!(s.exclusion(&h(2)).unwrap(), Some(vec![2]));
        // Older than 150: record 1 goes.
        s.put_exclusions(&[], 150, 10).unwrap();
        assert_eq!(s.exclusion(&h(1)).unwrap(), None);
        assert_eq!(s.exclusion(&h(2)).unwrap(), Some(vec![2]));
        // At most 2 records: the oldest goes.
        s.put_exclusions(&[rec(4, 400)], 150, 2).unwrap();
        assert_eq!(s.exclusion(&h(2)).unwrap(), None);
        assert_eq!(s.exclusion(&h(3)).unwrap(), Some(vec![3]));
        assert_eq!(s.exclusion(&h(4)).unwrap(), Some(vec![4]));
        // Recorded again: the newer record stays when the older entry expires.
        s.put_exclusions(&[(h(3), 500, vec![33])], 450, 10).unwrap();
        assert_eq!(s.exclusion(&h(3)).unwrap(), Some(vec![33]));
        assert_eq!(s.exclusion(&h(4)).unwrap(), None);
    }
}

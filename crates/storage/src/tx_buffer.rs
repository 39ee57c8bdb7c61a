//! The transaction index entries of the blocks whose trie nodes are buffered (`write.rs`).
//!
//! Transaction hashes are random keys: written with each block, a block of 1,300 transfers
//! dirtied about as many pages of `tx_index`, and every commit copied, checksummed and wrote them
//! again; at a million transactions that was 15 µs a transaction, a fifth of a synced block's
//! import. The entries stay in memory and are written, sorted, with a write-out of the trie's
//! buffer once they fill [`TX_BUFFER_BLOCKS`] blocks or [`TX_BUFFER_TXS`] entries, so that a
//! page is written once per write-out. Readers look here first. After a crash, the blocks from
//! [`crate::tables::TX_NEXT`] on have their entries rebuilt from their bodies.

use std::sync::Arc;

use alloy_consensus::{BlockBody, TxEnvelope};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::B256;
use redb::Table;

use crate::StorageError;

/// Blocks whose entries are kept in memory before they are written out, with the trie
/// write-out that reaches it (two of [`crate::DEFAULT_TRIE_BUFFER_BLOCKS`]). A write-out of a
/// full trie buffer's entries dirtied most pages of `tx_index` anyway: in the snapshot bench's
/// full sync (a million transfers, 1,400 a block), writing them took 0.1-0.55 s of each
/// write-out, and leaving them out altogether gave 44.5, 49.7 and 56.0 s against 54.4, 54.5 and
/// 54.6 s. A lookup the buffer does not hold searches each block's sorted entries: at most this
/// many binary searches.
pub(crate) const TX_BUFFER_BLOCKS: usize = 128;
/// Entries kept in memory at most, whatever the block count: 36 bytes each, 9 MiB in all.
pub(crate) const TX_BUFFER_TXS: usize = 1 << 18;

/// The transactions of one block: hash and index, by hash.
pub(crate) struct BlockTxs {
    number: u64,
    by_hash: Vec<(B256, u32)>,
}

impl BlockTxs {
    /// The entries of block `number` with `body`.
    pub(crate) fn new(number: u64, body: &BlockBody<TxEnvelope>) -> Self {
        let mut by_hash: Vec<(B256, u32)> = body
            .transactions
            .iter()
            .enumerate()
            .map(|(i, t)| (t.trie_hash(), i as u32))
            .collect();
        by_hash.sort_unstable();
        Self { number, by_hash }
    }
}

/// The buffered blocks' entries, oldest first. Cloning shares them (a reader's snapshot keeps
/// the ones of its head).
#[derive(Clone, Default)]
pub(crate) struct TxLayers(Vec<Arc<BlockTxs>>);

impl TxLayers {
    /// Where the transaction `hash` is, if a buffered block holds it (the latest such block, as
    /// the table keeps the latest write).
    pub(crate) fn get(&self, hash: &B256) -> Option<(u64, u32)> {
        self.0.iter().rev().find_map(|block| {
            let at = block.by_hash.binary_search_by(|(h, _)| h.cmp(hash)).ok()?;
            Some((block.number, block.by_hash[at].1))
        })
    }

    /// Buffers a committed block's entries after the others.
    pub(crate) fn push(&mut self, block: BlockTxs) {
        self.0.push(Arc::new(block));
    }

    /// Writes the buffered entries and then `block`'s (if any) to `table`, in key order; a
    /// hash in two blocks gets the later. The buffer is unchanged: [`TxLayers::clear`] it once
    /// the write is committed.
    pub(crate) fn write(
        &self,
        block: Option<&BlockTxs>,
        table: &mut Table<&'static [u8; 32], (u64, u32)>,
    ) -> Result<(), StorageError> {
        let blocks = self.0.iter().map(|b| &**b).chain(block);
        let mut entries: Vec<(&B256, u64, u32)> = blocks
            .flat_map(|b| b.by_hash.iter().map(|(h, i)| (h, b.number, *i)))
            .collect();
        // Stable: of equal hashes the later block comes last, and its insert wins.
        entries.sort_by_key(|(h, ..)| *h);
        for (hash, number, index) in entries {
            table.insert(&hash.0, (number, index))?;
        }
        Ok(())
    }

    /// Number of buffered transactions.
    pub(crate) fn len(&self) -> usize {
        self.0.iter().map(|b| b.by_hash.len()).sum()
    }

    /// Whether the entries are due to be written out ([`TX_BUFFER_BLOCKS`], [`TX_BUFFER_TXS`]).
    pub(crate) fn full(&self) -> bool {
        self.0.len() >= TX_BUFFER_BLOCKS || self.len() >= TX_BUFFER_TXS
    }

    /// Empties the buffer (its entries are in the table, or their blocks are gone).
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_consensus::{Signed, TxLegacy};
    use alloy_primitives::Signature;
    use redb::ReadableTable;

    fn body(nonces: &[u64]) -> BlockBody<TxEnvelope> {
        let transactions = nonces
            .iter()
            .map(|&nonce| {
                let tx = TxLegacy {
                    nonce,
                    ..Default::default()
                };
                Signed::new_unchecked(
                    tx,
                    Signature::test_signature(),
                    B256::with_last_byte(nonce as u8),
                )
                .into()
            })
            .collect();
        BlockBody {
            transactions,
            ..Default::default()
        }
    }

    #[test]
    fn the_latest_block_holding_a_hash_wins_in_the_buffer_and_in_the_table() {
        let (one, two) = (body(&[1, 2, 3]), body(&[3, 4]));
        let mut layers = TxLayers::default();
        layers.push(BlockTxs::new(1, &one));
        layers.push(BlockTxs::new(2, &two));
        let hash = |b: &BlockBody<TxEnvelope>, i: usize| b.transactions[i].trie_hash();
        assert_eq!(layers.get(&hash(&one, 1)), Some((1, 1)));
        assert_eq!(layers.get(&hash(&two, 0)), Some((2, 0)), "later block");
        assert_eq!(layers.get(&B256::repeat_byte(7)), None);

        let dir = tempfile::tempdir().unwrap();
        let db = redb::Database::create(dir.path().join("t.redb")).unwrap();
        let three = body(&[5]);
        let tx = db.begin_write().unwrap();
        {
            let mut table = tx.open_table(crate::tables::TX_INDEX).unwrap();
            layers
                .write(Some(&BlockTxs::new(3, &three)), &mut table)
                .unwrap();
            let get = |h: B256| table.get(&h.0).unwrap().map(|v| v.value());
            assert_eq!(get(hash(&one, 0)), Some((1, 0)));
            assert_eq!(get(hash(&one, 2)), Some((2, 0)), "later block");
            assert_eq!(get(hash(&two, 1)), Some((2, 1)));
            assert_eq!(get(hash(&three, 0)), Some((3, 0)));
        }
        layers.clear();
        assert_eq!(layers.get(&hash(&one, 1)), None);
    }
}

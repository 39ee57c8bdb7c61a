//! Taking the head block back (a reorganisation to a heavier competing chain): the inverse of
//! the write path, in one transaction.
//!
//! The history tables already hold, for every account and slot a block changed, the value from
//! before that block (an account the block created has no entry, and is removed): unwinding
//! restores those values into the current tables and removes the block's entries. The trie
//! writes buffered in memory are written out first; then the state trie is rewritten with the
//! inverse changes (a path-keyed trie is a function of its contents, so it comes back node for
//! node) and the block's change set goes; the root must be the parent's state root, or nothing
//! is written.

use std::collections::BTreeSet;

use alloy_consensus::{BlockBody, ReceiptEnvelope, TxEnvelope};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{B256, U256};
use redb::{ReadableTable, WriteTransaction};

use super::{
    codec::{self, decode_account},
    Storage, StorageError, ACCOUNTS, ACCOUNT_HISTORY, BODIES, HASH_TO_NUMBER, HEADERS,
    LOG_ADDRESSES, LOG_TOPICS, META, RECEIPTS, SENDERS, STORAGE, STORAGE_HISTORY, TX_INDEX,
};
use crate::tables::{CHANGE_SETS, TRIE_NEXT, TRIE_NODES, TX_NEXT};
use l2node_trie::state::{AccountChange, KarmaDelta};

impl Storage {
    /// Removes the head block `number` and everything it wrote: its state changes (`changes`,
    /// as executing it gave them), its Karma ledger entries (`karma`), its receipts, transaction
    /// and log index entries. The state root after the unwind must be `parent_state_root`;
    /// otherwise nothing changes and the error says so.
    pub fn unwind_head(
        &self,
        number: u64,
        changes: &[AccountChange],
        karma: &KarmaDelta,
        parent_state_root: B256,
    ) -> Result<(), StorageError> {
        let tx = self.db.begin_write()?;
        let mut trie = self.snapshots.trie();
        let head = tx.open_table(META)?.get("head")?.map(|v| v.value());
        if head != Some(number) || number == 0 {
            return Err(codec::corrupt(
                "meta",
                format!("cannot unwind block {number}: the head is {head:?}"),
            ));
        }
        // The buffered account records go to the table first: the unwind sets them back there.
        let mut accounts = self.snapshots.account_buffer(&trie);
        accounts.write(None, &tx)?;
        let inverse = unwind_state(&tx, number, changes)?;
        let root = {
            let mut nodes = tx.open_table(TRIE_NODES)?;
            trie.flush(None, &mut nodes)?;
            l2node_trie::apply_changes(&mut nodes, &inverse)?
        };
        let mut meta = tx.open_table(META)?;
        meta.remove(TRIE_NEXT)?;
        meta.remove(TX_NEXT)?;
        drop(meta);
        tx.open_table(CHANGE_SETS)?.remove(number)?;
        if root != parent_state_root {
            // Dropping the transaction writes nothing.
            return Err(codec::corrupt(
                "trie_nodes",
                format!(
                    "unwinding block {number} gives state root {root}, not its parent's \
                     {parent_state_root}"
                ),
            ));
        }
        // The buffered transaction index entries go to the table with the trie nodes.
        let mut txs = self.snapshots.tx_buffer(&trie);
        txs.write(None, &mut tx.open_table(TX_INDEX)?)?;
        unwind_block(&tx, number)?;
        super::karma::remove_delta(&tx, number, karma)?;
        tx.open_table(META)?.insert("head", number - 1)?;
        tx.commit()?;
        accounts.clear();
        txs.clear();
        drop((accounts, txs));
        trie.clear();
        self.snapshots.step_back(&self.db, &trie);
        Ok(())
    }
}

/// Restores the accounts and slots `changes` touched to their values before block `number`;
/// returns those values as changes (for the trie).
fn unwind_state(
    tx: &WriteTransaction,
    number: u64,
    changes: &[AccountChange],
) -> Result<Vec<AccountChange>, StorageError> {
    let mut accounts = tx.open_table(ACCOUNTS)?;
    let mut storage = tx.open_table(STORAGE)?;
    let mut account_history = tx.open_table(ACCOUNT_HISTORY)?;
    let mut storage_history = tx.open_table(STORAGE_HISTORY)?;
    let mut inverse = Vec::with_capacity(changes.len());
    for change in changes {
        let addr = change.address;
        // No entry (or an empty one, written before creations went without): the block
        // created the account.
        let before = account_history
            .remove(codec::with_block(addr.as_slice(), number).as_slice())?
            .map(|v| v.value().to_vec())
            .unwrap_or_default();
        let info = if before.is_empty() {
            accounts.remove(&addr.0 .0)?;
            None
        } else {
            let info = decode_account(&before)?.state;
            // As it was, with the block that wrote it.
            accounts.insert(&addr.0 .0, before.as_slice())?;
            Some(info)
        };
        let mut back = AccountChange {
            address: addr,
            before: None,
            info,
            new_code: None,
            storage_before: Vec::new(),
            storage_wiped: false,
            storage: Vec::new(),
        };
        if change.info.is_none() || change.storage_wiped {
            // The block wiped the storage and recorded every slot it held: what is there now
            // goes, and every slot recorded at this block comes back.
            let from = codec::slot_key(&addr, &U256::ZERO);
            let to = codec::slot_key(&addr, &U256::MAX);
            storage
                .extract_from_if(from.as_slice()..=to.as_slice(), |_, _| true)?
                .collect::<Result<Vec<_>, _>>()?;
            let last = codec::with_block(&to, u64::MAX);
            let recorded: Vec<(Vec<u8>, [u8; 32])> = storage_history
                .extract_from_if(from.as_slice()..=last.as_slice(), |key, _| {
                    codec::block_suffix(key) == number
                })?
                .map(|e| e.map(|(k, v)| (k.value().to_vec(), *v.value())))
                .collect::<Result<_, _>>()?;
            for (key, value) in recorded {
                let slot_key = &key[..key.len() - 8];
                let slot = U256::from_be_slice(&slot_key[20..]);
                let value = U256::from_be_bytes(value);
                if !value.is_zero() {
                    storage.insert(slot_key, &value.to_be_bytes::<32>())?;
                }
                back.storage.push((slot, value));
            }
            back.storage_wiped = true;
        } else {
            for (slot, _) in &change.storage {
                let key = codec::slot_key(&addr, slot);
                let value = storage_history
                    .remove(codec::with_block(&key, number).as_slice())?
                    .map_or(U256::ZERO, |v| U256::from_be_bytes(*v.value()));
                if value.is_zero() {
                    storage.remove(key.as_slice())?;
                } else {
                    storage.insert(key.as_slice(), &value.to_be_bytes::<32>())?;
                }
                back.storage.push((*slot, value));
            }
        }
        inverse.push(back);
    }
    Ok(inverse)
}

/// Removes block `number`'s header, body, senders, receipts and its entries in the hash,
/// transaction and log indexes.
fn unwind_block(tx: &WriteTransaction, number: u64) -> Result<(), StorageError> {
    let hash = tx
        .open_table(HEADERS)?
        .remove(number)?
        .map(|v| codec::header_parts(v.value()).0)
        .ok_or_else(|| codec::corrupt("headers", format!("block {number} is missing")))?;
    tx.open_table(HASH_TO_NUMBER)?.remove(&hash.0)?;
    if let Some(body) = tx.open_table(BODIES)?.remove(number)? {
        let body: BlockBody<TxEnvelope> = codec::decode_rlp("bodies", body.value())?;
        let mut tx_index = tx.open_table(TX_INDEX)?;
        for t in &body.transactions {
            let hash = t.trie_hash();
            // Only this block's entry: the same transaction may sit in an older block.
            let here = tx_index
                .get(&hash.0)?
                .is_some_and(|v| v.value().0 == number);
            if here {
                tx_index.remove(&hash.0)?;
            }
        }
    }
    tx.open_table(SENDERS)?.remove(number)?;
    if let Some(receipts) = tx.open_table(RECEIPTS)?.remove(number)? {
        let receipts: Vec<ReceiptEnvelope> = codec::decode_receipts(receipts.value())?;
        let mut addresses = BTreeSet::new();
        let mut topics = BTreeSet::new();
        for log in receipts.iter().flat_map(|r| r.logs()) {
            addresses.insert(log.address);
            topics.extend(log.topics().iter().copied());
        }
        let mut addr_index = tx.open_table(LOG_ADDRESSES)?;
        for a in addresses {
            addr_index.remove(codec::with_block(a.as_slice(), number).as_slice())?;
        }
        let mut topic_index = tx.open_table(LOG_TOPICS)?;
        for t in topics {
            topic_index.remove(codec::with_block(t.as_slice(), number).as_slice())?;
        }
    }
    Ok(())
}

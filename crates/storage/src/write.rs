//! The one write path: a block, its receipts, indexes and state changes in one transaction.
//!
//! The block's trie nodes are the exception: they stay in memory, in the write-back buffer
//! (`l2node_trie::buffer`), for up to [`crate::DEFAULT_TRIE_BUFFER_BLOCKS`] blocks or
//! [`crate::DEFAULT_TRIE_BUFFER_BYTES`]; the blocks' commits leave `trie_nodes` as it was. Once
//! the buffer is full, [`Storage::flush_trie_if_full`] writes it out in a transaction of its own,
//! each node once, after the block that filled it is committed and announced, so that no block
//! waits for it to be seen. A clean stop ([`Storage::flush_trie`]) and an unwind write the buffer
//! out too. [`TRIE_NEXT`] says which blocks' nodes are buffered, and their change sets are kept
//! until then: after a crash, opening the database replays them
//! ([`Storage::rebuild_trie_buffer`]), checked against the head's state root, and writes the
//! nodes. Readers take the buffer's layers with their snapshot.
//!
//! The blocks' transaction index entries stay in memory too, for up to four of the trie's
//! write-outs, and are written with the write-out that fills them (`tx_buffer.rs`);
//! [`TX_NEXT`] says which blocks' entries are in memory, and a restart rebuilds them from the
//! blocks' bodies. So do the account records the blocks write, until the trie's next write-out
//! (`account_buffer.rs`); each block's records are also written with it, in one entry of
//! `account_writes`, which opening the database writes to `accounts` after a crash.

use std::collections::{BTreeMap, BTreeSet};

use alloy_consensus::{BlockBody, Header, ReceiptEnvelope, TxEnvelope};
use alloy_primitives::{Address, B256, U256};
use redb::{ReadableTable, Table, WriteTransaction};

use super::{
    codec::{self, decode_account, encode_account},
    Storage, StorageError, ACCOUNTS, ACCOUNT_HISTORY, BODIES, CODE, CONFIG, HASH_TO_NUMBER,
    HEADERS, LOG_ADDRESSES, LOG_TOPICS, META, RECEIPTS, SENDERS, STORAGE, STORAGE_HISTORY,
    TX_INDEX,
};
use crate::account_buffer::{self, AccountLayers, BlockAccounts};
use crate::tables::{ACCOUNT_WRITES, CHANGE_SETS, PROOFS_FROM, TRIE_NEXT, TRIE_NODES, TX_NEXT};
use crate::tx_buffer::{BlockTxs, TxLayers};
use l2node_trie::{
    buffer::WriteBack,
    state::{AccountChange, KarmaDelta},
};

/// A block ready to be written, once its state root is known.
#[derive(Debug, Clone)]
pub struct BlockToStore {
    /// The sealed header (its state root must be the one handed to the sealing closure).
    pub header: Header,
    /// Transactions, ommers, withdrawals.
    pub body: BlockBody<TxEnvelope>,
    /// Recovered sender of each transaction.
    pub senders: Vec<Address>,
    /// One receipt per transaction.
    pub receipts: Vec<ReceiptEnvelope>,
    /// What the block changed in the Karma ledger (empty on a chain without Karma).
    pub karma: KarmaDelta,
}

impl Storage {
    /// Applies `changes` as block `number`, computes the state root, lets `seal` turn it into the
    /// block (the miner fills the header; import compares it), then writes everything and commits.
    ///
    /// If `seal` fails, nothing is written. Returns the block hash. The trie buffer is written
    /// out afterwards if the block filled it.
    pub fn commit_block<E: From<StorageError>>(
        &self,
        number: u64,
        changes: &[AccountChange],
        seal: impl FnOnce(B256) -> Result<BlockToStore, E>,
    ) -> Result<(BlockToStore, B256), E> {
        let committed = self.commit_block_with(number, changes, true, seal)?;
        self.flush_trie_if_full();
        Ok(committed)
    }

    /// [`Storage::commit_block`], choosing whether the commit waits for the disk: a commit
    /// that does not (`durable: false`) becomes durable with the next one that does, and a
    /// crash before that takes the database back to the last durable commit as a whole (redb
    /// commits stay atomic). Follower sync uses it for the blocks it syncs, and waits for the disk
    /// every few seconds ([`Storage::persist`]).
    pub fn commit_block_with<E: From<StorageError>>(
        &self,
        number: u64,
        changes: &[AccountChange],
        durable: bool,
        seal: impl FnOnce(B256) -> Result<BlockToStore, E>,
    ) -> Result<(BlockToStore, B256), E> {
        let mut tx = self.db.begin_write().map_err(StorageError::from)?;
        if !durable {
            tx.set_durability(redb::Durability::None)
                .map_err(|e| StorageError::from(redb::Error::from(e)))?;
        }
        let head = tx
            .open_table(META)
            .map_err(StorageError::from)?
            .get("head")
            .map_err(StorageError::from)?
            .map(|v| v.value());
        let expected = head.map_or(0, |h| h + 1);
        if number != expected {
            return Err(StorageError::NotNext { number, expected }.into());
        }
        let lengths = match self.history_window {
            Some(_) => Some(super::prune::lengths(&tx)?),
            None => None,
        };
        let (trie_next, tx_next) = {
            let meta = tx.open_table(META).map_err(StorageError::from)?;
            let get = |key| -> Result<Option<u64>, StorageError> {
                Ok(meta.get(key)?.map(|v| v.value()))
            };
            (get(TRIE_NEXT)?, get(TX_NEXT)?)
        };
        let buffered = self.snapshots.accounts();
        // The block's account records are kept in memory with its trie nodes.
        let ((state_root, trie_writes), block_accounts) = {
            // The parent block's trie as last written, for the trie update's threads to read
            // under the buffer (this write transaction is the only writer, so nothing commits
            // meanwhile).
            let parent =
                redb::ReadableDatabase::begin_read(&*self.db).map_err(StorageError::from)?;
            let parent_trie = parent.open_table(TRIE_NODES).map_err(StorageError::from)?;
            let keep_from = trie_next.unwrap_or(number);
            // Only writers change the buffer, and they hold the write transaction: unlocked
            // again here, it is the same when locked after the seal (which may read, and a
            // reader taking a snapshot locks it).
            let root = || self.snapshots.trie().apply(&parent_trie, changes);
            std::thread::scope(|scope| {
                // The root reads the parent's trie and the plain state goes into this
                // transaction: neither reads what the other writes, so a large block has them
                // run side by side (or one after the other, if no thread can start).
                let beside = (changes.len() >= OVERLAP_MIN_ACCOUNTS)
                    .then(|| {
                        std::thread::Builder::new()
                            .name("l2node-root".into())
                            .spawn_scoped(scope, root)
                            .ok()
                    })
                    .flatten();
                let accounts = write_state(
                    &tx,
                    number,
                    changes,
                    &buffered,
                    self.proof_window,
                    keep_from,
                )?;
                let root = match beside {
                    Some(thread) => thread
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                    None => root(),
                };
                Ok::<_, StorageError>((root?, accounts))
            })?
        };
        let block = seal(state_root)?;
        let hash = write_block(&tx, number, &block)?;
        let txs = BlockTxs::new(number, &block.body);
        // Held from before the commit until readers have the new snapshot.
        let mut trie = self.snapshots.trie();
        // Written out after a block as a rule (`flush_trie_if_full`); with this block if those
        // write-outs kept failing, so that the buffer stays bounded.
        let (max_blocks, max_bytes) = self.trie_buffer;
        let overdue = trie.blocks() >= max_blocks.saturating_mul(TRIE_BUFFER_OVERDUE)
            || trie.bytes() >= max_bytes.saturating_mul(TRIE_BUFFER_OVERDUE);
        {
            let mut meta = tx.open_table(META).map_err(StorageError::from)?;
            if overdue {
                let mut nodes = tx.open_table(TRIE_NODES).map_err(StorageError::from)?;
                trie.flush(Some(&trie_writes), &mut nodes)
                    .map_err(StorageError::from)?;
                let mut index = tx.open_table(TX_INDEX).map_err(StorageError::from)?;
                self.snapshots
                    .tx_buffer(&trie)
                    .write(Some(&txs), &mut index)?;
                self.snapshots
                    .account_buffer(&trie)
                    .write(Some(&block_accounts), &tx)?;
                meta.remove(TRIE_NEXT).map_err(StorageError::from)?;
                meta.remove(TX_NEXT).map_err(StorageError::from)?;
            } else {
                if trie_next.is_none() {
                    meta.insert(TRIE_NEXT, number).map_err(StorageError::from)?;
                }
                if tx_next.is_none() {
                    meta.insert(TX_NEXT, number).map_err(StorageError::from)?;
                }
            }
        }
        if let (Some(window), Some(lengths)) = (self.history_window, lengths) {
            super::prune::prune(&tx, number, window, &lengths)?;
        }
        tx.commit().map_err(StorageError::from)?;
        if overdue {
            trie.flushed(Some(trie_writes));
            self.snapshots.tx_buffer(&trie).clear();
            self.snapshots.account_buffer(&trie).clear();
        } else {
            trie.push(trie_writes);
            self.snapshots.tx_buffer(&trie).push(txs);
            self.snapshots.account_buffer(&trie).push(block_accounts);
        }
        // Readers move to the new block before anyone is told about it.
        self.snapshots.refresh(&self.db, &trie);
        Ok((block, hash))
    }

    /// Writes the trie buffer out if it holds [`crate::DEFAULT_TRIE_BUFFER_BLOCKS`] blocks or
    /// [`crate::DEFAULT_TRIE_BUFFER_BYTES`] (or what [`Storage::with_trie_buffer`] set); the
    /// block writer calls it after each block is announced. The write does not wait for the
    /// disk: the next durable block commit makes it durable, and a crash before that replays the
    /// buffered blocks from their change sets at the next start, as it would have anyway.
    /// Returns whether it wrote. A failure is logged and leaves the buffer as it was (readers
    /// and the next blocks read through it); it is tried again after the next block, and a
    /// block commit writes the buffer itself once it holds twice as much
    /// (`TRIE_BUFFER_OVERDUE`).
    pub fn flush_trie_if_full(&self) -> bool {
        self.write_trie_buffer(false).unwrap_or_else(|e| {
            tracing::warn!(target: "l2node::storage", error = %e, "could not write the buffered trie nodes; trying again after the next block");
            false
        })
    }

    /// Writes the trie nodes kept in memory to the database and waits for the disk, for them
    /// and every earlier commit (on a clean stop: the next start has nothing to replay).
    pub fn flush_trie(&self) -> Result<(), StorageError> {
        if !self.write_trie_buffer(true)? {
            // An earlier write-out may not have waited for the disk.
            self.persist()?;
        }
        Ok(())
    }

    /// Waits for the disk for every commit made so far, those made with `durable: false`
    /// ([`Storage::commit_block_with`]) included: an empty durable commit.
    pub fn persist(&self) -> Result<(), StorageError> {
        self.db.begin_write()?.commit()?;
        Ok(())
    }

    /// [`Storage::flush_trie`] (`all`), or [`Storage::flush_trie_if_full`].
    fn write_trie_buffer(&self, all: bool) -> Result<bool, StorageError> {
        let (max_blocks, max_bytes) = self.trie_buffer;
        // A stop also writes transaction index entries that outlived the trie's last write-out.
        let due = |trie: &WriteBack| match all {
            true => trie.blocks() > 0 || self.snapshots.tx_buffer(trie).len() > 0,
            false => {
                trie.blocks() > 0 && (trie.blocks() >= max_blocks || trie.bytes() >= max_bytes)
            }
        };
        // Asked after every block: most answers need no write transaction.
        if !due(&self.snapshots.trie()) {
            return Ok(false);
        }
        // Locked after the write transaction begins, as every writer does.
        let mut tx = self.db.begin_write()?;
        let mut trie = self.snapshots.trie();
        if !due(&trie) {
            return Ok(false);
        }
        if !all {
            tx.set_durability(redb::Durability::None)
                .map_err(redb::Error::from)?;
        }
        trie.flush(None, &mut tx.open_table(TRIE_NODES)?)?;
        let mut accounts = self.snapshots.account_buffer(&trie);
        accounts.write(None, &tx)?;
        let mut txs = self.snapshots.tx_buffer(&trie);
        // The transaction index entries go with every few write-outs (`tx_buffer.rs`), and
        // with the last one before a stop.
        let with_txs = all || txs.full();
        let mut meta = tx.open_table(META)?;
        if with_txs {
            txs.write(None, &mut tx.open_table(TX_INDEX)?)?;
            meta.remove(TX_NEXT)?;
        }
        meta.remove(TRIE_NEXT)?;
        drop(meta);
        tx.commit()?;
        accounts.clear();
        if with_txs {
            txs.clear();
        }
        drop((accounts, txs));
        trie.flushed(None);
        self.snapshots.refresh(&self.db, &trie);
        Ok(true)
    }

    /// Rebuilds what was in memory when the node stopped without writing it out, and writes it:
    /// the account records of the blocks from [`TRIE_NEXT`] on (from `account_writes`); the
    /// trie nodes of those blocks, replaying their change sets (their accounts and slots as the
    /// head has them) over the stored trie, whose root must be the head's state root; and the transaction index entries of the blocks from [`TX_NEXT`]
    /// (or [`TRIE_NEXT`], in a database written before that key), from their bodies. Each is
    /// thus rebuilt once, however often the node restarts.
    pub(crate) fn rebuild_trie_buffer(&self) -> Result<(), StorageError> {
        // The account records first: the replay below reads the state at the head.
        let tx = self.db.begin_write()?;
        let blocks = account_buffer::replay(&tx)?;
        if blocks > 0 {
            tx.commit()?;
            tracing::info!(target: "l2node::storage", blocks, "wrote the account records of the last blocks");
        } else {
            // Nothing to write: no commit (and no wait for the disk) at every start.
            tx.abort()?;
        }
        let snap = self.snapshot()?;
        // Transaction index entries are in memory whenever trie nodes are (`TX_NEXT` is at or
        // before `TRIE_NEXT`).
        let (Some(head), Some(txs_from)) = (snap.head, snap.tx_next.or(snap.trie_next)) else {
            return Ok(());
        };
        for (key, next) in [(TRIE_NEXT, snap.trie_next), (TX_NEXT, Some(txs_from))] {
            if let Some(next) = next.filter(|next| *next > head) {
                return Err(codec::corrupt(
                    "meta",
                    format!("{key} is block {next}, after the head {head}"),
                ));
            }
        }
        let replay = snap
            .trie_next
            .map(|next| -> Result<_, StorageError> {
                let mut touched = BTreeMap::new();
                for entry in snap.table(&snap.change_sets)?.range(next..=head)? {
                    let (n, set) = entry?;
                    super::proof::decode_change_set(n.value(), set.value(), &mut touched)?;
                }
                let state = super::StateAt::new(snap.clone(), self.snapshots.clone(), None);
                let changes = super::proof::changes_to(&state, touched)?;
                let expected = self.header(head)?.map(|h| h.state_root);
                Ok((next, changes, expected))
            })
            .transpose()?;
        let tx = self.db.begin_write()?;
        let mut trie = self.snapshots.trie();
        let writes = match replay {
            Some((next, changes, expected)) => {
                let (root, writes) = trie.apply(snap.table(&snap.trie_nodes)?, &changes)?;
                if Some(root) != expected {
                    return Err(codec::corrupt(
                        "change_sets",
                        format!(
                            "replaying blocks {next}..={head} over the stored trie gives state \
                             root {root}, not the head's {expected:?}"
                        ),
                    ));
                }
                trie.flush(Some(&writes), &mut tx.open_table(TRIE_NODES)?)?;
                tracing::info!(target: "l2node::storage", blocks = head + 1 - next, "rebuilt the trie nodes of the last blocks from their change sets");
                Some(writes)
            }
            None => None,
        };
        let mut replayed = TxLayers::default();
        let bodies = snap.table(&snap.bodies)?;
        for entry in bodies.range(txs_from..=head)? {
            let (n, body) = entry?;
            let body: BlockBody<TxEnvelope> = codec::decode_rlp("bodies", body.value())?;
            replayed.push(BlockTxs::new(n.value(), &body));
        }
        replayed.write(None, &mut tx.open_table(TX_INDEX)?)?;
        let mut meta = tx.open_table(META)?;
        meta.remove(TRIE_NEXT)?;
        meta.remove(TX_NEXT)?;
        drop(meta);
        tx.commit()?;
        // Nothing else is buffered yet (the database was just opened).
        trie.flushed(writes);
        self.snapshots.refresh(&self.db, &trie);
        Ok(())
    }

    /// Reads the stored account trie into the trie's node cache, as far as its budget goes (the
    /// shallowest levels that fit): with a database cache that has room beyond the upper levels
    /// ([`crate::warms_trie_cache`], the default has), the node cache takes the branches below
    /// them, which a node that has run a while holds and which would otherwise come in a read at a
    /// time over thousands of blocks. One scan in key order: about a second a million accounts,
    /// when the database opens.
    pub(crate) fn warm_trie_cache(&self) -> Result<(), StorageError> {
        let started = std::time::Instant::now();
        let tx = redb::ReadableDatabase::begin_read(&*self.db)?;
        let nodes = tx.open_table(TRIE_NODES)?;
        let mut trie = self.snapshots.trie();
        let mut warmer = trie.cache_warmer();
        for entry in nodes.range(l2node_trie::account_trie_keys())? {
            let (key, value) = entry?;
            warmer.take(key.value(), value.value())?;
        }
        let (bytes, count) = trie.cached();
        // A new chain has no trie yet: nothing to say.
        if count > 0 {
            tracing::info!(
                target: "l2node::storage",
                nodes = count,
                mib = bytes >> 20,
                secs = format!("{:.1}", started.elapsed().as_secs_f64()),
                "read the account trie's nodes into the trie node cache"
            );
        }
        Ok(())
    }

    /// Stores the genesis JSON the chain was created with (replacing any stored one), read back
    /// by [`Storage::genesis_config`].
    pub fn put_genesis_config(&self, json: &[u8]) -> Result<(), StorageError> {
        let tx = self.db.begin_write()?;
        tx.open_table(CONFIG)?.insert("genesis", json)?;
        tx.commit()?;
        Ok(())
    }
}

/// Below this many changed accounts a block's plain state is written before its state root is
/// computed, not beside it: a thread start costs tens of microseconds, about what a few dozen
/// accounts' writes cost (the trie update's own threshold, `l2node_trie::parallel`). In a
/// follower's sync of blocks of 1,300 transfers, the plain state and history writes were a
/// quarter of the import thread's work, and the root, computed after them, took about as long.
pub(crate) const OVERLAP_MIN_ACCOUNTS: usize = 64;

/// How many times its limits the trie buffer may reach (its write-outs after blocks failing)
/// before a block commit writes it with the block, as a bound on memory and on the replay after
/// a crash.
const TRIE_BUFFER_OVERDUE: usize = 2;

/// Writes the block's plain state, its history and its change set, and returns its account
/// records: they go to the buffer (`buffered` holds the earlier blocks' records) and to
/// `account_writes`, not to `accounts`. Change sets before `keep_from` that the proof window no
/// longer needs go.
fn write_state(
    tx: &WriteTransaction,
    number: u64,
    changes: &[AccountChange],
    buffered: &AccountLayers,
    proof_window: u64,
    keep_from: u64,
) -> Result<BlockAccounts, StorageError> {
    let mut change_set = Vec::new();
    let mut records = Vec::with_capacity(changes.len());
    let accounts = tx.open_table(ACCOUNTS)?;
    let mut storage = tx.open_table(STORAGE)?;
    let mut code = tx.open_table(CODE)?;
    let mut account_history = tx.open_table(ACCOUNT_HISTORY)?;
    let mut storage_history = tx.open_table(STORAGE_HISTORY)?;
    for change in changes {
        let addr = change.address;
        // The record this block replaces: the latest buffered one, else the table's. An account
        // created here needs no history entry: its record says when it was written
        // (`StoredAccount::at`).
        let buffered_old = buffered.get(&addr);
        let stored = match buffered_old {
            None => accounts.get(&addr.0 .0)?,
            Some(_) => None,
        };
        if let Some(old) = buffered_old.unwrap_or_else(|| stored.as_ref().map(|v| v.value())) {
            decode_account(old)?;
            account_history.insert(codec::with_block(addr.as_slice(), number).as_slice(), old)?;
        }
        let record = change
            .info
            .as_ref()
            .map(|info| encode_account(info, Some(number)));
        records.push((addr, record.map(Vec::into_boxed_slice)));
        change_set.extend_from_slice(addr.as_slice());
        let count_at = change_set.len();
        change_set.extend_from_slice(&[0; 4]);
        let mut slots: u32 = 0;
        if change.info.is_none() || change.storage_wiped {
            for slot in wipe_storage(&mut storage, &mut storage_history, addr, number)? {
                change_set.extend_from_slice(&slot);
                slots += 1;
            }
        }
        if let Some(bytecode) = &change.new_code {
            let bytes = bytecode.original_bytes();
            code.insert(&alloy_primitives::keccak256(&bytes).0, bytes.as_ref())?;
        }
        if change.info.is_some() {
            for (slot, _) in &change.storage {
                change_set.extend_from_slice(&slot.to_be_bytes::<32>());
                slots += 1;
            }
        }
        change_set[count_at..count_at + 4].copy_from_slice(&slots.to_be_bytes());
        if change.info.is_none() {
            continue;
        }
        for (slot, value) in &change.storage {
            let key = codec::slot_key(&addr, slot);
            let old = storage
                .get(key.as_slice())?
                .map(|v| *v.value())
                .unwrap_or_default();
            let hist_key = codec::with_block(&key, number);
            // A wipe in this block already recorded the pre-block value.
            if storage_history.get(hist_key.as_slice())?.is_none() {
                storage_history.insert(hist_key.as_slice(), &old)?;
            }
            if value.is_zero() {
                storage.remove(key.as_slice())?;
            } else {
                storage.insert(key.as_slice(), &value.to_be_bytes::<32>())?;
            }
        }
    }
    let block = BlockAccounts::new(records);
    tx.open_table(ACCOUNT_WRITES)?
        .insert(number, block.encode().as_slice())?;
    let mut change_sets = tx.open_table(CHANGE_SETS)?;
    change_sets.insert(number, change_set.as_slice())?;
    // Only the proof window's change sets are read, and the buffered blocks' (a restart
    // replays them): older ones go as the head moves on.
    let oldest = number.saturating_sub(proof_window);
    let mut meta = tx.open_table(META)?;
    if meta.get(PROOFS_FROM)?.map_or(0, |v| v.value()) < oldest {
        meta.insert(PROOFS_FROM, oldest)?;
    }
    if keep_from > 0 {
        let last = oldest.min(keep_from - 1);
        for old in change_sets.extract_from_if(..=last, |_, _| true)? {
            old?;
        }
    }
    Ok(block)
}

fn wipe_storage(
    storage: &mut Table<&'static [u8], &'static [u8; 32]>,
    history: &mut Table<&'static [u8], &'static [u8; 32]>,
    addr: Address,
    number: u64,
) -> Result<Vec<[u8; 32]>, StorageError> {
    let from = codec::slot_key(&addr, &U256::ZERO);
    let to = codec::slot_key(&addr, &U256::MAX);
    let removed: Vec<(Vec<u8>, [u8; 32])> = storage
        .extract_from_if(from.as_slice()..=to.as_slice(), |_, _| true)?
        .map(|e| e.map(|(k, v)| (k.value().to_vec(), *v.value())))
        .collect::<Result<_, _>>()?;
    let mut slots = Vec::with_capacity(removed.len());
    for (key, value) in removed {
        history.insert(codec::with_block(&key, number).as_slice(), &value)?;
        slots.push(key[20..].try_into().expect("a slot key is address ++ slot"));
    }
    Ok(slots)
}

fn write_block(
    tx: &WriteTransaction,
    number: u64,
    block: &BlockToStore,
) -> Result<B256, StorageError> {
    let header_rlp = codec::encode_rlp(&block.header);
    let hash = alloy_primitives::keccak256(&header_rlp);
    tx.open_table(HEADERS)?
        .insert(number, codec::encode_header(&header_rlp, &hash).as_slice())?;
    tx.open_table(HASH_TO_NUMBER)?.insert(&hash.0, number)?;
    tx.open_table(BODIES)?
        .insert(number, codec::encode_rlp(&block.body).as_slice())?;
    let senders: Vec<u8> = block.senders.iter().flat_map(|a| a.0 .0).collect();
    tx.open_table(SENDERS)?.insert(number, senders.as_slice())?;
    tx.open_table(RECEIPTS)?
        .insert(number, codec::encode_receipts(&block.receipts).as_slice())?;
    let mut addresses = BTreeSet::new();
    let mut topics = BTreeSet::new();
    for log in block.receipts.iter().flat_map(|r| r.logs()) {
        addresses.insert(log.address);
        topics.extend(log.topics().iter().copied());
    }
    let mut addr_index = tx.open_table(LOG_ADDRESSES)?;
    for a in addresses {
        addr_index.insert(codec::with_block(a.as_slice(), number).as_slice(), ())?;
    }
    let mut topic_index = tx.open_table(LOG_TOPICS)?;
    for t in topics {
        topic_index.insert(codec::with_block(t.as_slice(), number).as_slice(), ())?;
    }
    super::karma::write_delta(tx, number, &block.karma)?;
    tx.open_table(META)?.insert("head", number)?;
    Ok(hash)
}

//! State snapshots: what a node serves so that a new follower can join at a recent block H
//! without re-executing the chain, and how the follower stores one.
//!
//! Serving: [`Storage::snapshot_index`] lists the accounts that can exist at H (the current
//! ones and those the blocks after H changed) by hashed address, over one pinned read
//! snapshot; [`SnapIndex::chunk`] reads the accounts of one subtrie (see
//! [`l2node_trie::snap`]) as they were at H, with their slots, codes and Karma ledger entries.
//!
//! Joining: [`Storage::snap_begin`] clears the state of a fresh database,
//! [`Storage::snap_write_chunk`] stores a chunk only if its accounts rebuild the subtrie H's
//! state root names, and [`Storage::snap_finish`] writes the top of the trie and makes H the
//! head. Blocks and state before H are then answered with
//! [`StorageError::BeforeSnapshot`].

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use alloy_consensus::Header;
use alloy_primitives::{keccak256, Address, Bytes, B256, U256};
use alloy_rlp::{RlpDecodable, RlpEncodable};
use redb::{Durability, ReadableTable, TableDefinition};
use revm::primitives::KECCAK_EMPTY;

use super::{
    codec,
    proof::decode_change_set,
    reader::StateAt,
    snapshot::{Snapshot, Snapshots},
    Storage, StorageError,
};
use crate::tables::*;
use l2node_trie::{
    self as trie,
    snap::{ChunkPlan, SnapAccount, TopNode},
    state::AccountState,
};

/// One account of a chunk on the wire (RLP).
#[derive(Debug, Clone, PartialEq, Eq, RlpEncodable, RlpDecodable)]
struct WireAccount {
    address: Address,
    nonce: u64,
    balance: U256,
    code_hash: B256,
    /// `[slot, value]` pairs, values non-zero.
    storage: Vec<WireSlot>,
}

#[derive(Debug, Clone, PartialEq, Eq, RlpEncodable, RlpDecodable)]
struct WireSlot {
    slot: U256,
    value: U256,
}

/// A Karma ledger record of one of the chunk's accounts: its table (0 usage, 1 deny), key
/// and value as stored.
#[derive(Debug, Clone, PartialEq, Eq, RlpEncodable, RlpDecodable)]
struct WireLedger {
    table: u8,
    key: Bytes,
    value: Bytes,
}

/// A page of a chunk on the wire: its accounts, the codes they use, their ledger records, and
/// where the next page starts (none: this is the last).
#[derive(Debug, Clone, PartialEq, Eq, RlpEncodable, RlpDecodable)]
struct WireChunk {
    accounts: Vec<WireAccount>,
    codes: Vec<Bytes>,
    ledger: Vec<WireLedger>,
    /// At most one.
    next: Vec<WireCursor>,
}

/// A page's start: the hashed address of its first account, and that account's first slot.
#[derive(Debug, Clone, PartialEq, Eq, RlpEncodable, RlpDecodable)]
struct WireCursor {
    account: B256,
    slot: U256,
}

/// The serving side of one snapshot: the accounts that may exist at block `number`, in
/// hashed-address order, over a pinned read snapshot (drop it when done: a pinned snapshot
/// keeps the database from reusing the pages written since).
pub struct SnapIndex {
    snap: Arc<Snapshot>,
    shared: Arc<Snapshots>,
    /// The snapshot's block.
    pub number: u64,
    /// Its hash.
    pub hash: B256,
    /// The top of its account trie (see [`trie::snap::snapshot_top`]).
    pub top: Vec<TopNode>,
    /// The Karma tiers record in force at `number`: (the block that set it, its JSON).
    pub tiers: Option<(u64, Vec<u8>)>,
    accounts: Vec<(B256, Address)>,
    /// The chunks of this snapshot (their nibble paths): nothing else is served.
    paths: BTreeSet<Vec<u8>>,
    /// Slots the blocks after `number` changed, per account: those may hold a value at
    /// `number` that the current storage no longer has.
    touched: BTreeMap<Address, BTreeSet<U256>>,
}

impl std::fmt::Debug for SnapIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapIndex")
            .field("number", &self.number)
            .field("accounts", &self.accounts.len())
            .finish_non_exhaustive()
    }
}

impl Storage {
    /// Indexes the state of block `number` for serving, or `Err(first)` when its trie cannot
    /// be read here (before `first`, see [`Storage::first_proof_block`]). Blocking: it reads
    /// every account key once.
    pub fn snapshot_index(&self, number: u64) -> Result<Result<SnapIndex, u64>, StorageError> {
        let top = match self.with_trie_at(number, |t| trie::snap::snapshot_top(t))? {
            Ok(top) => top?,
            Err(first) => return Ok(Err(first)),
        };
        let snap = self.snapshot()?;
        let head = snap.head.unwrap_or(0);
        if number > head || number < snap.snap_base.unwrap_or(0) {
            return Ok(Err(head));
        }
        let mut touched = BTreeMap::new();
        for entry in snap.table(&snap.change_sets)?.range(number + 1..=head)? {
            let (n, set) = entry?;
            decode_change_set(n.value(), set.value(), &mut touched)?;
        }
        // Those the blocks after it changed are read as they were at it, as are those whose
        // records are buffered (not in the table yet).
        for address in snap.buffered_accounts.addresses() {
            touched.entry(*address).or_default();
        }
        let mut accounts = Vec::new();
        for entry in snap.table(&snap.accounts)?.iter()? {
            let address = Address::from(*entry?.0.value());
            if !touched.contains_key(&address) {
                accounts.push((keccak256(address), address));
            }
        }
        accounts.extend(touched.keys().map(|a| (keccak256(a), *a)));
        accounts.sort_unstable();
        let (header, hash) = super::header_in(&snap, number)?
            .ok_or_else(|| codec::corrupt("headers", format!("block {number} is missing")))?;
        let paths = trie::snap::plan_chunks(header.state_root, &top)
            .map_err(|e| codec::corrupt("trie_nodes", e))?
            .into_iter()
            .map(|c| c.path)
            .collect();
        let tiers = snap
            .table(&snap.karma_tiers)?
            .range(0..=number)?
            .next_back()
            .transpose()?
            .map(|(k, v)| (k.value(), v.value().to_vec()));
        Ok(Ok(SnapIndex {
            shared: self.snapshots.clone(),
            snap,
            number,
            hash,
            top,
            tiers,
            accounts,
            paths,
            touched,
        }))
    }
}

impl SnapIndex {
    /// A page of the chunk at nibble `path` (one of the snapshot's chunks, else `None`): the
    /// accounts whose hashed address starts with it, from `from` on (a hashed address and the
    /// first slot of that account; `None`: from the start), as they were at the block,
    /// RLP-encoded, about `max_bytes` at most (at least one slot or account). The page says
    /// where the next one starts: a large account continues on the next page, its codes and
    /// ledger records on its first. The cursor is a key, not a position, so a page means the
    /// same whatever the index learnt since.
    pub fn chunk(
        &self,
        path: &[u8],
        from: Option<PageCursor>,
        max_bytes: usize,
    ) -> Result<Option<Bytes>, StorageError> {
        if !self.paths.contains(path) {
            return Ok(None);
        }
        let (lo, hi) = match *path {
            [a] => ((a as usize) << 4, ((a as usize) + 1) << 4),
            [a, b] => {
                let first = ((a as usize) << 4) | b as usize;
                (first, first + 1)
            }
            _ => (0, 256),
        };
        let first = self.accounts.partition_point(|(h, _)| (h[0] as usize) < lo);
        let end = self.accounts.partition_point(|(h, _)| (h[0] as usize) < hi);
        let (from_account, from_slot) = from.unwrap_or((B256::ZERO, U256::ZERO));
        let start = self
            .accounts
            .partition_point(|(h, _)| *h < from_account)
            .clamp(first, end);
        let state = StateAt::new(self.snap.clone(), self.shared.clone(), Some(self.number));
        let storage = self.snap.table(&self.snap.storage)?;
        let mut chunk = WireChunk {
            accounts: Vec::new(),
            codes: Vec::new(),
            ledger: Vec::new(),
            next: Vec::new(),
        };
        let mut codes = BTreeSet::new();
        let mut size = 0;
        'accounts: for (hashed, address) in &self.accounts[start..end] {
            if size >= max_bytes {
                chunk.next = vec![WireCursor {
                    account: *hashed,
                    slot: U256::ZERO,
                }];
                break;
            }
            let Some(info) = state.account_state(*address)? else {
                continue;
            };
            // The account's first page starts at slot 0; a continued one where it stopped.
            let first_slot = if *hashed == from_account {
                from_slot
            } else {
                U256::ZERO
            };
            let mut slots: BTreeSet<U256> = self
                .touched
                .get(address)
                .map(|t| t.range(first_slot..).copied().collect())
                .unwrap_or_default();
            let from = codec::slot_key(address, &first_slot);
            let to = codec::slot_key(address, &U256::MAX);
            for entry in storage.range(from.as_slice()..=to.as_slice())? {
                slots.insert(U256::from_be_slice(&entry?.0.value()[20..]));
            }
            if first_slot.is_zero() {
                size += self.account_extras(address, &info, &mut codes, &mut chunk)?;
            }
            // An account is about 100 bytes, a slot 70.
            size += 100;
            let mut wire_slots = Vec::new();
            for slot in slots {
                if size >= max_bytes && (!wire_slots.is_empty() || !chunk.accounts.is_empty()) {
                    chunk.next = vec![WireCursor {
                        account: *hashed,
                        slot,
                    }];
                    chunk
                        .accounts
                        .push(wire_account(address, &info, wire_slots));
                    break 'accounts;
                }
                let value = crate::StateReader::storage(&state, *address, slot)?;
                if !value.is_zero() {
                    wire_slots.push(WireSlot { slot, value });
                    size += 70;
                }
            }
            chunk
                .accounts
                .push(wire_account(address, &info, wire_slots));
        }
        Ok(Some(alloy_rlp::encode(&chunk).into()))
    }

    /// Adds an account's code (once per page) and Karma ledger records as of the block (per
    /// epoch the last usage entry; the last deny entry) to `chunk`; returns about their bytes.
    fn account_extras(
        &self,
        address: &Address,
        info: &AccountState,
        codes: &mut BTreeSet<B256>,
        chunk: &mut WireChunk,
    ) -> Result<usize, StorageError> {
        let mut size = 0;
        if info.code_hash != KECCAK_EMPTY && codes.insert(info.code_hash) {
            let code = self
                .snap
                .table(&self.snap.code)?
                .get(&info.code_hash.0)?
                .ok_or_else(|| {
                    codec::corrupt("code", format!("code {} is missing", info.code_hash))
                })?;
            size += code.value().len();
            chunk.codes.push(Bytes::copy_from_slice(code.value()));
        }
        let records = chunk.ledger.len();
        let mut last_usage: BTreeMap<u64, (Vec<u8>, (u64, u64))> = BTreeMap::new();
        let from = codec::with_block(address.as_slice(), 0);
        let to = codec::with_block(&[address.as_slice(), &[0xff; 8]].concat(), u64::MAX);
        let usage = self.snap.table(&self.snap.karma_usage)?;
        for entry in usage.range(from.as_slice()..=to.as_slice())? {
            let (k, v) = entry?;
            let key = k.value();
            if key.len() == 36 && codec::block_suffix(key) <= self.number {
                let epoch = u64::from_be_bytes(key[20..28].try_into().expect("8 bytes"));
                last_usage.insert(epoch, (key.to_vec(), v.value()));
            }
        }
        for (key, (used, bonus)) in last_usage.into_values() {
            chunk.ledger.push(WireLedger {
                table: 0,
                key: key.into(),
                value: [used.to_be_bytes(), bonus.to_be_bytes()].concat().into(),
            });
        }
        let to = codec::with_block(address.as_slice(), self.number);
        let deny = self.snap.table(&self.snap.karma_deny)?;
        if let Some(entry) = deny.range(from.as_slice()..=to.as_slice())?.next_back() {
            let (k, v) = entry?;
            chunk.ledger.push(WireLedger {
                table: 1,
                key: Bytes::copy_from_slice(k.value()),
                value: Bytes::copy_from_slice(v.value()),
            });
        }
        // A ledger record is about 60 bytes.
        Ok(size + 60 * (chunk.ledger.len() - records))
    }
}

fn wire_account(address: &Address, info: &AccountState, storage: Vec<WireSlot>) -> WireAccount {
    WireAccount {
        address: *address,
        nonce: info.nonce,
        balance: info.balance,
        code_hash: info.code_hash,
        storage,
    }
}

/// Where a page of a chunk starts: a hashed address, and the first slot of that account.
pub type PageCursor = (B256, U256);

/// Where the page after `page` (from [`SnapIndex::chunk`]) starts (`None`: it is the last, or
/// the bytes are not a page; [`Storage::snap_write_chunk`] says which).
pub fn next_page(page: &[u8]) -> Option<PageCursor> {
    alloy_rlp::decode_exact::<WireChunk>(page)
        .ok()?
        .next
        .first()
        .map(|c| (c.account, c.slot))
}

/// Tables that hold state, history or the ledger: cleared before a snapshot is written.
fn clear_state(tx: &redb::WriteTransaction) -> Result<(), StorageError> {
    fn clear<K: redb::Key + 'static, V: redb::Value + 'static>(
        tx: &redb::WriteTransaction,
        def: TableDefinition<K, V>,
    ) -> Result<(), StorageError> {
        tx.delete_table(def)?;
        tx.open_table(def)?;
        Ok(())
    }
    clear(tx, ACCOUNTS)?;
    clear(tx, ACCOUNT_WRITES)?;
    clear(tx, STORAGE)?;
    clear(tx, ACCOUNT_HISTORY)?;
    clear(tx, STORAGE_HISTORY)?;
    clear(tx, TRIE_NODES)?;
    clear(tx, CHANGE_SETS)?;
    clear(tx, KARMA_USAGE)?;
    clear(tx, KARMA_DENY)?;
    clear(tx, KARMA_TIERS)?;
    Ok(())
}

impl Storage {
    /// The block of a snapshot that was being written when the node stopped, if any: the
    /// state is incomplete until it is finished.
    pub fn snapshot_pending(&self) -> Result<Option<u64>, StorageError> {
        let tx = redb::ReadableDatabase::begin_read(&*self.db)?;
        let pending = tx
            .open_table(META)?
            .get(SNAPSHOT_PENDING)?
            .map(|v| v.value());
        Ok(pending)
    }

    /// Whether this database can take a snapshot: it holds the genesis block only, or a
    /// snapshot was being written when the node stopped.
    pub fn can_take_snapshot(&self) -> Result<bool, StorageError> {
        let tx = redb::ReadableDatabase::begin_read(&*self.db)?;
        let meta = tx.open_table(META)?;
        Ok(meta.get(SNAPSHOT_PENDING)?.is_some()
            || meta.get("head")?.is_none_or(|h| h.value() == 0))
    }

    /// Starts writing a snapshot of block `number`: clears the state (see
    /// [`Storage::can_take_snapshot`]; the caller checks it).
    pub fn snap_begin(&self, number: u64) -> Result<(), StorageError> {
        let tx = self.db.begin_write()?;
        let mut trie = self.snapshots.trie();
        clear_state(&tx)?;
        let mut meta = tx.open_table(META)?;
        meta.insert(SNAPSHOT_PENDING, number)?;
        meta.remove(TRIE_NEXT)?;
        meta.remove(TX_NEXT)?;
        drop(meta);
        tx.commit()?;
        trie.clear();
        self.snapshots.tx_buffer(&trie).clear();
        self.snapshots.account_buffer(&trie).clear();
        Ok(())
    }

    /// Stores one chunk of the snapshot of block `number` (its pages from [`SnapIndex::chunk`],
    /// in order) if it is the one `plan` names: its accounts rebuild the subtrie the state root references, each slot once and
    /// non-zero, and every code hashes to its account's code hash. `Ok(Err(why))` when it is
    /// not (nothing is written); `Ok(Ok(accounts))`.
    pub fn snap_write_chunk(
        &self,
        number: u64,
        plan: &ChunkPlan,
        pages: &[Bytes],
    ) -> Result<Result<usize, String>, StorageError> {
        let mut chunk = WireChunk {
            accounts: Vec::new(),
            codes: Vec::new(),
            ledger: Vec::new(),
            next: Vec::new(),
        };
        for page in pages {
            let p = match alloy_rlp::decode_exact::<WireChunk>(page) {
                Ok(p) => p,
                Err(e) => return Ok(Err(format!("a page of the chunk does not decode: {e}"))),
            };
            let mut accounts = p.accounts.into_iter();
            // An account continued from the previous page: more of its slots.
            if let (Some(last), Some(next)) =
                (chunk.accounts.last_mut(), accounts.as_slice().first())
            {
                if last.address == next.address {
                    let next = accounts.next().expect("checked");
                    if (last.nonce, last.balance, last.code_hash)
                        != (next.nonce, next.balance, next.code_hash)
                    {
                        return Ok(Err(format!("{} differs between two pages", next.address)));
                    }
                    last.storage.extend(next.storage);
                }
            }
            chunk.accounts.extend(accounts);
            chunk.codes.extend(p.codes);
            chunk.ledger.extend(p.ledger);
        }
        // The flat storage table is written from the same slots as the trie: a zero or a
        // repeated slot would leave a value there that the trie does not have.
        for a in &chunk.accounts {
            let slots: BTreeSet<U256> = a.storage.iter().map(|s| s.slot).collect();
            if slots.len() != a.storage.len() || a.storage.iter().any(|s| s.value.is_zero()) {
                return Ok(Err(format!("{} has a repeated or zero slot", a.address)));
            }
        }
        let codes: BTreeMap<B256, &Bytes> = chunk.codes.iter().map(|c| (keccak256(c), c)).collect();
        let mut wire: Vec<(B256, &WireAccount)> = chunk
            .accounts
            .iter()
            .map(|a| (keccak256(a.address), a))
            .collect();
        wire.sort_by_key(|(hashed, _)| *hashed);
        let accounts: Vec<SnapAccount> = wire
            .iter()
            .map(|(hashed, a)| SnapAccount {
                hashed: *hashed,
                info: AccountState {
                    nonce: a.nonce,
                    balance: a.balance,
                    code_hash: a.code_hash,
                },
                storage: a.storage.iter().map(|s| (s.slot, s.value)).collect(),
            })
            .collect();
        let addresses: BTreeSet<Address> = chunk.accounts.iter().map(|a| a.address).collect();
        let mut tx = self.db.begin_write()?;
        tx.set_durability(Durability::None)
            .map_err(|e| StorageError::from(redb::Error::from(e)))?;
        {
            // A chunk of an attempt given up (its write was still running) is not this one's.
            if tx
                .open_table(META)?
                .get(SNAPSHOT_PENDING)?
                .map(|v| v.value())
                != Some(number)
            {
                return Ok(Err(format!(
                    "the snapshot being written is not block {number}'s"
                )));
            }
            let mut nodes = tx.open_table(TRIE_NODES)?;
            if !trie::snap::write_chunk(&mut nodes, plan, &accounts)? {
                return Ok(Err(format!(
                    "its accounts do not rebuild the subtrie {:x?} of the state root",
                    plan.path
                )));
            }
            let mut table = tx.open_table(ACCOUNTS)?;
            let mut storage = tx.open_table(STORAGE)?;
            let mut code = tx.open_table(CODE)?;
            for (account, (_, a)) in accounts.iter().zip(&wire) {
                table.insert(
                    &a.address.0 .0,
                    codec::encode_account(&account.info, None).as_slice(),
                )?;
                for s in &a.storage {
                    storage.insert(
                        codec::slot_key(&a.address, &s.slot).as_slice(),
                        &s.value.to_be_bytes::<32>(),
                    )?;
                }
                if a.code_hash != KECCAK_EMPTY {
                    match codes.get(&a.code_hash) {
                        Some(c) => {
                            code.insert(&a.code_hash.0, c.as_ref())?;
                        }
                        None if code.get(&a.code_hash.0)?.is_some() => {}
                        None => {
                            return Ok(Err(format!(
                                "the code of {} (hash {}) is not in the chunk",
                                a.address, a.code_hash
                            )))
                        }
                    }
                }
            }
            let mut usage = tx.open_table(KARMA_USAGE)?;
            let mut deny = tx.open_table(KARMA_DENY)?;
            for record in &chunk.ledger {
                let owner = record.key.get(..20).map(Address::from_slice);
                if !owner.is_some_and(|o| addresses.contains(&o)) {
                    return Ok(Err("a ledger record of an account outside the chunk".into()));
                }
                match (record.table, record.key.len(), record.value.len()) {
                    (0, 36, 16) => {
                        let used = u64::from_be_bytes(record.value[..8].try_into().expect("8"));
                        let bonus = u64::from_be_bytes(record.value[8..].try_into().expect("8"));
                        usage.insert(record.key.as_ref(), (used, bonus))?;
                    }
                    (1, 28, _) => {
                        deny.insert(record.key.as_ref(), record.value.as_ref())?;
                    }
                    _ => return Ok(Err("a ledger record of an unknown shape".into())),
                }
            }
        }
        tx.commit()?;
        Ok(Ok(accounts.len()))
    }

    /// Completes a snapshot once every chunk is in: writes the top of the trie (checked against
    /// the state root by `plan_chunks`) and `headers` (ascending, the last one the snapshot's
    /// block, each the parent of the next), and makes the last header the head. Earlier blocks and state answer
    /// [`StorageError::BeforeSnapshot`] from then on.
    pub fn snap_finish(
        &self,
        headers: &[Header],
        top: &[TopNode],
        tiers: Option<(u64, Vec<u8>)>,
    ) -> Result<Result<(), String>, StorageError> {
        let Some(last) = headers.last() else {
            return Ok(Err("no header".into()));
        };
        let number = last.number;
        let tx = self.db.begin_write()?;
        let mut trie = self.snapshots.trie();
        {
            // The top was checked against the root (`plan_chunks`), every chunk under it.
            let mut nodes = tx.open_table(TRIE_NODES)?;
            trie::snap::write_top(&mut nodes, top)?;
            let mut table = tx.open_table(HEADERS)?;
            let mut by_hash = tx.open_table(HASH_TO_NUMBER)?;
            for header in headers {
                let rlp = codec::encode_rlp(header);
                let hash = keccak256(&rlp);
                table.insert(header.number, codec::encode_header(&rlp, &hash).as_slice())?;
                by_hash.insert(&hash.0, header.number)?;
            }
            if let Some((block, json)) = tiers {
                tx.open_table(KARMA_TIERS)?.insert(block, json.as_slice())?;
            }
            let mut meta = tx.open_table(META)?;
            meta.insert("head", number)?;
            meta.insert(STATE_HISTORY_FROM, number)?;
            meta.insert(PROOFS_FROM, number)?;
            meta.insert(SNAPSHOT_BASE, number)?;
            meta.remove(SNAPSHOT_PENDING)?;
            // The table holds the snapshot's trie, nothing is buffered.
            meta.remove(TRIE_NEXT)?;
            meta.remove(TX_NEXT)?;
        }
        tx.commit()?;
        trie.clear();
        self.snapshots.tx_buffer(&trie).clear();
        self.snapshots.account_buffer(&trie).clear();
        self.snapshots.step_back(&self.db, &trie);
        Ok(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slot written twice (once zero) or written zero leaves the trie unchanged, so only the
    /// page check keeps it out of the flat storage table.
    #[test]
    fn a_chunk_with_a_repeated_or_zero_slot_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::open(&dir.path().join("db")).unwrap();
        let address = Address::repeat_byte(7);
        let info = AccountState {
            nonce: 1,
            balance: U256::from(5),
            code_hash: KECCAK_EMPTY,
        };
        let mut trie = trie::MemoryTrieStore::new();
        let root = trie::apply_changes(
            &mut trie,
            &[trie::state::AccountChange {
                address,
                before: None,
                info: Some(info),
                new_code: None,
                storage_before: Vec::new(),
                storage_wiped: false,
                storage: vec![],
            }],
        )
        .unwrap();
        let top = trie::snap::snapshot_top(&trie).unwrap();
        let plan = trie::snap::plan_chunks(root, &top).unwrap();
        let page = |storage: Vec<WireSlot>| -> Bytes {
            alloy_rlp::encode(WireChunk {
                accounts: vec![WireAccount {
                    address,
                    nonce: 1,
                    balance: U256::from(5),
                    code_hash: KECCAK_EMPTY,
                    storage,
                }],
                codes: vec![],
                ledger: vec![],
                next: vec![],
            })
            .into()
        };
        let slot = |value: u64| WireSlot {
            slot: U256::from(3),
            value: U256::from(value),
        };
        storage.snap_begin(1).unwrap();
        for bad in [vec![slot(9), slot(0)], vec![slot(0)]] {
            let refused = storage.snap_write_chunk(1, &plan[0], &[page(bad)]).unwrap();
            assert!(refused.unwrap_err().contains("repeated or zero slot"));
        }
        assert!(storage
            .snap_write_chunk(2, &plan[0], &[page(vec![])])
            .unwrap()
            .unwrap_err()
            .contains("not block 2's"));
        assert_eq!(
            storage
                .snap_write_chunk(1, &plan[0], &[page(vec![])])
                .unwrap(),
            Ok(1)
        );
    }
}

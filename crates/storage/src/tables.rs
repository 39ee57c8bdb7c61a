//! Every redb table of the node, in one list: the name, key and value layout of each. Only
//! [`crate::Storage`]'s write path (`write.rs`, one transaction per block) and the start-up
//! checks write them; everything else reads through the snapshot and reader types.

use redb::TableDefinition;

/// `"head"` -> block number of the canonical head.
pub const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
/// `META` key: the first block whose trie can be read (proofs, simulations on it): the change
/// sets of every later block are kept. It follows the head at the proof window's distance
/// (`--rpc-eth-proof-window`); a database of an earlier l2node starts at its head at the upgrade.
pub const PROOFS_FROM: &str = "proofs_from";
/// The `META` key and the table of trie history that earlier l2node versions kept (every
/// overwritten trie node); dropped on open, replaced by [`CHANGE_SETS`].
pub const LEGACY_TRIE_HISTORY_FROM: &str = "trie_history_from";
/// `META` key: the first block whose state can be read. 0 on an archive node; a node with
/// `--history-window` moves it forward as it prunes state history.
pub const STATE_HISTORY_FROM: &str = "state_history_from";
/// `META` key: the block a database joined the chain at from a state snapshot (see
/// `snap.rs`): it holds no blocks, receipts or state before it.
pub const SNAPSHOT_BASE: &str = "snapshot_base";
/// `META` key: a snapshot of this block is being written; the state is incomplete until it is
/// finished.
pub const SNAPSHOT_PENDING: &str = "snapshot_pending";
/// `META` key: the first block whose trie writes are not yet in [`TRIE_NODES`] (they are in
/// memory, in the write-back buffer, up to the head; see `write.rs`). A restart replays the
/// change sets from it to the head. Absent: the table holds the head's trie.
pub const TRIE_NEXT: &str = "trie_next";
/// `META` key: the first block whose transaction index entries are not yet in [`TX_INDEX`]
/// (they are in memory up to the head, `tx_buffer.rs`), at or before [`TRIE_NEXT`]. A restart
/// rebuilds them from the blocks' bodies. Absent: the table holds the entries of every block
/// before [`TRIE_NEXT`] (or of every block, without it).
pub const TX_NEXT: &str = "tx_next";
/// history table name -> the key the pruning sweep continues from (see `prune.rs`).
pub const PRUNE_CURSORS: TableDefinition<&str, &[u8]> = TableDefinition::new("prune_cursors");
/// `"genesis"` -> the genesis this database was created with, as canonical JSON (what
/// `serde_json` writes for `alloy_genesis::Genesis`); compared with the configured genesis on
/// every start.
pub const CONFIG: TableDefinition<&str, &[u8]> = TableDefinition::new("config");
/// block number -> RLP header.
pub const HEADERS: TableDefinition<u64, &[u8]> = TableDefinition::new("headers");
/// block hash -> block number.
pub const HASH_TO_NUMBER: TableDefinition<&[u8; 32], u64> = TableDefinition::new("hash_to_number");
/// block number -> RLP `BlockBody<TxEnvelope>`.
pub const BODIES: TableDefinition<u64, &[u8]> = TableDefinition::new("bodies");
/// block number -> concatenated 20-byte senders, one per transaction.
pub const SENDERS: TableDefinition<u64, &[u8]> = TableDefinition::new("senders");
/// block number -> RLP list of EIP-2718 receipt encodings.
pub const RECEIPTS: TableDefinition<u64, &[u8]> = TableDefinition::new("receipts");
/// transaction hash -> (block number, index in block); the entries of the blocks whose trie
/// nodes are buffered are in memory until the buffer is written out (`tx_buffer.rs`).
pub const TX_INDEX: TableDefinition<&[u8; 32], (u64, u32)> = TableDefinition::new("tx_index");
/// address ++ block number (BE) -> () for every block with a log from that address.
pub const LOG_ADDRESSES: TableDefinition<&[u8], ()> = TableDefinition::new("log_addresses");
/// topic ++ block number (BE) -> () for every block with a log carrying that topic.
pub const LOG_TOPICS: TableDefinition<&[u8], ()> = TableDefinition::new("log_topics");
/// address -> the account's compact record, with the block that wrote it
/// (`codec::encode_account`).
pub const ACCOUNTS: TableDefinition<&[u8; 20], &[u8]> = TableDefinition::new("accounts");
/// block -> the records that block wrote to [`ACCOUNTS`], for the blocks from [`TRIE_NEXT`] on,
/// whose records are in memory and not in [`ACCOUNTS`] yet (`account_buffer.rs`): per account,
/// its address, the record's length (one byte; 0: removed) and the record.
pub const ACCOUNT_WRITES: TableDefinition<u64, &[u8]> = TableDefinition::new("account_writes");
/// address ++ slot -> value (32 BE bytes); zero values are absent.
pub const STORAGE: TableDefinition<&[u8], &[u8; 32]> = TableDefinition::new("storage");
/// code hash -> bytecode.
pub const CODE: TableDefinition<&[u8; 32], &[u8]> = TableDefinition::new("code");
/// address ++ block (BE) -> the account's record before that block, for an account that existed
/// before it. A creation has no entry: a record written after the block read says the account
/// did not exist then (`codec::StoredAccount::at`). Empty = absent, written by earlier versions.
pub const ACCOUNT_HISTORY: TableDefinition<&[u8], &[u8]> = TableDefinition::new("account_history");
/// address ++ slot ++ block (BE) -> the slot value before that block.
pub const STORAGE_HISTORY: TableDefinition<&[u8], &[u8; 32]> =
    TableDefinition::new("storage_history");

// Trie nodes and their history (the `l2node_trie` crate's layout, see its docs).

/// The redb table holding trie nodes, keyed by `[trie id] ++ nibble path` (see the module docs).
pub const TRIE_NODES: TableDefinition<'static, &'static [u8], &'static [u8]> =
    TableDefinition::new("trie_nodes");

/// See [`LEGACY_TRIE_HISTORY_FROM`].
pub const LEGACY_TRIE_HISTORY: TableDefinition<'static, &'static [u8], &'static [u8]> =
    TableDefinition::new("trie_history");

/// block number -> what the block changed: per account, its address (20 bytes), the number of
/// its slots that changed (4, BE) and those slots (32 each). Kept for the blocks after
/// [`PROOFS_FROM`]: the trie of an earlier block is the current one with those accounts and
/// slots set back to their values then (from the state history), as reth serves old proofs.
/// Also kept from [`TRIE_NEXT`]: they rebuild the buffered trie writes after a restart.
pub const CHANGE_SETS: TableDefinition<u64, &[u8]> = TableDefinition::new("change_sets");

// The Karma ledger (see `karma.rs`).

/// sender ++ epoch (BE) ++ block (BE) -> (used, bonus) as set by that block.
pub const KARMA_USAGE: TableDefinition<&[u8], (u64, u64)> = TableDefinition::new("karma_usage");
/// sender ++ block (BE) -> the deny entry set by that block: reason byte ++ until epoch (BE),
/// or empty when the block cleared it.
pub const KARMA_DENY: TableDefinition<&[u8], &[u8]> = TableDefinition::new("karma_deny");
/// block -> JSON `[epoch, tiers]`: the tiers in force from that block on.
pub const KARMA_TIERS: TableDefinition<u64, &[u8]> = TableDefinition::new("karma_tiers");
/// sender -> last denied epoch, for operator entries (`l2admin_addToDenyList`). Not chain data: each
/// operator keeps their own list, outside the block-derived ledger.
pub const KARMA_OPERATOR_DENY: TableDefinition<&[u8; 20], u64> =
    TableDefinition::new("karma_operator_deny");

// Transactions that never landed (`l2_getTransactionExclusionStatus`): not chain data, kept a
// while and bounded (see `exclusions.rs`).

/// transaction hash -> recorded-at (Unix seconds, BE) ++ the exclusion record (JSON, written
/// by the node's exclusions service).
pub const TX_EXCLUSIONS: TableDefinition<&[u8; 32], &[u8]> = TableDefinition::new("tx_exclusions");
/// recorded-at (Unix seconds, BE) ++ transaction hash -> (): the records in age order, so the
/// oldest go first when they expire or the table is full.
pub const TX_EXCLUSIONS_BY_TIME: TableDefinition<&[u8], ()> =
    TableDefinition::new("tx_exclusions_by_time");

//! Where the bytes go: every table's entries and bytes, grouped by what they hold
//! (`l2node db stats`, the footprint bench).

use redb::{ReadableDatabase, ReadableTableMetadata, TableHandle};

use super::{tables, Storage, StorageError};

/// What a table holds, for the per-kind totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Headers, bodies, senders and the hash index.
    Blocks,
    /// Receipts.
    Receipts,
    /// Transaction hash -> position.
    TxIndex,
    /// Address and topic -> block indexes of logs.
    LogIndex,
    /// Current accounts, storage and code.
    State,
    /// Accounts and slots as they were before each block.
    StateHistory,
    /// Nodes of the state trie.
    TrieNodes,
    /// What each block of the proof window changed (tries of recent blocks).
    ChangeSets,
    /// The Karma ledger.
    Karma,
    /// Metadata, configuration, exclusion records.
    Other,
}

impl Kind {
    /// The kind of a table, by name.
    pub fn of(table: &str) -> Self {
        use tables::*;
        let is = |names: &[&str]| names.contains(&table);
        if is(&[
            HEADERS.name(),
            HASH_TO_NUMBER.name(),
            BODIES.name(),
            SENDERS.name(),
        ]) {
            Self::Blocks
        } else if is(&[RECEIPTS.name()]) {
            Self::Receipts
        } else if is(&[TX_INDEX.name()]) {
            Self::TxIndex
        } else if is(&[LOG_ADDRESSES.name(), LOG_TOPICS.name()]) {
            Self::LogIndex
        } else if is(&[
            ACCOUNTS.name(),
            ACCOUNT_WRITES.name(),
            STORAGE.name(),
            CODE.name(),
        ]) {
            Self::State
        } else if is(&[ACCOUNT_HISTORY.name(), STORAGE_HISTORY.name()]) {
            Self::StateHistory
        } else if is(&[TRIE_NODES.name()]) {
            Self::TrieNodes
        } else if is(&[CHANGE_SETS.name()]) {
            Self::ChangeSets
        } else if table.starts_with("karma_") {
            Self::Karma
        } else {
            Self::Other
        }
    }

    /// The name `l2node db stats` prints.
    pub fn label(self) -> &'static str {
        match self {
            Self::Blocks => "blocks",
            Self::Receipts => "receipts",
            Self::TxIndex => "transaction index",
            Self::LogIndex => "log index",
            Self::State => "state",
            Self::StateHistory => "state history",
            Self::TrieNodes => "trie nodes",
            Self::ChangeSets => "change sets",
            Self::Karma => "karma",
            Self::Other => "other",
        }
    }
}

/// One table's footprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableUsage {
    /// The table's name.
    pub name: String,
    /// What it holds.
    pub kind: Kind,
    /// Entries.
    pub entries: u64,
    /// Bytes of keys and values.
    pub stored: u64,
    /// Bytes of the B-tree around them: branch pages and page headers (metadata) and unused
    /// space in its pages (fragmentation).
    pub overhead: u64,
}

impl TableUsage {
    /// Everything the table occupies.
    pub fn total(&self) -> u64 {
        self.stored + self.overhead
    }
}

/// The whole database's footprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbStats {
    /// Every table, largest first.
    pub tables: Vec<TableUsage>,
    /// Blocks held (genesis included).
    pub blocks: u64,
    /// Transactions held.
    pub transactions: u64,
}

impl DbStats {
    /// Totals per kind, largest first.
    pub fn by_kind(&self) -> Vec<(Kind, u64)> {
        let mut kinds = std::collections::BTreeMap::new();
        for t in &self.tables {
            *kinds.entry(t.kind).or_insert(0) += t.total();
        }
        let mut kinds: Vec<_> = kinds.into_iter().collect();
        kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
        kinds
    }

    /// Bytes of all tables.
    pub fn total(&self) -> u64 {
        self.tables.iter().map(TableUsage::total).sum()
    }

    /// Bytes per transaction, when there are any.
    pub fn per_transaction(&self, bytes: u64) -> Option<f64> {
        (self.transactions > 0).then(|| bytes as f64 / self.transactions as f64)
    }
}

/// The tables `l2node db stats` prints: per kind, then per table.
impl std::fmt::Display for DbStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let per_tx = |b: u64| {
            self.per_transaction(b)
                .map_or_else(|| "-".to_owned(), |v| format!("{v:.0} B"))
        };
        let total = self.total();
        writeln!(
            f,
            "{} blocks, {} transactions; tables {}, {} per transaction\n",
            self.blocks,
            self.transactions,
            human_size(total),
            per_tx(total),
        )?;
        writeln!(
            f,
            "{:<20} {:>10} {:>10} {:>7}",
            "kind", "bytes", "per tx", "share"
        )?;
        for (kind, bytes) in self.by_kind() {
            let share = bytes as f64 * 100.0 / total.max(1) as f64;
            writeln!(
                f,
                "{:<20} {:>10} {:>10} {:>6.1}%",
                kind.label(),
                human_size(bytes),
                per_tx(bytes),
                share
            )?;
        }
        writeln!(
            f,
            "\n{:<24} {:>11} {:>10} {:>10} {:>10}",
            "table", "entries", "stored", "overhead", "per tx"
        )?;
        for t in &self.tables {
            writeln!(
                f,
                "{:<24} {:>11} {:>10} {:>10} {:>10}",
                t.name,
                t.entries,
                human_size(t.stored),
                human_size(t.overhead),
                per_tx(t.total())
            )?;
        }
        Ok(())
    }
}

/// Bytes in B, KiB, MiB or GiB.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

impl Storage {
    /// The footprint of every table, as of the latest commit.
    pub fn stats(&self) -> Result<DbStats, StorageError> {
        // The transactions of the blocks whose trie nodes are buffered are not in `tx_index`
        // yet: counted from the buffer of the same commit.
        let (tx, buffered) = {
            let trie = self.snapshots.trie();
            (self.db.begin_read()?, self.snapshots.tx_buffer(&trie).len())
        };
        let mut usage = Vec::new();
        for handle in tx.list_tables()? {
            let table = tx.open_untyped_table(handle.clone())?;
            let stats = table.stats()?;
            usage.push(TableUsage {
                name: handle.name().to_owned(),
                kind: Kind::of(handle.name()),
                entries: table.len()?,
                stored: stats.stored_bytes(),
                overhead: stats.metadata_bytes() + stats.fragmented_bytes(),
            });
        }
        usage.sort_by(|a, b| b.total().cmp(&a.total()).then(a.name.cmp(&b.name)));
        let blocks = tx.open_table(tables::HEADERS)?.len()?;
        let transactions = tx.open_table(tables::TX_INDEX)?.len()? + buffered as u64;
        Ok(DbStats {
            tables: usage,
            blocks,
            transactions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_has_a_kind_and_an_empty_database_has_no_transactions() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::open(&dir.path().join("chain.redb")).unwrap();
        let stats = storage.stats().unwrap();
        assert_eq!(stats.transactions, 0);
        assert_eq!(stats.per_transaction(stats.total()), None);
        let kind = |name: &str| stats.tables.iter().find(|t| t.name == name).unwrap().kind;
        assert_eq!(kind("bodies"), Kind::Blocks);
        assert_eq!(kind("receipts"), Kind::Receipts);
        assert_eq!(kind("change_sets"), Kind::ChangeSets);
        assert_eq!(kind("karma_usage"), Kind::Karma);
        assert_eq!(kind("account_history"), Kind::StateHistory);
        assert_eq!(kind("meta"), Kind::Other);
        assert!(
            stats.tables.iter().any(|t| t.entries > 0),
            "meta has the proofs mark"
        );
        let printed = stats.to_string();
        assert!(printed.starts_with("0 blocks, 0 transactions"), "{printed}");
        assert!(printed.contains("change_sets"), "{printed}");
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(3 * 1024 * 1024 * 1024), "3.0 GiB");
    }
}

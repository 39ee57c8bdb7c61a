//! Embedded storage on redb: blocks, receipts, indexes, current state, history and trie nodes.

/// Errors of the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The database engine failed.
    #[error("database error: {0}")]
    Database(String),
    /// Stored bytes did not decode: the database is damaged or from another version.
    #[error("corrupt record in {table}: {reason}")]
    Corrupt {
        /// Table holding the record.
        table: &'static str,
        /// What failed to decode.
        reason: String,
    },
}

//! Storage options (`--data-path`, `--db-cache-size`).

use std::path::{Path, PathBuf};

use l2node_storage::DEFAULT_DB_CACHE_BYTES;

option_group! {
    /// Where the chain is kept, and how much of it stays in memory.
    #[command(next_help_heading = "Storage")]
    pub(crate) struct StorageArgs {
        /// Data directory [default: run: l2node-data, or l2node-data/dev with --dev; devnet:
        /// l2node-data/devnet, the sequencer's chain in DIR/sequencer and the follower's in
        /// DIR/follower; import: l2node-data].
        #[arg(long, value_name = "DIR")]
        pub data_path: Option<PathBuf>,
        /// Database page cache in bytes (devnet: each node has its own).
        #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_DB_CACHE_BYTES)]
        pub db_cache_size: usize,
    }
}

impl StorageArgs {
    /// The data directory: `--data-path`, else the command's `default`.
    pub(crate) fn data_dir(&self, default: &Path) -> PathBuf {
        self.data_path
            .clone()
            .unwrap_or_else(|| default.to_path_buf())
    }
}

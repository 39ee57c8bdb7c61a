//! Storage options (`--data-path`, `--db-cache-size`).

use std::path::{Path, PathBuf};

use l2node_storage::{DEFAULT_DB_CACHE_BYTES, MIN_HISTORY_WINDOW};

option_group! {
    /// Where the chain is kept, and how much of it stays in memory.
    #[command(next_help_heading = "Storage")]
    pub(crate) struct StorageArgs {
        /// Data directory [default: run: l2node-data, or l2node-data/dev with --dev; devnet:
        /// l2node-data/devnet, the sequencer's chain in DIR/sequencer and the follower's in
        /// DIR/follower; import: l2node-data].
        #[arg(long, value_name = "DIR")]
        pub data_path: Option<PathBuf>,
        /// Database cache in bytes, a ceiling filled as the state grows (the default is geth's
        /// --cache): at most 8 MiB of redb's pages (the file is read through a memory map, so
        /// the OS page cache holds the others), the rest for the state trie's nodes: the levels
        /// every block reads, then its deeper branches, read into memory when the node opens
        /// (about 690 MiB at ten million accounts).
        /// Devnet: each node has its own.
        #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_DB_CACHE_BYTES)]
        pub db_cache_size: usize,
        /// Keep the state of the last N blocks only (a pruned node; at least 128): older
        /// account and storage history is deleted as blocks arrive, and queries of
        /// state or proofs before the window answer an error naming it. Blocks, receipts and
        /// logs are all kept. Default: all state history (an archive node).
        #[arg(long, value_name = "N", value_parser = parse_window)]
        pub history_window: Option<u64>,
    }
}

impl StorageArgs {
    /// `--history-window`, checked (a config file's value does not pass the flag's parser).
    pub(crate) fn window(&self) -> anyhow::Result<Option<u64>> {
        self.history_window
            .map(check_window)
            .transpose()
            .map_err(|e| anyhow::anyhow!("history-window: {e}"))
    }

    /// The data directory: `--data-path`, else the command's `default`.
    pub(crate) fn data_dir(&self, default: &Path) -> PathBuf {
        self.data_path
            .clone()
            .unwrap_or_else(|| default.to_path_buf())
    }
}

/// `--history-window`: a block count of at least [`MIN_HISTORY_WINDOW`].
fn parse_window(s: &str) -> Result<u64, String> {
    let n: u64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a block count (e.g. 100000)"))?;
    check_window(n)
}

fn check_window(n: u64) -> Result<u64, String> {
    if n < MIN_HISTORY_WINDOW {
        return Err(format!(
            "{n} blocks is below the smallest window, {MIN_HISTORY_WINDOW} (deeper than any \
             reorganisation); give {MIN_HISTORY_WINDOW} or more, or leave the flag out for an \
             archive node"
        ));
    }
    Ok(n)
}

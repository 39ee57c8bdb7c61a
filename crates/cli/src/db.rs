//! `l2node db stats`: where a stopped node's database spends its bytes.

use std::{io::Write as _, os::unix::fs::MetadataExt as _};

use anyhow::Context;
use l2node_storage::{DbStats, Storage};

use crate::args::DbStatsArgs;

/// The database cache `db stats` opens the database with: it reads each table once, in key
/// order, so redb's share (8 MiB) is all it uses, and the trie's node cache stays too small to
/// be read in when the database opens (at the default `--db-cache-size` that read alone took
/// 1.6 s and 70 MiB at a million accounts, and about 690 MiB at ten million).
const STATS_DB_CACHE_BYTES: usize = 16 * 1024 * 1024;

/// Prints the footprint of the database in `args.data_path`.
pub(crate) fn stats(args: &DbStatsArgs) -> anyhow::Result<()> {
    let path = l2node_node::chain::db_path(&args.data_path);
    let file = std::fs::metadata(&path).with_context(|| {
        format!(
            "no database at {}: give --data-path the node's data directory (l2node-data, \
             l2node-data/dev with --dev)",
            path.display()
        )
    })?;
    let storage = Storage::open_with_cache(&path, STATS_DB_CACHE_BYTES).map_err(|e| {
        if e.is_locked() {
            anyhow::anyhow!(
                "{} is open in a running node: stop the node first (the database takes one \
                 process)",
                path.display()
            )
        } else {
            anyhow::Error::from(e).context(format!("opening {}", path.display()))
        }
    })?;
    let stats = storage.stats()?;
    // Bytes the file takes on disk (a sparse file's apparent length is larger).
    let on_disk = file.blocks() * 512;
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        let json = serde_json::to_string_pretty(&json(&stats, file.len(), on_disk))?;
        writeln!(out, "{json}")
    } else {
        writeln!(
            out,
            "{}: {} on disk ({} apparent)\n\n{stats}",
            path.display(),
            l2node_storage::human_size(on_disk),
            l2node_storage::human_size(file.len()),
        )
    };
    match written {
        // Piped into `head`: the reader has what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

fn json(stats: &DbStats, apparent: u64, on_disk: u64) -> serde_json::Value {
    let per_tx = |b: u64| stats.per_transaction(b);
    serde_json::json!({
        "blocks": stats.blocks,
        "transactions": stats.transactions,
        "fileBytes": apparent,
        "diskBytes": on_disk,
        "tableBytes": stats.total(),
        "bytesPerTransaction": per_tx(stats.total()),
        "kinds": stats.by_kind().iter().map(|(kind, bytes)| serde_json::json!({
            "kind": kind.label(), "bytes": bytes, "bytesPerTransaction": per_tx(*bytes),
        })).collect::<Vec<_>>(),
        "tables": stats.tables.iter().map(|t| serde_json::json!({
            "table": t.name, "kind": t.kind.label(), "entries": t.entries, "storedBytes": t.stored,
            "overheadBytes": t.overhead, "bytesPerTransaction": per_tx(t.total()),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn stats_leaves_the_trie_on_disk() {
        assert!(!l2node_storage::warms_trie_cache(
            super::STATS_DB_CACHE_BYTES
        ));
    }
}

//! Every default of the node, each with the reason for its value.

/// Transaction pool capacity (pending + queued). geth's defaults are 5120 pending slots plus
/// 1024 queued; one global cap of the same total keeps the pool's memory bounded (at most
/// 6144 × 128 KiB worst case, far less in practice) while the cheapest tx is evicted when full.
pub const POOL_MAX_TXS: usize = 6144;
/// Minimum fee bump (percent of both max fee and tip) for a same-nonce replacement: geth's
/// `PriceBump` default, so wallets' "speed up" buttons behave as on Ethereum.
pub const POOL_PRICE_BUMP_PERCENT: u64 = 10;
/// Largest accepted transaction encoding: geth's `txMaxSize` (4 × 32 KiB slots), which bounds
/// the cost of relaying and journaling a single transaction.
pub const POOL_MAX_TX_SIZE: usize = 128 * 1024;
/// Buffered new-pending-tx notifications per subscriber; a subscriber lagging further behind
/// misses hashes (as geth's newPendingTransactions may), it never blocks the pool.
pub const POOL_EVENT_CHANNEL_CAPACITY: usize = 4096;
/// Journal records below which the journal is never compacted: rewriting a small file on every
/// block would be pure churn; above it the journal is rewritten once dead records exceed live ones.
pub const POOL_JOURNAL_COMPACT_MIN_RECORDS: usize = 1024;

//! Every default of the node, each with the reason for its value.

/// redb page cache: 256 MiB keeps the hot trie paths and recent blocks in memory on a 24 GiB
/// machine without starving the OS page cache.
pub const DB_CACHE_BYTES: usize = 256 * 1024 * 1024;

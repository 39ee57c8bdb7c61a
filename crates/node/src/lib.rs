//! The l2node core as a library: the chain and its services (executor, pool, miner, Karma, fees,
//! peers and sync). No servers: `l2node-rpc` serves these services and `l2node-launch` wires them.

pub mod chain;
pub mod chainspec;
pub mod constants;
pub mod dev;
pub mod exclusions;
pub mod executor;
pub mod fees;
pub mod group;
pub mod import;
pub mod karma;
pub mod logs;
pub mod metrics;
pub mod miner;
pub mod p2p;
pub mod per_head;
pub mod pool;
pub mod sync;
#[cfg(any(test, feature = "test-utils"))]
pub mod test_utils;
pub mod testing;

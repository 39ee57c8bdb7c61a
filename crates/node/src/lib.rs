//! l2node as a library: storage, execution, pool, miner and the RPC servers.
//!
//! `spawn(NodeConfig)` starts a node and returns a `NodeHandle`.

pub mod chain;
pub mod chainspec;
pub mod constants;
pub mod dev;
pub mod executor;
pub mod fees;
pub mod import;
pub mod karma;
pub mod logs;
pub mod metrics;
pub mod miner;
pub mod node;
pub mod p2p;
pub mod pool;
pub mod rpc;
pub mod state;
pub mod storage;
pub mod sync;
#[cfg(any(test, feature = "test-utils"))]
pub mod test_utils;
pub mod trie;

pub use node::{spawn, KarmaNodeConfig, NodeConfig, NodeError, NodeHandle};

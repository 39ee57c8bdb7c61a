//! l2node as a library: storage, execution, pool, miner and the RPC servers.
//!
//! `spawn(NodeConfig)` starts a node and returns a `NodeHandle`.

pub mod chainspec;
pub mod constants;
pub mod executor;
pub mod pool;
pub mod rpc;
pub mod state;
pub mod storage;
pub mod trie;

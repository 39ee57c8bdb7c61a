//! l2node as a library: storage, execution, pool, miner and the RPC servers.
//!
//! `spawn(NodeConfig)` starts a node and returns a `NodeHandle`.

pub mod chain;
pub mod chainspec;
pub mod constants;
pub mod dev;
pub mod executor;
pub mod import;
pub mod miner;
pub mod node;
pub mod pool;
pub mod rpc;
pub mod state;
pub mod storage;
// The trie is being replaced on another branch; its lint fix lands there, not here.
#[allow(
    clippy::box_default,
    clippy::type_complexity,
    clippy::redundant_closure
)]
pub mod trie;

pub use node::{spawn, NodeConfig, NodeError, NodeHandle};

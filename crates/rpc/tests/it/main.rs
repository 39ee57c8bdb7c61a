//! Integration tests of the RPC server and the node behind it: each starts a real node (or
//! server) on port 0.

mod bounded;
mod common;
mod connections;
mod dashboard;
mod debug_raw;
mod dev;
mod ef_blockchain;
mod exclusions;
mod fuzz;
mod import;
mod karma;
mod karma_contracts;
mod layering;
mod node;
mod otterscan;
mod p2p;
mod pool_limits;
mod proof;
mod shapes;
mod simulate;
mod spec_simulate;
mod subscriptions;
mod wire;

//! l2node client library.
//!
//! For now it re-exports the `l2node-api` crate, whose generated `*Client` traits call every
//! method the node serves; the estimate-based transaction construction, fee quotes and health
//! checks come with the `l2_estimateGas` work.

pub use l2node_api as api;

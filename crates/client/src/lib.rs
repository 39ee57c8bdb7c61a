//! l2node client library.
//!
//! Reserved for the client side of DESIGN.md section 1 (estimate-based transaction
//! construction, fee quotes, health checks), which lands with the `l2_estimateGas` / Karma
//! work. Until then clients use the generated `*Client` traits of `l2node-api` directly.

pub use l2node_api as api;

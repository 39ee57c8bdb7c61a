//! Karma: the policy that makes the network gasless. Senders holding Karma get a daily quota of
//! free transactions by tier; past it (or when slashed) they pay premium fees.
//!
//! `config` is the typed genesis section, `policy` the pure rules, `ledger` the per-block
//! derivation that is committed with every block, and `contracts` the predeployed Solidity.

pub mod config;

pub use config::{FeeParams, KarmaConfig, KarmaConfigError};

//! l2node client library: the client rules of the network's node interface, ready-made.
//!
//! - [`Client::estimate`] always sends `from` (a [`Call`] cannot be built without it) and returns
//!   a [`FeeQuote`]: the fields of `l2_estimateGas`, `maxFeePerGas = 2 x base + priority`
//!   (checked), and the sender's [`FeeState`] from `l2_getKarmaStatus`, stamped with the time it
//!   was taken.
//! - [`Client::send`] re-estimates immediately before signing and again on every retry: no quote
//!   is ever reused across attempts.
//! - [`L2FeeFiller`] gives alloy users the same rules as one provider layer.
//! - [`health`] runs the three health checks of a node.
//!
//! The api crate's generated `*Client` traits (re-exported as [`api`]) call every other method.

mod client;
mod error;
mod filler;
pub mod health;
mod quote;

pub use client::{Call, Client, Sent, SEND_ATTEMPTS};
pub use error::ClientError;
pub use filler::L2FeeFiller;
pub use l2node_api as api;
pub use quote::{FeeQuote, FeeState, PremiumReason};

//! Wire types and jsonrpsee API traits shared by the l2node server and its clients.
//!
//! Every method is declared once here; the node implements the generated `*Server` traits and
//! the client library uses the generated `*Client` traits.

pub mod error;
mod traits;
pub mod types;

pub use traits::*;

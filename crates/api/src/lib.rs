//! Wire types and jsonrpsee API traits shared by the l2node server and its clients.
//!
//! Every method is declared once here, through the `declare_api!` macro: the node
//! implements the generated `*Server` traits (feature `server`), the client library uses the
//! generated `*Client` traits (feature `client`), and the method tables ([`METHODS`],
//! [`MethodSpec`]) describe every method's parameters.

#[macro_use]
mod declare;
pub mod error;
mod traits;
pub mod types;

pub use declare::{
    check, find_method, methods, plain_error, MethodKind, MethodSpec, Param, ParamKind, ParamSpec,
    SubscriptionId,
};
pub use traits::*;

//! JSON-RPC: the HTTP and WebSocket transports, their wire rules, and (in sibling files) the
//! method implementations.

pub mod http_layer;
pub mod middleware;
pub mod server;

pub use server::{start_rpc_servers, RpcServerConfig, RpcServerError, RpcServerHandle};

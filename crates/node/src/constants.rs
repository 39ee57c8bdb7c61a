//! Every default of the node, each with the reason for its value.

// ---------------------------------------------------------------------------------------------
// JSON-RPC servers (rpc/server.rs)
// ---------------------------------------------------------------------------------------------

/// HTTP JSON-RPC port: the Ethereum convention (geth, Besu, anvil) that wallets and tools assume.
pub const DEFAULT_RPC_HTTP_PORT: u16 = 8545;

/// WebSocket JSON-RPC port: geth's and Besu's default, one above the HTTP port.
pub const DEFAULT_RPC_WS_PORT: u16 = 8546;

/// HTTP listen address: loopback only, so a fresh node is not an open RPC endpoint on the network.
pub const DEFAULT_RPC_HTTP_ADDR: std::net::SocketAddr = std::net::SocketAddr::V4(
    std::net::SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, DEFAULT_RPC_HTTP_PORT),
);

/// WebSocket listen address: loopback only, for the same reason as [`DEFAULT_RPC_HTTP_ADDR`].
pub const DEFAULT_RPC_WS_ADDR: std::net::SocketAddr = std::net::SocketAddr::V4(
    std::net::SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, DEFAULT_RPC_WS_PORT),
);

/// Most requests in one JSON-RPC batch (`--rpc-http-max-batch-size`): the interface document's
/// value, Besu's default. 1, 0 and negative values mean unlimited (the document spells unlimited
/// 1, Besu spells it -1).
pub const DEFAULT_RPC_MAX_BATCH_SIZE: i64 = 1024;

/// Largest request body in bytes (`--rpc-http-max-request-content-length`): 5 MiB, the interface
/// document's value; comfortably above a full block of raw transactions in one batch.
pub const DEFAULT_RPC_MAX_REQUEST_BODY: u32 = 5 * 1024 * 1024;

/// Largest response body in bytes: 25 MiB, enough for a full block with transactions or a wide
/// `eth_getLogs`, while bounding the memory one request can pin.
pub const DEFAULT_RPC_MAX_RESPONSE_BODY: u32 = 25 * 1024 * 1024;

/// Most simultaneous connections per server (HTTP and WS each): 100, jsonrpsee's default and close
/// to Besu's 80. An HTTP connection holds a slot only while a request runs; a WebSocket holds one
/// for its lifetime, with up to [`DEFAULT_RPC_MAX_SUBSCRIPTIONS_PER_CONNECTION`] subscriptions, so
/// this bounds the node's subscription memory too. Plenty for a locally run node.
pub const DEFAULT_RPC_MAX_CONNECTIONS: u32 = 100;

/// Most live subscriptions on one WebSocket connection: 1024, jsonrpsee's default; a dapp needs a
/// handful, and the cap stops one client from exhausting the node.
pub const DEFAULT_RPC_MAX_SUBSCRIPTIONS_PER_CONNECTION: u32 = 1024;

/// Largest WebSocket message in bytes: the same 5 MiB as an HTTP request body, so anything that
/// can be POSTed can also be sent over the WebSocket.
pub const DEFAULT_RPC_WS_MAX_MESSAGE: u32 = DEFAULT_RPC_MAX_REQUEST_BODY;

/// Hosts accepted in the `Host` header (`--host-allowlist`, Besu's default): loopback names only,
/// which stops DNS-rebinding attacks from web pages; `"*"` accepts any host.
pub const DEFAULT_RPC_HOST_ALLOWLIST: &[&str] = &["localhost", "127.0.0.1"];

/// Browser origins allowed by CORS (`--rpc-http-cors-origins`, Besu's default): none, so web pages
/// cannot call the node unless the operator opts in; `"*"` allows every origin.
pub const DEFAULT_RPC_CORS_ORIGINS: &[&str] = &[];

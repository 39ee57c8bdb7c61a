//! The JSON-RPC error codes l2node answers with (the one table of codes).

/// Invalid JSON was received (JSON-RPC 2.0).
pub const PARSE_ERROR: i32 = -32700;
/// The JSON sent is not a valid request object (JSON-RPC 2.0).
pub const INVALID_REQUEST: i32 = -32600;
/// The method does not exist (JSON-RPC 2.0).
pub const METHOD_NOT_FOUND: i32 = -32601;
/// Invalid method parameters (JSON-RPC 2.0); the message names the parameter.
pub const INVALID_PARAMS: i32 = -32602;
/// Internal error (JSON-RPC 2.0).
pub const INTERNAL_ERROR: i32 = -32603;
/// Execution reverted; `data` carries the revert bytes (geth, EIP-1474 style).
pub const EXECUTION_REVERTED: i32 = 3;
/// Transaction rejected / generic server error (geth's default code for failures).
pub const SERVER_ERROR: i32 = -32000;
/// A limit was exceeded (EIP-1474 "limit exceeded"): batch size, log range, response size.
pub const LIMIT_EXCEEDED: i32 = -32005;

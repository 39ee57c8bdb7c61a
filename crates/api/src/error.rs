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
/// EIP-7966: the transaction is in the pool but was not mined within the timeout (data: its
/// hash).
pub const TX_SYNC_TIMEOUT: i32 = 4;
/// A limit was exceeded (EIP-1474 "limit exceeded"): batch size, log range, response size.
pub const LIMIT_EXCEEDED: i32 = -32005;
/// eth_simulateV1: a call's exceptional halt (out of gas, invalid opcode), in its result.
pub const SIM_VM_ERROR: i32 = -32015;
/// eth_simulateV1 (execution-apis): a call's nonce is below the sender's.
pub const SIM_NONCE_TOO_LOW: i32 = -38010;
/// eth_simulateV1: a call's nonce is above the sender's.
pub const SIM_NONCE_TOO_HIGH: i32 = -38011;
/// eth_simulateV1 with validation: a call's fee cap is below the block's base fee.
pub const SIM_BASE_FEE_TOO_LOW: i32 = -38012;
/// eth_simulateV1: a call's gas is below its intrinsic gas.
pub const SIM_INTRINSIC_GAS: i32 = -38013;
/// eth_simulateV1: the sender cannot pay for a call.
pub const SIM_INSUFFICIENT_FUNDS: i32 = -38014;
/// eth_simulateV1: a call does not fit in what is left of the block's gas.
pub const SIM_BLOCK_GAS_LIMIT: i32 = -38015;
/// eth_simulateV1: block numbers are not increasing.
pub const SIM_BLOCK_NUMBER_INVALID: i32 = -38020;
/// eth_simulateV1: block timestamps are not increasing.
pub const SIM_BLOCK_TIMESTAMP_INVALID: i32 = -38021;
/// eth_simulateV1: the sender has code (and is not a delegated account).
pub const SIM_SENDER_NOT_EOA: i32 = -38024;
/// eth_simulateV1: a creation's init code is over the limit.
pub const SIM_MAX_INIT_CODE_SIZE: i32 = -38025;
/// eth_simulateV1: more blocks than the node simulates at once (256, as geth).
pub const SIM_CLIENT_LIMIT: i32 = -38026;

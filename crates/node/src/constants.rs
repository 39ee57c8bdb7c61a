//! Every default of the node, each with the reason for its value.

use std::time::Duration;

/// Gas limit of a genesis block whose `gasLimit` is 0: geth's `params.GenesisGasLimit`, so a
/// genesis file yields the same genesis hash in l2node as in geth.
pub const DEFAULT_GENESIS_GAS_LIMIT: u64 = 4_712_388;

/// Wall-clock limit of one `eth_call` / `eth_estimateGas` / `eth_createAccessList` run: geth's
/// `--rpc.evmtimeout` default (5 s); an endless loop in a view call must not pin a core.
pub const EVM_CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// Interpreter steps between two clock reads of the EVM deadline: reading the clock is ~20 ns,
/// an opcode ~10-100 ns, so checking every 1024 steps costs nothing and overshoots by < 1 ms.
pub const EVM_DEADLINE_CHECK_STEPS: u64 = 1024;

/// Gas cap of `eth_call` / `eth_estimateGas` when the caller gives none: geth's `--rpc.gascap`
/// default (50M), high enough for any block-sized call.
pub const DEFAULT_RPC_GAS_CAP: u64 = 50_000_000;

/// eth_estimateGas stops its binary search once `(hi - lo) / hi` falls below this ratio:
/// geth's `estimateGasErrorRatio` (1.5%), so estimates match geth's within rounding.
pub const ESTIMATE_GAS_ERROR_RATIO: f64 = 0.015;

/// Rounds of eth_createAccessList before giving up on a stable list: the list changes the gas
/// (warm vs cold), which can change the path taken; geth loops until stable, we cap it.
pub const ACCESS_LIST_MAX_ROUNDS: usize = 10;

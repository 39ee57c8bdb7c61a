//! Execution on revm through alloy-evm: block import ([`execute_block`]), the sequencer's block
//! builder ([`build_block`]) and the RPC entry points ([`call`], [`estimate_gas`],
//! [`create_access_list`]).
//!
//! All of them read the world state through a [`StateReader`](l2node_storage::StateReader)
//! ([`StateDb`] adapts it for revm) and never write: blocks return
//! [`StateChanges`](l2node_trie::state::StateChanges) for storage and the trie to apply.

mod block;
mod call;
mod db;
mod error;
mod estimate;
mod otterscan;
mod simulate;
mod trace;

pub use block::{
    build_block, execute_block, BlockOutput, BuildAttributes, BuiltBlock, IntermediateRoot,
};
pub use call::{
    call, create_access_list, AccessListOutcome, Budget, CallEnv, CallOutput, CallRequest,
};
pub use db::{DbError, StateDb};
pub use error::ExecError;
pub use estimate::estimate_gas;
pub use otterscan::{ots_creations, ots_internal_operations, ots_trace, ots_transaction_error};
pub use simulate::{simulate, SimulateFailure, SimulatedBlock, TRANSFER_LOG_ADDRESS};
pub use trace::{parity_block_traces, parity_call, parity_replay_block, trace_block, trace_call};

//! The state changes of a block: what the executor returns, storage writes and the trie folds
//! into the state root. Plain data with no dependency on any other module.

use alloy_primitives::{Address, B256, U256};
use revm::bytecode::Bytecode;

/// The new value of one account after a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountChange {
    /// The account's address.
    pub address: Address,
    /// New nonce, balance and code hash, or `None` when the account no longer exists.
    pub info: Option<AccountState>,
    /// Code deployed in this block (the bytes behind `info.code_hash`), if new.
    pub new_code: Option<Bytecode>,
    /// `true` when all previous storage is gone (self-destruct or re-creation) before `storage`
    /// is applied.
    pub storage_wiped: bool,
    /// Changed slots and their new values (zero = deleted).
    pub storage: Vec<(U256, U256)>,
}

/// The consensus fields of an account (the storage root is derived by the trie).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AccountState {
    /// Transaction count / contract creation count.
    pub nonce: u64,
    /// Balance in wei.
    pub balance: U256,
    /// keccak256 of the code (`KECCAK_EMPTY` for none).
    pub code_hash: B256,
}

/// All account changes of one block, one entry per touched address, sorted by address.
pub type StateChanges = Vec<AccountChange>;

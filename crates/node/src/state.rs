//! The state interface shared by storage, execution, the pool and the trie.
//!
//! Storage implements [`StateReader`] for any block it holds; the executor reads through it and
//! returns [`StateChanges`], which storage writes and the trie folds into the state root.

use alloy_primitives::{Address, B256, U256};
use revm::{bytecode::Bytecode, state::AccountInfo};

use crate::storage::StorageError;

/// Read access to the world state as of one block.
pub trait StateReader: Send + Sync {
    /// Account basics (balance, nonce, code hash; `code` left `None`), or `None` if absent.
    fn account(&self, address: Address) -> Result<Option<AccountInfo>, StorageError>;
    /// Value of a storage slot (zero when unset).
    fn storage(&self, address: Address, slot: U256) -> Result<U256, StorageError>;
    /// Contract code by its keccak hash (empty bytecode when unknown).
    fn code_by_hash(&self, code_hash: B256) -> Result<Bytecode, StorageError>;
    /// Hash of a canonical block by number (for the BLOCKHASH opcode), zero when unknown.
    fn block_hash(&self, number: u64) -> Result<B256, StorageError>;
}

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

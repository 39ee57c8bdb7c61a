//! revm database adapter over a [`StateReader`].

use alloy_primitives::{Address, B256, U256};
use revm::{
    bytecode::Bytecode,
    database_interface::{DBErrorMarker, Database, DatabaseRef},
    primitives::KECCAK_EMPTY,
    state::AccountInfo,
};

use l2node_storage::{StateReader, StorageError};

/// A storage error surfaced through revm.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct DbError(#[from] pub StorageError);

impl DBErrorMarker for DbError {}

/// Reads the world state for revm from a [`StateReader`] (read-only; revm's `State` caches and
/// collects the writes on top).
#[derive(Clone, Copy)]
pub struct StateDb<'a> {
    reader: &'a dyn StateReader,
}

impl std::fmt::Debug for StateDb<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateDb").finish_non_exhaustive()
    }
}

impl<'a> StateDb<'a> {
    /// Wraps a state reader.
    pub fn new(reader: &'a dyn StateReader) -> Self {
        Self { reader }
    }
}

impl DatabaseRef for StateDb<'_> {
    type Error = DbError;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, DbError> {
        let mut info = self.reader.account(address)?;
        // `AccountInfo::default()` carries `Some(empty code)`: a reader that builds infos with
        // `..Default::default()` would hide contract code. Force a lookup by hash instead.
        if let Some(info) = info.as_mut() {
            if info.code_hash != KECCAK_EMPTY && info.code.as_ref().is_some_and(|c| c.is_empty()) {
                info.code = None;
            }
        }
        Ok(info)
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, DbError> {
        Ok(self.reader.code_by_hash(code_hash)?)
    }

    fn storage_ref(&self, address: Address, index: U256) -> Result<U256, DbError> {
        Ok(self.reader.storage(address, index)?)
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, DbError> {
        Ok(self.reader.block_hash(number)?)
    }
}

impl Database for StateDb<'_> {
    type Error = DbError;

    fn basic(&mut self, address: Address) -> Result<Option<AccountInfo>, DbError> {
        self.basic_ref(address)
    }

    fn code_by_hash(&mut self, code_hash: B256) -> Result<Bytecode, DbError> {
        self.code_by_hash_ref(code_hash)
    }

    fn storage(&mut self, address: Address, index: U256) -> Result<U256, DbError> {
        self.storage_ref(address, index)
    }

    fn block_hash(&mut self, number: u64) -> Result<B256, DbError> {
        self.block_hash_ref(number)
    }
}

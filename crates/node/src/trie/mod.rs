//! Placeholder until the trie lands.
use alloy_primitives::B256;
use crate::{state::AccountChange, storage::StorageError};
/// Trie node table.
pub const TRIE_NODES: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("trie_nodes");
/// Placeholder.
pub fn apply_changes(_t: &mut redb::Table<'_, &'static [u8], &'static [u8]>, _c: &[AccountChange]) -> Result<B256, StorageError> { Ok(B256::ZERO) }

//! eth_getProof over the stored state trie (head state only: the trie is kept for the head).

use alloy_primitives::{Address, B256, U256};
use alloy_rpc_types_eth::{EIP1186AccountProofResponse, EIP1186StorageProof};
use alloy_serde::JsonStorageKey;
use redb::ReadableDatabase;

use super::{Storage, StorageError};
use crate::trie;

impl Storage {
    /// EIP-1186 proof of `address` and `slots` against the head state root.
    pub fn proof(
        &self,
        address: Address,
        slots: &[B256],
    ) -> Result<EIP1186AccountProofResponse, StorageError> {
        let tx = self.db.begin_read()?;
        let store = tx.open_table(trie::TRIE_NODES)?;
        let p = trie::account_proof(&store, address, slots)?;
        let (balance, nonce, code_hash) = match &p.account {
            Some(a) => (a.balance, a.nonce, a.code_hash),
            None => (U256::ZERO, 0, revm::primitives::KECCAK_EMPTY),
        };
        Ok(EIP1186AccountProofResponse {
            address,
            balance,
            code_hash,
            nonce,
            storage_hash: p.storage_root,
            account_proof: p.account_proof,
            storage_proof: p
                .storage_proofs
                .into_iter()
                .map(|s| EIP1186StorageProof {
                    key: JsonStorageKey::Hash(s.slot),
                    value: s.value,
                    proof: s.proof,
                })
                .collect(),
        })
    }
}

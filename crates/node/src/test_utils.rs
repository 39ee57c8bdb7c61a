//! Test utilities shared by the unit tests, the integration tests and the benches (feature
//! `test-utils`): deterministic keys, one way to sign a transaction, an in-memory
//! [`StateReader`] with a reference state-root computation, small chain specs and fixture loading.

use std::collections::{BTreeMap, HashMap};

use alloy_consensus::{
    transaction::Recovered, Block, SignableTransaction, Signed, TxEip1559, TxEnvelope,
};
use alloy_genesis::Genesis;
use alloy_primitives::{address, keccak256, Address, Bytes, Signature, TxKind, B256, U256};
use alloy_rlp::Decodable;
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use revm::{bytecode::Bytecode, primitives::KECCAK_EMPTY, state::AccountInfo};

use crate::chainspec::ChainSpec;
use l2node_storage::StateReader;
use l2node_storage::StorageError;
use l2node_trie::state::{AccountState, StateChanges};

/// A recipient without a key.
pub const BOB: Address = address!("0x000000000000000000000000000000000000b0b0");
/// Another recipient without a key.
pub const ALICE: Address = address!("0x000000000000000000000000000000000000a11c");

/// HashMap-backed world state.
#[derive(Debug, Default, Clone)]
pub struct MemState {
    accounts: HashMap<Address, (AccountState, BTreeMap<U256, U256>)>,
    code: HashMap<B256, Bytecode>,
    hashes: HashMap<u64, B256>,
}

impl MemState {
    /// The accounts of a genesis `alloc`.
    pub fn from_genesis(genesis: &Genesis) -> Self {
        let mut state = Self::default();
        for (address, account) in &genesis.alloc {
            let code_hash = match account.code.as_ref().filter(|c| !c.is_empty()) {
                Some(code) => {
                    let hash = keccak256(code);
                    state.code.insert(hash, Bytecode::new_raw(code.clone()));
                    hash
                }
                None => KECCAK_EMPTY,
            };
            let storage = account
                .storage
                .iter()
                .flatten()
                .map(|(k, v)| (U256::from_be_bytes(k.0), U256::from_be_bytes(v.0)))
                .filter(|(_, v)| !v.is_zero())
                .collect();
            let info = AccountState {
                nonce: account.nonce.unwrap_or_default(),
                balance: account.balance,
                code_hash,
            };
            state.accounts.insert(*address, (info, storage));
        }
        state
    }

    /// Every given key funded with 1000 ether at nonce 0.
    pub fn funded(keys: &[&PrivateKeySigner]) -> Self {
        let mut state = Self::default();
        for key in keys {
            state.set(key.address(), 0, U256::from(10u128.pow(21)));
        }
        state
    }

    /// Sets an account's nonce and balance (keeping its code and storage).
    pub fn set(&mut self, address: Address, nonce: u64, balance: U256) {
        let entry = self.accounts.entry(address).or_default();
        entry.0.nonce = nonce;
        entry.0.balance = balance;
        if entry.0.code_hash == B256::ZERO {
            entry.0.code_hash = KECCAK_EMPTY;
        }
    }

    /// Deploys `code` at `address` (for call tests).
    pub fn set_code(&mut self, address: Address, code: Bytes) {
        let hash = keccak256(&code);
        self.code.insert(hash, Bytecode::new_raw(code));
        let entry = self.accounts.entry(address).or_default();
        entry.0.code_hash = hash;
        entry.0.nonce = entry.0.nonce.max(1);
    }

    /// Makes BLOCKHASH of `number` answer `hash`.
    pub fn insert_block_hash(&mut self, number: u64, hash: B256) {
        self.hashes.insert(number, hash);
    }

    /// Applies a block's changes.
    pub fn apply(&mut self, changes: &StateChanges) {
        for change in changes {
            if let Some(code) = &change.new_code {
                self.code.insert(
                    change.info.expect("code needs an account").code_hash,
                    code.clone(),
                );
            }
            match change.info {
                None => {
                    self.accounts.remove(&change.address);
                }
                Some(info) => {
                    let entry = self.accounts.entry(change.address).or_default();
                    if change.storage_wiped {
                        entry.1.clear();
                    }
                    for (slot, value) in &change.storage {
                        if value.is_zero() {
                            entry.1.remove(slot);
                        } else {
                            entry.1.insert(*slot, *value);
                        }
                    }
                    entry.0 = info;
                }
            }
        }
    }

    /// The state root, computed from scratch.
    pub fn state_root(&self) -> B256 {
        l2node_trie::state_root_from_scratch(self.accounts.iter().map(
            |(address, (info, storage))| {
                (
                    *address,
                    *info,
                    storage.iter().map(|(k, v)| (*k, *v)).collect(),
                )
            },
        ))
    }
}

impl StateReader for MemState {
    fn account(&self, address: Address) -> Result<Option<AccountInfo>, StorageError> {
        Ok(self.accounts.get(&address).map(|(info, _)| AccountInfo {
            balance: info.balance,
            nonce: info.nonce,
            code_hash: info.code_hash,
            account_id: None,
            code: None,
        }))
    }

    fn storage(&self, address: Address, slot: U256) -> Result<U256, StorageError> {
        Ok(self
            .accounts
            .get(&address)
            .and_then(|(_, storage)| storage.get(&slot).copied())
            .unwrap_or_default())
    }

    fn code_by_hash(&self, code_hash: B256) -> Result<Bytecode, StorageError> {
        Ok(self.code.get(&code_hash).cloned().unwrap_or_default())
    }

    fn block_hash(&self, number: u64) -> Result<B256, StorageError> {
        Ok(self.hashes.get(&number).copied().unwrap_or_default())
    }
}

/// Loads `testdata/chains/<name>/{genesis.json,chain.rlp}` from the repository root.
pub fn fixture_chain(name: &str) -> (ChainSpec, Vec<Block<TxEnvelope>>) {
    let dir = format!(
        "{}/../../testdata/chains/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let spec = ChainSpec::from_genesis_file(format!("{dir}/genesis.json")).unwrap();
    let bytes = std::fs::read(format!("{dir}/chain.rlp")).unwrap();
    let mut buf = &bytes[..];
    let mut blocks = Vec::new();
    while !buf.is_empty() {
        blocks.push(Block::<TxEnvelope>::decode(&mut buf).expect("block RLP"));
    }
    (spec, blocks)
}

/// Test key `i` (deterministic).
pub fn key(i: u8) -> PrivateKeySigner {
    PrivateKeySigner::from_bytes(&B256::repeat_byte(i + 1)).unwrap()
}

/// A post-merge Cancun chain (EIP-1559 base fee) where keys 0 and 1 hold 1000 ETH.
pub fn dev_spec() -> ChainSpec {
    spec_with(serde_json::json!({
        "chainId": 1337, "homesteadBlock": 0, "eip150Block": 0, "eip155Block": 0,
        "eip158Block": 0, "byzantiumBlock": 0, "constantinopleBlock": 0,
        "petersburgBlock": 0, "istanbulBlock": 0, "berlinBlock": 0, "londonBlock": 0,
        "mergeNetsplitBlock": 0, "terminalTotalDifficulty": 0,
        "terminalTotalDifficultyPassed": true, "shanghaiTime": 0, "cancunTime": 0
    }))
}

/// A Besu-style Clique chain: Cancun by time without a merge, `zeroBaseFee`.
pub fn clique_spec() -> ChainSpec {
    spec_with(serde_json::json!({
        "chainId": 1338, "homesteadBlock": 0, "eip150Block": 0, "eip155Block": 0,
        "eip158Block": 0, "byzantiumBlock": 0, "constantinopleBlock": 0,
        "petersburgBlock": 0, "istanbulBlock": 0, "berlinBlock": 0, "londonBlock": 0,
        "shanghaiTime": 0, "cancunTime": 0, "zeroBaseFee": true,
        "clique": {"period": 2, "epoch": 30000}
    }))
}

fn spec_with(config: serde_json::Value) -> ChainSpec {
    let rich = U256::from(10u128.pow(21));
    let genesis = serde_json::json!({
        "config": config,
        "gasLimit": "0x1c9c380",
        "difficulty": "0x0",
        "timestamp": "0x0",
        "alloc": {
            key(0).address().to_string(): { "balance": rich.to_string() },
            key(1).address().to_string(): { "balance": rich.to_string() },
        }
    });
    ChainSpec::from_genesis(serde_json::from_value(genesis).unwrap()).unwrap()
}

/// Signs any transaction type with `key`.
pub fn sign<T>(key: &PrivateKeySigner, tx: T) -> Recovered<TxEnvelope>
where
    T: SignableTransaction<Signature>,
    TxEnvelope: From<Signed<T>>,
{
    let sig = key.sign_hash_sync(&tx.signature_hash()).unwrap();
    Recovered::new_unchecked(TxEnvelope::from(tx.into_signed(sig)), key.address())
}

/// An EIP-1559 transfer from test key `from` (21000 gas, 2 gwei max fee).
pub fn signed_transfer(
    spec: &ChainSpec,
    from: u8,
    nonce: u64,
    to: Address,
    value: u64,
) -> Recovered<TxEnvelope> {
    signed_transfer_with_gas(spec, from, nonce, to, value, 21_000)
}

/// [`signed_transfer`] with the given gas limit.
pub fn signed_transfer_with_gas(
    spec: &ChainSpec,
    from: u8,
    nonce: u64,
    to: Address,
    value: u64,
    gas_limit: u64,
) -> Recovered<TxEnvelope> {
    let signer = key(from);
    let tx = TxEip1559 {
        chain_id: spec.chain_id,
        nonce,
        gas_limit,
        max_fee_per_gas: 2_000_000_000,
        max_priority_fee_per_gas: 1,
        to: TxKind::Call(to),
        value: U256::from(value),
        ..Default::default()
    };
    sign(&signer, tx)
}

/// Builds and commits one block from `txs` the way the miner does.
pub fn produce_block(chain: &crate::chain::Chain, txs: Vec<Recovered<TxEnvelope>>) -> usize {
    let head = chain.head();
    let state = chain.storage().state_at(None).unwrap();
    let attrs = crate::executor::BuildAttributes {
        timestamp: head.header.timestamp + 1,
        gas_limit: head.header.gas_limit,
        ..Default::default()
    };
    let built =
        crate::executor::build_block(&chain.spec(), &state, &head.header, attrs, txs.into_iter())
            .unwrap();
    drop(state);
    let n = built.transactions.len();
    assert!(
        built.invalid.is_empty(),
        "the transactions are valid: {:?}",
        built.invalid.first()
    );
    chain
        .commit_built(built, [0u8; 32], &crate::dev::dev_sequencer())
        .unwrap();
    n
}

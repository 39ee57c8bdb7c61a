//! `testing_buildBlockV1` (execution-apis, TESTING namespace): the block this node would build
//! on a held block from given transactions (or from its pool), with its state root and hash,
//! without committing it or moving the head.

use alloy_consensus::{transaction::SignerRecoverable, Block, BlockBody, Transaction, TxEnvelope};
use alloy_eips::eip7685::Requests;
use alloy_hardforks::EthereumHardforks as _;
use alloy_primitives::{Address, Bytes, B256, U256};

use crate::chain::{Chain, ChainError};
use crate::executor::{self, BuildAttributes};
use crate::pool::{validate::decode_raw, Pool};
use l2node_trie as trie;

/// What a test asks to build (execution-apis `PayloadAttributesV3` and the method's other
/// arguments).
#[derive(Debug, Clone)]
pub struct PayloadRequest {
    /// The block to build on (any held block).
    pub parent: B256,
    /// The new block's timestamp.
    pub timestamp: u64,
    /// PREVRANDAO.
    pub prev_randao: B256,
    /// The fee recipient.
    pub fee_recipient: Address,
    /// The parent beacon block root (Cancun on).
    pub parent_beacon_block_root: Option<B256>,
    /// Exactly these transactions in this order; `None` takes the pool's best.
    pub transactions: Option<Vec<Bytes>>,
    /// The extra data; `None` leaves it empty.
    pub extra_data: Option<Bytes>,
}

/// The built block.
#[derive(Debug, Clone)]
pub struct BuiltPayload {
    /// The block, its state root filled (unsealed).
    pub block: Block<TxEnvelope>,
    /// What the fee recipient earns: each transaction's tip times its gas.
    pub value: U256,
    /// The EIP-7685 requests.
    pub requests: Requests,
}

/// Why a payload was not built.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    /// The parent is not a held block.
    #[error("unknown parent block {0}: build on a block of this chain")]
    UnknownParent(B256),
    /// A given transaction does not decode, does not recover, or cannot be included.
    #[error("{0}")]
    InvalidTransaction(String),
    /// The chain or storage failed.
    #[error(transparent)]
    Chain(#[from] ChainError),
}

impl From<l2node_storage::StorageError> for PayloadError {
    fn from(e: l2node_storage::StorageError) -> Self {
        Self::Chain(e.into())
    }
}

/// Builds the payload `req` asks for; nothing is stored.
pub fn build_payload(
    chain: &Chain,
    pool: &Pool,
    req: PayloadRequest,
) -> Result<BuiltPayload, PayloadError> {
    let storage = chain.storage();
    let number = storage
        .block_number(&req.parent)?
        .ok_or(PayloadError::UnknownParent(req.parent))?;
    let parent = storage
        .header(number)?
        .ok_or(PayloadError::UnknownParent(req.parent))?;
    let spec = chain.spec();
    let candidates: Vec<_> = match &req.transactions {
        Some(raw) => raw
            .iter()
            .map(|bytes| {
                let tx = decode_raw(bytes)
                    .map_err(|e| PayloadError::InvalidTransaction(e.to_string()))?;
                tx.try_into_recovered().map_err(|_| {
                    PayloadError::InvalidTransaction(
                        "invalid sender: the signature does not recover".into(),
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        None => pool
            .best(spec.next_base_fee(&parent))
            .iter()
            .map(|t| t.tx.clone())
            .collect(),
    };
    let exact = req.transactions.is_some();
    let state = storage.state_at(Some(number))?;
    let attrs = BuildAttributes {
        timestamp: req.timestamp,
        beneficiary: req.fee_recipient,
        extra_data: req.extra_data.unwrap_or_default(),
        gas_limit: parent.gas_limit,
        prev_randao: req.prev_randao,
        parent_beacon_block_root: req.parent_beacon_block_root.unwrap_or_default(),
        ..Default::default()
    };
    let wanted = candidates.len();
    let built = executor::build_block(&spec, &state, &parent, attrs, candidates.into_iter())
        .map_err(|source| ChainError::Exec {
            number: number + 1,
            source,
        })?;
    drop(state);
    if exact {
        if let Some((hash, reason)) = built.invalid.first() {
            return Err(PayloadError::InvalidTransaction(format!(
                "transaction {hash} cannot be included: {reason}"
            )));
        }
        if built.transactions.len() != wanted {
            return Err(PayloadError::InvalidTransaction(format!(
                "only {} of the {wanted} transactions fit the block's gas",
                built.transactions.len()
            )));
        }
    }
    let root = storage
        .with_trie_at(number, |base| {
            let mut overlay = trie::OverlayTrie::new(base);
            trie::apply_changes(&mut overlay, &built.changes)
        })?
        .map_err(|first| {
            PayloadError::InvalidTransaction(format!(
                "no state trie for block {number}: this node reads the state trie from block {first} on (--rpc-eth-proof-window); build on block {first} or later"
            ))
        })?
        .map_err(|e| ChainError::Storage(e.into()))?;
    let base_fee = built.header.base_fee_per_gas.unwrap_or_default();
    let value = built
        .transactions
        .iter()
        .zip(&built.tx_gas_used)
        .map(|(tx, gas)| {
            let tip = tx.effective_tip_per_gas(base_fee).unwrap_or_default();
            U256::from(tip) * U256::from(*gas)
        })
        .sum();
    let mut header = built.header;
    header.state_root = root;
    let withdrawals = spec
        .is_shanghai_active_at_timestamp(header.timestamp)
        .then(Default::default);
    Ok(BuiltPayload {
        block: Block {
            header,
            body: BlockBody {
                transactions: built
                    .transactions
                    .into_iter()
                    .map(|t| t.into_inner())
                    .collect(),
                ommers: vec![],
                withdrawals,
            },
        },
        value,
        requests: built.requests,
    })
}

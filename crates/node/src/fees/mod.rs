//! Fee suggestions with their standard meaning (eth_gasPrice, eth_maxPriorityFeePerGas,
//! eth_feeHistory): geth's gas price oracle, cached per head, and the fee history.
//!
//! On a Karma chain the samples leave out premium-path transactions (effective gas price at or
//! above the premium threshold), as geth's oracle already leaves out some transactions: a
//! premium tip is a penalty paid by a sender without quota, not a market price, and a wallet
//! that copied it would make a Karma holder pay the premium without knowing. So after blocks of
//! premium transactions the suggestions stay at what gasless transactions paid, and the default
//! flows of cast, viem, ethers, web3.py and MetaMask stay on the gasless path. This is the
//! network's one deviation from geth's suggestions; [`Sampling::All`] (the
//! `--fee-suggestions-include-premium` flag) restores the plain behaviour.

pub mod premium;
pub mod pricing;

use std::sync::Arc;

use alloy_consensus::{ReceiptEnvelope, Transaction as _, TxEnvelope};
use alloy_eips::BlockNumberOrTag;
use alloy_primitives::B256;
use alloy_rpc_types_eth::FeeHistory;
use parking_lot::Mutex;

use crate::chain::{Chain, ChainError};
use crate::constants::{
    FEE_HISTORY_MAX_BLOCKS, FEE_HISTORY_MAX_PERCENTILES, GPO_BLOCKS, GPO_PERCENTILE,
};
use crate::miner::PendingBlock;
use l2node_storage::{StorageError, StoredBlock};

/// Why a fee query was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum FeeError {
    /// More reward percentiles than allowed.
    #[error(
        "rewardPercentiles has {0} entries; at most {FEE_HISTORY_MAX_PERCENTILES} are allowed"
    )]
    TooManyPercentiles(usize),
    /// Percentiles out of 0..=100 or not increasing.
    #[error("rewardPercentiles must be increasing values between 0 and 100")]
    BadPercentiles,
    /// `newestBlock` is a number after the head.
    #[error("newestBlock {newest} is beyond the head {head}")]
    BeyondHead {
        /// The requested block.
        newest: u64,
        /// The head.
        head: u64,
    },
    /// A block in the range is not held.
    #[error("header not found")]
    HeaderNotFound,
    /// Storage failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Building the pending block failed.
    #[error(transparent)]
    Chain(#[from] ChainError),
}

/// Which mined transactions the fee suggestions sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sampling {
    /// Leave out premium-path transactions on a Karma chain (the default; see the module docs).
    #[default]
    GaslessOnly,
    /// Every transaction, as geth samples them.
    All,
}

/// The fee oracle of one chain.
#[derive(Debug)]
pub struct FeeOracle {
    chain: Arc<Chain>,
    /// Transactions whose effective gas price reaches this are left out of the samples: the
    /// premium threshold on a Karma chain sampled [`Sampling::GaslessOnly`], else none.
    premium_from: Option<u128>,
    /// The suggested tip of the head with this hash: it only changes with a new block.
    tip: Mutex<Option<(B256, u128)>>,
}

impl FeeOracle {
    /// An oracle over `chain` that samples as `sampling` says.
    pub fn new(chain: Arc<Chain>, sampling: Sampling) -> Self {
        let premium_from = match sampling {
            Sampling::All => None,
            Sampling::GaslessOnly => chain
                .spec()
                .karma
                .as_ref()
                .map(|k| k.premium_threshold.saturating_to::<u128>()),
        };
        Self {
            chain,
            premium_from,
            tip: Mutex::new(None),
        }
    }

    /// The tip of a mined transaction as a sample: `None` for one left out (premium).
    fn sample(&self, tx: &TxEnvelope, base_fee: Option<u64>) -> Option<u128> {
        let tip = tip_of(tx, base_fee);
        let price = tip + u128::from(base_fee.unwrap_or_default());
        match self.premium_from {
            Some(threshold) if price >= threshold => None,
            _ => Some(tip),
        }
    }

    /// The suggested tip if it is already known for the current head.
    pub fn cached_tip(&self) -> Option<u128> {
        let head = self.chain.head().hash;
        self.tip
            .lock()
            .and_then(|(hash, tip)| (hash == head).then_some(tip))
    }

    /// geth's gas price oracle: the `GPO_PERCENTILE`th percentile of the cheapest tips of the
    /// last `GPO_BLOCKS` blocks (premium transactions left out, see [`Sampling`]); zero when
    /// recent blocks carry no paying transactions. Computed once per head.
    pub fn suggested_tip(&self) -> Result<u128, StorageError> {
        if let Some(tip) = self.cached_tip() {
            return Ok(tip);
        }
        let head = self.chain.head();
        let storage = self.chain.storage();
        let top = head.header.number;
        let mut tips = Vec::new();
        for n in top.saturating_sub(GPO_BLOCKS - 1)..=top {
            let Some(block) = storage.block(n)? else {
                continue;
            };
            let mut block_tips: Vec<u128> = block
                .body
                .transactions
                .iter()
                .filter_map(|t| self.sample(t, block.header.base_fee_per_gas))
                .collect();
            block_tips.sort_unstable();
            tips.extend(block_tips.into_iter().take(3));
        }
        tips.sort_unstable();
        let tip = match tips.len() {
            0 => 0,
            len => tips[(len - 1) * GPO_PERCENTILE / 100],
        };
        *self.tip.lock() = Some((head.hash, tip));
        Ok(tip)
    }

    /// eth_feeHistory: `count` blocks ending at `newest` (N+1 base fees: the last is the next
    /// block's). `pending` builds the block after the head, asked for only when `newest` is
    /// `pending`.
    pub fn fee_history(
        &self,
        count: u64,
        newest: BlockNumberOrTag,
        percentiles: Option<&[f64]>,
        pending: impl FnOnce() -> Result<Arc<PendingBlock>, ChainError>,
    ) -> Result<FeeHistory, FeeError> {
        if count == 0 {
            return Ok(FeeHistory::default());
        }
        let count = count.min(FEE_HISTORY_MAX_BLOCKS);
        // geth leaves `reward` out unless percentiles are asked for.
        let percentiles = percentiles.filter(|p| !p.is_empty());
        if let Some(p) = percentiles {
            if p.len() > FEE_HISTORY_MAX_PERCENTILES {
                return Err(FeeError::TooManyPercentiles(p.len()));
            }
            if p.iter().any(|v| !(0.0..=100.0).contains(v)) || p.windows(2).any(|w| w[0] > w[1]) {
                return Err(FeeError::BadPercentiles);
            }
        }
        let head = self.chain.head().header.number;
        let newest = match newest {
            BlockNumberOrTag::Number(n) if n > head => {
                return Err(FeeError::BeyondHead { newest: n, head })
            }
            // Like geth, `pending` ends with the block the sequencer would build next.
            BlockNumberOrTag::Pending => head + 1,
            tag => self.chain.resolve_tag(tag).unwrap_or(head),
        };
        let pending = (newest > head).then(pending).transpose()?;
        let oldest = newest + 1 - count.min(newest + 1);
        let storage = self.chain.storage();
        let mut history = FeeHistory {
            oldest_block: oldest,
            ..Default::default()
        };
        let mut rewards = Vec::new();
        let mut last = None;
        let mut any_blobs = false;
        for n in oldest..=newest {
            let (block, pending_receipts) = match &pending {
                Some(p) if n == p.block.header.number => (p.block.clone(), Some(&p.receipts)),
                _ => (storage.block(n)?.ok_or(FeeError::HeaderNotFound)?, None),
            };
            let h = &block.header;
            history
                .base_fee_per_gas
                .push(h.base_fee_per_gas.unwrap_or_default() as u128);
            history.gas_used_ratio.push(if h.gas_limit == 0 {
                0.0
            } else {
                h.gas_used as f64 / h.gas_limit as f64
            });
            let spec = self.chain.spec();
            let blob_params = spec.blob_params_at(h.timestamp);
            any_blobs |= blob_params.is_some();
            history
                .base_fee_per_blob_gas
                .push(blob_base_fee(&spec, h).unwrap_or_default());
            history.blob_gas_used_ratio.push(match blob_params {
                Some(p) if p.max_blob_gas_per_block() > 0 => {
                    h.blob_gas_used.unwrap_or_default() as f64 / p.max_blob_gas_per_block() as f64
                }
                _ => 0.0,
            });
            if let Some(p) = percentiles {
                let receipts = match pending_receipts {
                    Some(r) => r.clone(),
                    None => storage.receipts(n)?.unwrap_or_default(),
                };
                rewards.push(self.block_rewards(&block, &receipts, p));
            }
            last = Some(block.header);
        }
        if let Some(h) = last {
            let spec = self.chain.spec();
            history
                .base_fee_per_gas
                .push(spec.next_base_fee(&h) as u128);
            // The next block's blob base fee, under the blob parameters of its fork (at least
            // one second after its parent).
            let next = spec.blob_params_at(h.timestamp + 1);
            any_blobs |= next.is_some();
            history.base_fee_per_blob_gas.push(next.map_or(0, |p| {
                h.next_block_blob_fee(p)
                    .unwrap_or_else(|| p.calc_blob_fee(0))
            }));
        }
        if !any_blobs {
            // Before Cancun geth leaves the blob fields out.
            history.base_fee_per_blob_gas.clear();
            history.blob_gas_used_ratio.clear();
        }
        if percentiles.is_some() {
            history.reward = Some(rewards);
        }
        Ok(history)
    }
}

impl FeeOracle {
    /// Tips at the given percentiles of gas used in one block (geth's algorithm), over the
    /// sampled transactions only (premium ones left out, see [`Sampling`]); zeros when none is.
    fn block_rewards(
        &self,
        block: &StoredBlock,
        receipts: &[ReceiptEnvelope],
        percentiles: &[f64],
    ) -> Vec<u128> {
        let txs = &block.body.transactions;
        if receipts.len() != txs.len() {
            return vec![0; percentiles.len()];
        }
        let mut prev = 0;
        let mut sorted: Vec<(u128, u64)> = txs
            .iter()
            .zip(receipts)
            .filter_map(|(t, r)| {
                let used = r.cumulative_gas_used() - prev;
                prev = r.cumulative_gas_used();
                Some((self.sample(t, block.header.base_fee_per_gas)?, used))
            })
            .collect();
        if sorted.is_empty() {
            return vec![0; percentiles.len()];
        }
        sorted.sort_unstable_by_key(|(tip, _)| *tip);
        let total: u64 = sorted.iter().map(|(_, used)| used).sum();
        let mut out = Vec::with_capacity(percentiles.len());
        let (mut idx, mut sum) = (0, sorted[0].1);
        for p in percentiles {
            let threshold = (total as f64 * p / 100.0) as u64;
            while sum < threshold && idx < sorted.len() - 1 {
                idx += 1;
                sum += sorted[idx].1;
            }
            out.push(sorted[idx].0);
        }
        out
    }
}

/// The blob base fee of block `h` (eth_blobBaseFee of a head): from its excess blob gas under
/// the blob parameters of its fork; `None` before Cancun.
pub fn blob_base_fee(
    spec: &crate::chainspec::ChainSpec,
    h: &alloy_consensus::Header,
) -> Option<u128> {
    Some(
        spec.blob_params_at(h.timestamp)?
            .calc_blob_fee(h.excess_blob_gas?),
    )
}

/// Effective tip of a mined transaction.
pub fn tip_of(tx: &TxEnvelope, base_fee: Option<u64>) -> u128 {
    tx.effective_tip_per_gas(base_fee.unwrap_or_default())
        .unwrap_or_default()
}

//! Fee suggestions (eth_gasPrice, eth_maxPriorityFeePerGas) and eth_feeHistory, with their
//! standard meaning (they do not see Karma).

use alloy_eips::BlockNumberOrTag;
use alloy_rpc_types_eth::FeeHistory;

use super::{
    error::{RpcError, RpcResult},
    eth::{tip_of, EthRpc},
};
use crate::{
    chain::Chain,
    constants::{FEE_HISTORY_MAX_BLOCKS, FEE_HISTORY_MAX_PERCENTILES, GPO_BLOCKS, GPO_PERCENTILE},
};

/// geth's gas price oracle: the `GPO_PERCENTILE`th percentile of the cheapest tips of the last
/// `GPO_BLOCKS` blocks; zero when recent blocks carry no paying transactions.
pub fn suggested_tip(chain: &Chain) -> RpcResult<u128> {
    let head = chain.head().header.number;
    let storage = chain.storage();
    let mut tips = Vec::new();
    for n in head.saturating_sub(GPO_BLOCKS - 1)..=head {
        let Some(block) = storage.block(n)? else {
            continue;
        };
        let mut block_tips: Vec<u128> = block
            .body
            .transactions
            .iter()
            .map(|t| tip_of(t, block.header.base_fee_per_gas))
            .collect();
        block_tips.sort_unstable();
        tips.extend(block_tips.into_iter().take(3));
    }
    if tips.is_empty() {
        return Ok(0);
    }
    tips.sort_unstable();
    Ok(tips[(tips.len() - 1) * GPO_PERCENTILE / 100])
}

/// eth_feeHistory: `count` blocks ending at `newest` (N+1 base fees: the last is the next block's).
pub fn fee_history(
    rpc: &EthRpc,
    count: u64,
    newest: BlockNumberOrTag,
    percentiles: Option<&[f64]>,
) -> RpcResult<FeeHistory> {
    if count == 0 {
        return Ok(FeeHistory::default());
    }
    let count = count.min(FEE_HISTORY_MAX_BLOCKS);
    if let Some(p) = percentiles {
        if p.len() > FEE_HISTORY_MAX_PERCENTILES {
            return Err(RpcError::InvalidParams(format!(
                "rewardPercentiles has {} entries; at most {FEE_HISTORY_MAX_PERCENTILES} are allowed",
                p.len()
            )));
        }
        if p.iter().any(|v| !(0.0..=100.0).contains(v)) || p.windows(2).any(|w| w[0] > w[1]) {
            return Err(RpcError::InvalidParams(
                "rewardPercentiles must be increasing values between 0 and 100".into(),
            ));
        }
    }
    let head = rpc.chain.head();
    let newest = match newest {
        BlockNumberOrTag::Number(n) if n > head.header.number => {
            return Err(RpcError::InvalidParams(format!(
                "newestBlock {n} is beyond the head {}",
                head.header.number
            )))
        }
        tag => rpc.number_of_tag(tag).unwrap_or(head.header.number),
    };
    let oldest = newest + 1 - count.min(newest + 1);
    let storage = rpc.chain.storage();
    let spec = rpc.chain.spec();
    let mut history = FeeHistory {
        oldest_block: oldest,
        ..Default::default()
    };
    let mut rewards = Vec::new();
    let mut last = None;
    for n in oldest..=newest {
        let block = storage.block(n)?.ok_or(RpcError::HeaderNotFound)?;
        let h = &block.header;
        history
            .base_fee_per_gas
            .push(h.base_fee_per_gas.unwrap_or_default() as u128);
        history.gas_used_ratio.push(if h.gas_limit == 0 {
            0.0
        } else {
            h.gas_used as f64 / h.gas_limit as f64
        });
        history.base_fee_per_blob_gas.push(
            h.excess_blob_gas
                .map(alloy_eips::eip4844::calc_blob_gasprice)
                .unwrap_or_default(),
        );
        history.blob_gas_used_ratio.push(0.0);
        if let Some(p) = percentiles {
            let receipts = storage.receipts(n)?.unwrap_or_default();
            rewards.push(block_rewards(&block, &receipts, p));
        }
        last = Some(block.header);
    }
    if let Some(h) = last {
        history
            .base_fee_per_gas
            .push(spec.next_base_fee(&h) as u128);
        history.base_fee_per_blob_gas.push(
            h.excess_blob_gas
                .map(alloy_eips::eip4844::calc_blob_gasprice)
                .unwrap_or_default(),
        );
    }
    if percentiles.is_some() {
        history.reward = Some(rewards);
    }
    Ok(history)
}

/// Tips at the given percentiles of gas used in one block (geth's algorithm).
fn block_rewards(
    block: &crate::storage::StoredBlock,
    receipts: &[alloy_consensus::ReceiptEnvelope],
    percentiles: &[f64],
) -> Vec<u128> {
    let txs = &block.body.transactions;
    if txs.is_empty() {
        return vec![0; percentiles.len()];
    }
    let mut prev = 0;
    let mut sorted: Vec<(u128, u64)> = txs
        .iter()
        .zip(receipts)
        .map(|(t, r)| {
            let used = r.cumulative_gas_used() - prev;
            prev = r.cumulative_gas_used();
            (tip_of(t, block.header.base_fee_per_gas), used)
        })
        .collect();
    sorted.sort_unstable_by_key(|(tip, _)| *tip);
    let total: u64 = block.header.gas_used;
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

//! The sequencer's block producer: every block period (or on each transaction with
//! `--block-time 0`) it builds a block from the pool, seals it and commits it.

use std::{sync::Arc, time::Duration};

use alloy_primitives::Address;
use alloy_signer_local::PrivateKeySigner;
use tokio::sync::broadcast::error::RecvError;

use crate::{chain::Chain, executor, pool::Pool};

/// How the miner runs.
#[derive(Debug, Clone)]
pub struct MinerConfig {
    /// Block period; zero mines as soon as transactions arrive.
    pub block_time: Duration,
    /// Seal blocks without transactions too.
    pub create_empty_blocks: bool,
    /// The sealing key.
    pub key: PrivateKeySigner,
}

/// Runs the miner until the task is dropped.
pub async fn run(chain: Arc<Chain>, pool: Arc<Pool>, cfg: MinerConfig) {
    let mut pending = pool.subscribe();
    let mut ticker = (!cfg.block_time.is_zero()).then(|| {
        let mut t = tokio::time::interval(cfg.block_time);
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        t
    });
    // With --block-time 0, pending transactions (e.g. restored from the journal) start a block
    // right away; after that each arrival does.
    let mut mined_last = true;
    loop {
        match ticker.as_mut() {
            Some(t) => {
                t.tick().await;
            }
            None if mined_last && pool.status().0 > 0 => {}
            None => match pending.recv().await {
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
        }
        // Everything that arrived meanwhile goes into the same block.
        while pending.try_recv().is_ok() {}
        let (chain2, pool2, cfg2) = (chain.clone(), pool.clone(), cfg.clone());
        let result = tokio::task::spawn_blocking(move || mine_one(&chain2, &pool2, &cfg2)).await;
        mined_last = false;
        match result {
            Ok(Ok(Some((number, txs)))) => {
                mined_last = true;
                tracing::info!(target: "l2node::miner", number, txs, "sealed block")
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => {
                tracing::error!(target: "l2node::miner", error = %e, "block production failed")
            }
            Err(e) => {
                tracing::error!(target: "l2node::miner", error = %e, "block production panicked")
            }
        }
    }
}

/// Builds, seals and commits one block on the current head. Returns the number and
/// transaction count, or `None` when there was nothing to do.
pub fn mine_one(
    chain: &Chain,
    pool: &Pool,
    cfg: &MinerConfig,
) -> Result<Option<(u64, usize)>, crate::chain::ChainError> {
    let spec = chain.spec().clone();
    let head = chain.head();
    let base_fee = spec.next_base_fee(&head.header);
    let candidates = pool.best(base_fee);
    if candidates.is_empty() && !cfg.create_empty_blocks {
        return Ok(None);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let attrs = executor::BuildAttributes {
        timestamp: now.max(head.header.timestamp + 1),
        beneficiary: Address::ZERO,
        extra_data: Default::default(),
        gas_limit: head.header.gas_limit,
        ..Default::default()
    };
    let state = chain.storage().state_at(None)?;
    let number = head.header.number + 1;
    let built = executor::build_block(
        &spec,
        &state,
        &head.header,
        attrs,
        candidates.iter().map(|t| t.tx.clone()),
    )
    .map_err(|source| crate::chain::ChainError::Exec { number, source })?;
    drop(state);
    let invalid: Vec<_> = built.invalid.iter().map(|(h, _)| *h).collect();
    for (hash, reason) in &built.invalid {
        tracing::debug!(target: "l2node::miner", %hash, %reason, "dropped invalid transaction");
    }
    let count = built.transactions.len();
    if count == 0 && !cfg.create_empty_blocks {
        pool.remove(&invalid);
        return Ok(None);
    }
    // Only accounts the block changed can have a new nonce or a lower balance: re-reading
    // those (not every pooled sender) keeps the per-block pool work O(block), not O(pool).
    let touched: Vec<Address> = built.changes.iter().map(|c| c.address).collect();
    chain.commit_built(built, [0u8; 32], &cfg.key)?;
    pool.remove(&invalid);
    let state = chain.storage().state_at(None)?;
    let ctx = crate::node::validation_context(chain);
    if ctx.block_gas_limit == head.header.gas_limit {
        pool.on_new_block_touched(&state, &ctx, &touched);
    } else {
        // A new gas limit can invalidate any sender's transactions.
        pool.on_new_block(&state, &ctx);
    }
    Ok(Some((number, count)))
}

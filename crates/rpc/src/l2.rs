//! The `l2_` namespace (Karma-aware fees) and the `l2admin_` operator methods: thin handlers
//! over the executor's estimate, the Karma service and the premium fee.

use std::sync::Arc;

use alloy_eips::BlockId;
use alloy_primitives::{Address, B256, U256, U64};
use alloy_rpc_types_eth::{state::StateOverride, TransactionRequest};
use jsonrpsee::core::{async_trait, RpcResult as JsonRpcResult};
use l2node_api::{
    types::{FeeState, KarmaStatus, KarmaTierInfo, L2GasEstimate, TransactionExclusion},
    L2AdminApiServer, L2ApiServer,
};

use super::{
    error::{RpcError, RpcResult},
    eth::EthRpc,
};
use l2node_node::chain::{Chain, NextBlock};
use l2node_node::exclusions::Stage;
use l2node_node::executor::CallRequest;
use l2node_node::fees::premium::PremiumQuote;
use l2node_node::karma::{policy, Karma, KarmaError, SenderStatus};
use l2node_node::pool::Pool;
use l2node_node::pool::PoolError;
use l2node_storage::{StateAt, StateReader};
use l2node_trie::state::DenyReason;

impl EthRpc {
    /// One `l2_estimateGas`: the gas limit of eth_estimateGas, then the fee fields of the
    /// sender's Karma state at the next block.
    async fn l2_estimate(
        &self,
        call: TransactionRequest,
        block: Option<BlockId>,
        state_overrides: Option<StateOverride>,
    ) -> RpcResult<L2GasEstimate> {
        let from = call.from.ok_or_else(|| {
            RpcError::InvalidParams(
                "from is required: the Karma state of the sender selects the fees".into(),
            )
        })?;
        let req = Arc::new(CallRequest {
            tx: call,
            state_overrides,
            block_overrides: None,
            gas_cap: self.cfg.gas_cap,
        });
        let next = self.chain.next_block();
        let base_fee = U256::from(next.base_fee);
        let gas = self.estimate_gas_at((block, None), req.clone()).await?;
        // The fee fields are the sender's at the next block, made for each request (its Karma
        // status as the head gives it is kept per head; the pool is read afresh).
        let priority = match self.pool.karma() {
            // A chain without Karma: the standard fee, no gasless path.
            None => self.suggested_tip().await?,
            Some(karma) => {
                karma_priority_fee(&self.chain, &self.pool, karma, &next, &req.tx, from, gas)?
            }
        };
        Ok(L2GasEstimate {
            gas_limit: U64::from(gas),
            base_fee_per_gas: base_fee,
            priority_fee_per_gas: U256::from(priority),
        })
    }

    fn karma(&self) -> RpcResult<Arc<Karma>> {
        self.pool.karma().cloned().ok_or(RpcError::NoKarma)
    }
}

/// Whether a free transaction of `gas` from `from` would be admitted in the next block (pooled
/// transactions included), read in `state` (the head's); the refusal says what to pay when not.
fn gasless_admission(
    state: &StateAt,
    pool: &Pool,
    karma: &Karma,
    next: &NextBlock,
    from: Address,
    gas: u64,
) -> RpcResult<Result<(), KarmaError>> {
    let status = karma.status_next(
        state,
        next.parent.header.number,
        next.parent.hash,
        next.timestamp,
        from,
    )?;
    let pending = pool.pending_units(&from, next.base_fee);
    let units = policy::quota_units(gas, karma.ledger().config().quota_unit_gas);
    Ok(karma.admit_units(&status, pending, false, units))
}

/// The priority fee of a transaction of `gas` from `from` in the next block: 0 when a free
/// transaction of that gas would be admitted now (pool included), else the premium fee.
fn karma_priority_fee(
    chain: &Chain,
    pool: &Pool,
    karma: &Karma,
    next: &NextBlock,
    call: &TransactionRequest,
    from: Address,
    gas: u64,
) -> RpcResult<u128> {
    let state = chain.storage().state_at(Some(next.parent.header.number))?;
    if gasless_admission(&state, pool, karma, next, from, gas)?.is_ok() {
        return Ok(0);
    }
    let nonce = match pool.pending_nonce(from) {
        Some(n) => n,
        None => state.account(from)?.map_or(0, |a| a.nonce),
    };
    let quote = PremiumQuote {
        karma: karma.ledger().config(),
        head_extra_data: &next.parent.header.extra_data,
        chain_id: next.chain_id,
    };
    Ok(quote.priority_fee(call, from, nonce, gas))
}

impl EthRpc {
    /// The tip a filled transaction (`eth_fillTransaction`, `eth_sendTransaction`) gets when the
    /// caller named none: on a Karma chain 0 while the sender's free path is open, and the
    /// Karma refusal (what to pay) otherwise: the node never fills a premium fee nobody asked
    /// for, so viem (which fills through `eth_fillTransaction`) falls back to the chain's own
    /// fee estimator or tells its user. Elsewhere the oracle's suggestion.
    pub(super) async fn fill_tip(&self, from: Address, gas: u64) -> RpcResult<u128> {
        let Some(karma) = self.pool.karma().cloned() else {
            return self.suggested_tip().await;
        };
        let (chain, pool) = (self.chain.clone(), self.pool.clone());
        self.bounded(move || {
            let next = chain.next_block();
            let state = chain.storage().state_at(Some(next.parent.header.number))?;
            gasless_admission(&state, &pool, &karma, &next, from, gas)?
                .map_err(|refusal| RpcError::Pool(PoolError::Karma(refusal)))?;
            Ok(0)
        })
        .await
    }
}

impl EthRpc {
    /// The exclusion record of `hash`, in Linea's shape.
    async fn exclusion(&self, hash: B256) -> RpcResult<Option<TransactionExclusion>> {
        let Some(exclusions) = self.pool.exclusions().cloned() else {
            return Ok(None);
        };
        // The same bytes sent again may have been taken since: a pooled or mined transaction
        // has no exclusion, whatever an earlier attempt left on record.
        if self.pool.get(&hash).is_some() {
            return Ok(None);
        }
        let chain = self.chain.clone();
        let record = super::eth::blocking(move || {
            if chain.storage().tx_location(&hash)?.is_some() {
                return Ok(None);
            }
            Ok(exclusions.get(&hash)?)
        })
        .await?;
        Ok(record.map(|e| TransactionExclusion {
            tx_hash: e.tx_hash,
            from: e.from,
            nonce: U64::from(e.nonce),
            tx_rejection_stage: match e.stage {
                Stage::Rpc => "RPC",
                Stage::P2p => "P2P",
                Stage::Sequencer => "SEQUENCER",
            }
            .to_owned(),
            reason_message: e.reason,
            block_number: U64::from(e.block_number),
            // `2026-11-24 10:00:00 UTC` -> `2026-11-24T10:00:00Z`
            timestamp: l2node_node::karma::utc(e.timestamp)
                .replacen(' ', "T", 1)
                .replace(" UTC", "Z"),
        }))
    }
}

/// The answer of `l2_getKarmaStatus` for `status` with `pending` units in the pool.
fn karma_status(karma: &Karma, status: &SenderStatus, pending: u64) -> KarmaStatus {
    let st = &status.state;
    let used = st.usage.used.saturating_add(pending);
    let quota = st.quota();
    // Gasless when a one-unit free transaction would be admitted now.
    let gasless = karma.admit_units(status, pending, false, 1).is_ok();
    let (id, name, per_epoch) = status
        .tier
        .as_ref()
        .map_or((0, "none".to_owned(), 0), |(i, t)| {
            (*i, t.name.clone(), t.tx_per_epoch)
        });
    KarmaStatus {
        karma: status.balance,
        tier: KarmaTierInfo {
            id: U64::from(id),
            name,
            tx_per_epoch: U64::from(per_epoch),
        },
        quota: U64::from(quota),
        bonus: U64::from(st.usage.bonus),
        used: U64::from(used),
        remaining: U64::from(quota.saturating_sub(used)),
        epoch: U64::from(st.epoch),
        epoch_ends_at: U64::from(status.epoch_ends_at),
        denied: st.deny.is_some(),
        deny_reason: st.deny.map(|d| {
            match d.reason {
                DenyReason::QuotaExceeded => "quotaExceeded",
                DenyReason::RlnViolation => "rlnViolation",
                DenyReason::Operator => "operator",
            }
            .to_owned()
        }),
        denied_until: st.deny.map(|d| {
            U64::from(if d.until_epoch == u64::MAX {
                u64::MAX
            } else {
                karma.ledger().epochs().ends_at(d.until_epoch)
            })
        }),
        fee_state: if gasless {
            FeeState::Gasless
        } else {
            FeeState::Premium
        },
    }
}

#[async_trait]
impl L2ApiServer for EthRpc {
    async fn estimate_gas(
        &self,
        call: TransactionRequest,
        block: Option<BlockId>,
        state_overrides: Option<StateOverride>,
    ) -> JsonRpcResult<L2GasEstimate> {
        Ok(self.l2_estimate(call, block, state_overrides).await?)
    }

    async fn linea_estimate_gas(
        &self,
        call: TransactionRequest,
        block: Option<BlockId>,
        state_overrides: Option<StateOverride>,
    ) -> JsonRpcResult<L2GasEstimate> {
        Ok(self.l2_estimate(call, block, state_overrides).await?)
    }

    async fn transaction_exclusion_status(
        &self,
        tx_hash: B256,
    ) -> JsonRpcResult<Option<TransactionExclusion>> {
        Ok(self.exclusion(tx_hash).await?)
    }

    async fn linea_transaction_exclusion_status(
        &self,
        tx_hash: B256,
    ) -> JsonRpcResult<Option<TransactionExclusion>> {
        Ok(self.exclusion(tx_hash).await?)
    }

    async fn karma_status(
        &self,
        address: Address,
        block: Option<BlockId>,
    ) -> JsonRpcResult<KarmaStatus> {
        let karma = self.karma()?;
        let id = block.unwrap_or(BlockId::latest());
        let latest = matches!(id, BlockId::Number(tag) if tag.is_latest() || tag.is_pending());
        let (state, header) = self.state_for(Some(id))?;
        let (chain, pool) = (self.chain.clone(), self.pool.clone());
        let status = self
            .bounded(move || {
                // latest / pending: what the next transaction would meet (the next block, pool
                // included); an older block: as of that block, in its epoch.
                let (timestamp, pending) = if latest {
                    let next = chain.next_block();
                    (next.timestamp, pool.pending_units(&address, next.base_fee))
                } else {
                    (header.timestamp, 0)
                };
                let status = karma.status_next(
                    &state,
                    header.number,
                    header.hash_slow(),
                    timestamp,
                    address,
                )?;
                Ok(karma_status(&karma, &status, pending))
            })
            .await?;
        Ok(status)
    }
}

/// The `l2admin_` handlers.
#[derive(Debug, Clone)]
pub(super) struct L2AdminRpc {
    /// The Karma service (`None` on a chain without Karma: every method says so).
    pub(super) karma: Option<Arc<Karma>>,
}

impl L2AdminRpc {
    fn karma(&self) -> RpcResult<&Karma> {
        self.karma.as_deref().ok_or(RpcError::NoKarma)
    }

    /// Adds `address` to the operator deny list (until `until_epoch`), or removes it; a write
    /// transaction, so off the async runtime.
    async fn set_denied(
        &self,
        address: Address,
        until_epoch: Option<u64>,
        remove: bool,
    ) -> RpcResult<bool> {
        let karma = self.karma.clone().ok_or(RpcError::NoKarma)?;
        super::eth::blocking(move || Ok(karma.set_operator_denied(address, until_epoch, remove)?))
            .await
    }
}

#[async_trait]
impl L2AdminApiServer for L2AdminRpc {
    async fn add_to_deny_list(
        &self,
        address: Address,
        until_epoch: Option<U64>,
    ) -> JsonRpcResult<bool> {
        Ok(self
            .set_denied(address, until_epoch.map(|e| e.to::<u64>()), false)
            .await?)
    }

    async fn remove_from_deny_list(&self, address: Address) -> JsonRpcResult<bool> {
        Ok(self.set_denied(address, None, true).await?)
    }

    async fn set_kill_switch(&self, on: bool) -> JsonRpcResult<bool> {
        let karma = self.karma()?;
        karma.set_kill_switch(on);
        Ok(karma.gasless_enabled())
    }
}

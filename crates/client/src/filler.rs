//! [`L2FeeFiller`]: an alloy `TxFiller` that fills the gas limit and the EIP-1559 fees from
//! `l2_estimateGas`, so an alloy provider follows the network's rules with one layer:
//! `ProviderBuilder::new().filler(L2FeeFiller).wallet(w).connect_http(url)`.

use alloy_network::{Network, TransactionBuilder};
use alloy_provider::{
    fillers::{FillerControlFlow, TxFiller},
    Provider, SendableTx,
};
use alloy_transport::{TransportErrorKind, TransportResult};
use l2node_api::types::L2GasEstimate;

use crate::quote::max_fee;

/// Fills `gas`, `maxFeePerGas` and `maxPriorityFeePerGas` from `l2_estimateGas`, asked when the
/// transaction is filled (right before it is signed), so each send gets a fresh quote.
#[derive(Debug, Clone, Copy, Default)]
pub struct L2FeeFiller;

/// The filled values.
#[derive(Debug, Clone, Copy)]
pub struct L2Fees {
    gas_limit: u64,
    max_fee_per_gas: u128,
    max_priority_fee_per_gas: u128,
}

impl<N: Network> TxFiller<N> for L2FeeFiller {
    type Fillable = L2Fees;

    fn status(&self, tx: &N::TransactionRequest) -> FillerControlFlow {
        if tx.from().is_none() {
            return FillerControlFlow::missing("L2FeeFiller", vec!["from"]);
        }
        if tx.gas_limit().is_some()
            && tx.max_fee_per_gas().is_some()
            && tx.max_priority_fee_per_gas().is_some()
        {
            return FillerControlFlow::Finished;
        }
        FillerControlFlow::Ready
    }

    fn fill_sync(&self, _tx: &mut SendableTx<N>) {}

    async fn prepare<P: Provider<N>>(
        &self,
        provider: &P,
        tx: &N::TransactionRequest,
    ) -> TransportResult<Self::Fillable> {
        let estimate: L2GasEstimate = provider
            .client()
            .request("l2_estimateGas", (tx.clone(),))
            .await?;
        let base = u128::try_from(estimate.base_fee_per_gas)
            .map_err(|_| TransportErrorKind::custom_str("baseFeePerGas exceeds 128 bits"))?;
        let priority = u128::try_from(estimate.priority_fee_per_gas)
            .map_err(|_| TransportErrorKind::custom_str("priorityFeePerGas exceeds 128 bits"))?;
        let max_fee_per_gas =
            max_fee(base, priority).map_err(|e| TransportErrorKind::custom_str(&e.to_string()))?;
        Ok(L2Fees {
            gas_limit: estimate.gas_limit.to(),
            max_fee_per_gas,
            max_priority_fee_per_gas: priority,
        })
    }

    async fn fill(
        &self,
        fees: Self::Fillable,
        mut tx: SendableTx<N>,
    ) -> TransportResult<SendableTx<N>> {
        if let Some(builder) = tx.as_mut_builder() {
            builder.set_gas_limit(fees.gas_limit);
            builder.set_max_fee_per_gas(fees.max_fee_per_gas);
            builder.set_max_priority_fee_per_gas(fees.max_priority_fee_per_gas);
        }
        Ok(tx)
    }
}

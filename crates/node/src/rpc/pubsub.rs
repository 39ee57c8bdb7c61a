//! eth_subscribe over WebSocket: newHeads, logs and newPendingTransactions.
//!
//! Each subscription reads from a bounded broadcast channel; a subscriber that falls more than
//! the buffer behind is closed (and the reason logged) so it can never slow block production.

use std::sync::Arc;

use alloy_rpc_types_eth::Filter;
use jsonrpsee::{
    core::{async_trait, SubscriptionResult},
    types::ErrorObjectOwned,
    PendingSubscriptionSink, SubscriptionMessage, SubscriptionSink,
};
use l2node_api::EthPubSubApiServer;
use serde::Serialize;
use tokio::sync::broadcast::{self, error::RecvError};

use super::{convert, error::RpcError};
use crate::{chain::Chain, logs::collect_block_logs, pool::Pool};

/// The pub/sub handlers.
pub(super) struct PubSubRpc {
    chain: Arc<Chain>,
    pool: Arc<Pool>,
}

impl PubSubRpc {
    /// Handlers over a chain and pool.
    pub(super) fn new(chain: Arc<Chain>, pool: Arc<Pool>) -> Self {
        Self { chain, pool }
    }
}

fn bad_params(msg: String) -> ErrorObjectOwned {
    RpcError::InvalidParams(msg).into()
}

#[async_trait]
impl EthPubSubApiServer for PubSubRpc {
    async fn subscribe_to(
        &self,
        pending: PendingSubscriptionSink,
        kind: String,
        params: Option<serde_json::Value>,
    ) -> SubscriptionResult {
        match kind.as_str() {
            "newHeads" => {
                let rx = self.chain.subscribe();
                let sink = pending.accept().await?;
                tokio::spawn(forward(sink, rx, |b: Arc<crate::chain::NewBlock>| {
                    vec![convert::rpc_header(&b.block)]
                }));
            }
            "logs" => {
                let filter: Filter = match params {
                    None | Some(serde_json::Value::Null) => Filter::default(),
                    Some(v) => match serde_json::from_value(v) {
                        Ok(f) => f,
                        Err(e) => {
                            pending
                                .reject(bad_params(format!("invalid logs filter object: {e}")))
                                .await;
                            return Ok(());
                        }
                    },
                };
                let rx = self.chain.subscribe();
                let sink = pending.accept().await?;
                tokio::spawn(forward(sink, rx, move |b: Arc<crate::chain::NewBlock>| {
                    let mut out = Vec::new();
                    if filter.matches_bloom(b.block.header.logs_bloom) {
                        collect_block_logs(&filter, &b.block, &b.receipts, &mut out);
                    }
                    out
                }));
            }
            "newPendingTransactions" => {
                let rx = self.pool.subscribe();
                let sink = pending.accept().await?;
                tokio::spawn(forward(sink, rx, |h| vec![h]));
            }
            other => {
                pending
                    .reject(bad_params(format!(
                        "unsupported subscription \"{other}\": use newHeads, logs or newPendingTransactions"
                    )))
                    .await;
            }
        }
        Ok(())
    }
}

/// Sends each item `map` makes of each message until the client leaves or falls behind.
async fn forward<T: Clone, I: Serialize>(
    sink: SubscriptionSink,
    mut rx: broadcast::Receiver<T>,
    mut map: impl FnMut(T) -> Vec<I> + Send,
) {
    loop {
        tokio::select! {
            _ = sink.closed() => return,
            msg = rx.recv() => match msg {
                Ok(item) => {
                    for out in map(item) {
                        let Ok(msg) = SubscriptionMessage::new(sink.method_name(), sink.subscription_id(), &out) else { continue };
                        if sink.send(msg).await.is_err() {
                            return;
                        }
                    }
                }
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(target: "l2node::rpc", subscription = ?sink.subscription_id(), missed = n, "closing subscription: the client fell too far behind");
                    return;
                }
                Err(RecvError::Closed) => return,
            }
        }
    }
}

//! eth_subscribe over WebSocket: newHeads, logs, newPendingTransactions and syncing.
//!
//! Each subscription reads from a bounded broadcast channel; a subscriber that falls more than
//! the buffer behind is closed (and the reason logged) so it can never slow block production.

use std::sync::Arc;

use alloy_consensus::ReceiptEnvelope;
use alloy_rpc_types_eth::Filter;
use jsonrpsee::{
    core::{async_trait, SubscriptionResult},
    types::ErrorObjectOwned,
    PendingSubscriptionSink, SubscriptionMessage, SubscriptionSink,
};
use l2node_api::{types::Syncing, EthPubSubApiServer};
use serde::Serialize;
use tokio::sync::{
    broadcast::{self, error::RecvError},
    watch,
};

use super::{convert, error::RpcError};
use l2node_node::chain::{Chain, NewBlock, Reorg};
use l2node_node::logs::collect_block_logs;
use l2node_node::p2p::NetStatus;
use l2node_node::pool::Pool;

/// The pub/sub handlers.
pub(super) struct PubSubRpc {
    chain: Arc<Chain>,
    pool: Arc<Pool>,
    net: Arc<NetStatus>,
}

impl PubSubRpc {
    /// Handlers over a chain, a pool and the peer-to-peer status.
    pub(super) fn new(chain: Arc<Chain>, pool: Arc<Pool>, net: Arc<NetStatus>) -> Self {
        Self { chain, pool, net }
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
        kind: Option<serde_json::Value>,
        params: Option<serde_json::Value>,
    ) -> SubscriptionResult {
        const KINDS: &str = "newHeads, logs, newPendingTransactions or syncing";
        let kind = match kind {
            Some(serde_json::Value::String(kind)) => kind,
            None | Some(serde_json::Value::Null) => {
                let msg = format!(
                    "missing value for required argument 0 (subscription): expected {KINDS}"
                );
                pending.reject(bad_params(msg)).await;
                return Ok(());
            }
            Some(_) => {
                let msg =
                    format!("invalid argument 0 (subscription): expected a string, one of {KINDS}");
                pending.reject(bad_params(msg)).await;
                return Ok(());
            }
        };
        match kind.as_str() {
            "newHeads" => {
                let rx = self.chain.subscribe();
                let sink = pending.accept().await?;
                tokio::spawn(forward(sink, rx, |b: Arc<l2node_node::chain::NewBlock>| {
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
                                .reject(bad_params(format!(
                                    "invalid argument 1 (filter): {}; expected a logs filter \
                                     object {{address, topics}}",
                                    l2node_api::plain_error(&e)
                                )))
                                .await;
                            return Ok(());
                        }
                    },
                };
                let (blocks, reorgs) = (self.chain.subscribe(), self.chain.subscribe_reorgs());
                let sink = pending.accept().await?;
                tokio::spawn(forward_logs(sink, blocks, reorgs, filter));
            }
            "newPendingTransactions" => {
                let rx = self.pool.subscribe();
                let sink = pending.accept().await?;
                tokio::spawn(forward(sink, rx, |h| vec![h]));
            }
            "syncing" => {
                let rx = self.net.watch_sync();
                let sink = pending.accept().await?;
                tokio::spawn(forward_sync(sink, rx, self.chain.clone()));
            }
            other => {
                pending
                    .reject(bad_params(format!(
                        "unsupported subscription \"{other}\": use {KINDS}"
                    )))
                    .await;
            }
        }
        Ok(())
    }
}

/// The `syncing` subscription, as geth sends it: `{"syncing": true, "status": {..}}` when a sync
/// starts and `false` when it ends.
async fn forward_sync(
    sink: SubscriptionSink,
    mut rx: watch::Receiver<Option<l2node_node::p2p::SyncProgress>>,
    chain: Arc<Chain>,
) {
    let mut syncing = rx.borrow_and_update().is_some();
    loop {
        tokio::select! {
            _ = sink.closed() => return,
            changed = rx.changed() => {
                if changed.is_err() {
                    return;
                }
                let progress = *rx.borrow_and_update();
                // Only a start or an end is news (progress is what eth_syncing is for).
                if progress.is_some() == syncing {
                    continue;
                }
                syncing = progress.is_some();
                let out = match convert::sync_status(progress, chain.head().header.number) {
                    Syncing::Progress(p) => serde_json::json!({ "syncing": true, "status": p }),
                    Syncing::No => serde_json::Value::Bool(false),
                };
                let Ok(msg) = SubscriptionMessage::new(sink.method_name(), sink.subscription_id(), &out) else { continue };
                if sink.send(msg).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The `logs` subscription: each matching log of each new block, and, when a reorganisation
/// takes blocks back, their matching logs again with `removed: true` (oldest block first, as
/// geth), before the logs of the blocks that replace them.
async fn forward_logs(
    sink: SubscriptionSink,
    mut blocks: broadcast::Receiver<Arc<NewBlock>>,
    mut reorgs: broadcast::Receiver<Arc<Reorg>>,
    filter: Filter,
) {
    let matching =
        |block: &l2node_storage::StoredBlock, receipts: &[ReceiptEnvelope], out: &mut Vec<_>| {
            if filter.matches_bloom(block.header.logs_bloom) {
                collect_block_logs(&filter, block, receipts.iter().map(|r| r.logs()), out);
            }
        };
    loop {
        let mut logs = Vec::new();
        // Biased: a reorganisation is announced before the new chain's blocks, and its
        // removals must reach the client before their logs.
        let received = tokio::select! {
            biased;
            _ = sink.closed() => return,
            reorg = reorgs.recv() => reorg.map(|r| {
                // Blocks announced before the reorganisation may still wait in the other
                // channel: the ones it took back are sent (and then retracted), the rest (the
                // new chain) after the removals.
                let mut later = Vec::new();
                while let Ok(b) = blocks.try_recv() {
                    if r.removed.iter().any(|(old, _)| old.hash == b.block.hash) {
                        matching(&b.block, &b.receipts, &mut logs);
                    } else {
                        later.push(b);
                    }
                }
                let mut removed = Vec::new();
                for (block, receipts) in &r.removed {
                    matching(block, receipts, &mut removed);
                }
                removed.iter_mut().for_each(|l| l.removed = true);
                logs.extend(removed);
                for b in later {
                    matching(&b.block, &b.receipts, &mut logs);
                }
            }),
            block = blocks.recv() => block.map(|b| matching(&b.block, &b.receipts, &mut logs)),
        };
        match received {
            Ok(()) => {}
            Err(RecvError::Lagged(n)) => {
                tracing::warn!(target: "l2node::rpc", subscription = ?sink.subscription_id(), missed = n, "closing subscription: the client fell too far behind");
                return;
            }
            Err(RecvError::Closed) => return,
        }
        for log in logs {
            let Ok(msg) =
                SubscriptionMessage::new(sink.method_name(), sink.subscription_id(), &log)
            else {
                continue;
            };
            if sink.send(msg).await.is_err() {
                return;
            }
        }
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

//! The network's three health checks of a node: its block number is within
//! `max_lag` blocks of a trusted reference, `eth_syncing` is `false`, and it has peers.

use crate::{Client, ClientError};

/// Default largest lag behind the reference, in blocks.
pub const DEFAULT_MAX_LAG: u64 = 2;

/// One node's health.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// The node's head.
    pub block_number: u64,
    /// The reference's head; `None` when the reference did not answer (then the block-number
    /// check fails: a node cannot be shown to be in step with a reference that is gone).
    pub reference_block_number: Option<u64>,
    /// `|reference - node| <= max_lag`.
    pub block_number_ok: bool,
    /// `eth_syncing` is `false`.
    pub syncing_ok: bool,
    /// Connected peers.
    pub peers: u64,
    /// `net_peerCount > 0`.
    pub peers_ok: bool,
}

impl Health {
    /// All three checks pass.
    pub fn healthy(&self) -> bool {
        self.block_number_ok && self.syncing_ok && self.peers_ok
    }
}

/// Runs the three checks on `node` against `reference` (the node itself when `None`).
pub async fn check(
    node: &Client,
    reference: Option<&Client>,
    max_lag: u64,
) -> Result<Health, ClientError> {
    let block_number = node.block_number().await?;
    let reference_block_number = match reference {
        Some(r) => r.block_number().await.ok(),
        None => Some(block_number),
    };
    let syncing_ok = !node.syncing().await?;
    let peers = node.peer_count().await?;
    Ok(Health {
        block_number,
        reference_block_number,
        block_number_ok: reference_block_number
            .is_some_and(|r| block_number.abs_diff(r) <= max_lag),
        syncing_ok,
        peers,
        peers_ok: peers > 0,
    })
}

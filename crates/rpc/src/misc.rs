//! The small namespaces: net, web3, admin and txpool.

use std::{collections::BTreeMap, sync::Arc};

use alloy_consensus::Transaction as _;
use alloy_primitives::{keccak256, Address, Bytes, B256, U64};
use jsonrpsee::core::{async_trait, RpcResult};
use l2node_api::{
    types::{
        AdminNodeInfo, AdminPeer, AdminPeerNetwork, RpcTransaction, TxpoolContent,
        TxpoolContentFrom, TxpoolInspect, TxpoolStatus,
    },
    AdminApiServer, NetApiServer, TxpoolApiServer, Web3ApiServer,
};

use super::convert;
use l2node_node::chain::Chain;
use l2node_node::p2p::NetStatus;
use l2node_node::pool::{Pool, PooledTx};

/// net_, web3_ and admin_ handlers.
#[derive(Clone)]
pub(super) struct NetRpc {
    /// The chain (id, genesis, head).
    pub chain: Arc<Chain>,
    /// The peer-to-peer layer's status.
    pub net: Arc<NetStatus>,
}

fn client_version() -> String {
    format!(
        "l2node/v{}/{}/rust",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS
    )
}

impl NetApiServer for NetRpc {
    fn version(&self) -> RpcResult<String> {
        Ok(self.chain.spec().chain_id.to_string())
    }

    fn listening(&self) -> RpcResult<bool> {
        Ok(self.net.is_listening())
    }

    fn peer_count(&self) -> RpcResult<U64> {
        Ok(U64::from(self.net.peer_count()))
    }
}

impl Web3ApiServer for NetRpc {
    fn client_version(&self) -> RpcResult<String> {
        Ok(client_version())
    }

    fn sha3(&self, data: Bytes) -> RpcResult<B256> {
        Ok(keccak256(&data))
    }
}

impl AdminApiServer for NetRpc {
    fn peers(&self) -> RpcResult<Vec<AdminPeer>> {
        Ok(self
            .net
            .peers()
            .into_iter()
            .map(|p| AdminPeer {
                enode: format!("{}/p2p/{}", p.remote_addr, p.id),
                name: p.agent.unwrap_or_default(),
                caps: p.protocols,
                network: AdminPeerNetwork {
                    local_address: p.local_addr,
                    remote_address: p.remote_addr,
                    inbound: p.inbound,
                    trusted: false,
                    is_static: p.bootnode,
                },
                protocols: serde_json::json!({ "l2node": { "head": p.head } }),
                id: p.id,
            })
            .collect())
    }

    fn node_info(&self) -> RpcResult<AdminNodeInfo> {
        let head = self.chain.head();
        let listen_addr = self.net.listen_addrs();
        Ok(AdminNodeInfo {
            enode: listen_addr.first().cloned().unwrap_or_default(),
            id: self.net.local_id().unwrap_or_default(),
            name: client_version(),
            listen_addr,
            protocols: serde_json::json!({ "l2node": {
                "network": self.chain.spec().chain_id,
                "genesis": self.chain.genesis_hash(),
                "head": head.hash,
                "headNumber": head.header.number,
                "syncing": self.net.sync().is_some(),
            }}),
        })
    }
}

/// txpool_ handlers.
pub(super) struct TxpoolRpc {
    /// The pool.
    pub pool: Arc<Pool>,
}

#[async_trait]
impl TxpoolApiServer for TxpoolRpc {
    async fn status(&self) -> RpcResult<TxpoolStatus> {
        let (pending, queued) = self.pool.status();
        Ok(TxpoolStatus {
            pending: U64::from(pending),
            queued: U64::from(queued),
        })
    }

    async fn content(&self) -> RpcResult<TxpoolContent> {
        let content = self.pool.content();
        Ok(TxpoolContent {
            pending: by_sender(content.pending, as_rpc),
            queued: by_sender(content.queued, as_rpc),
        })
    }

    async fn content_from(&self, address: Address) -> RpcResult<TxpoolContentFrom> {
        let mut content = self.pool.content_from(address);
        let take = |side: &mut SenderTxs| {
            side.remove(&address)
                .map(|txs| by_nonce(txs, as_rpc))
                .unwrap_or_default()
        };
        Ok(TxpoolContentFrom {
            pending: take(&mut content.pending),
            queued: take(&mut content.queued),
        })
    }

    async fn inspect(&self) -> RpcResult<TxpoolInspect> {
        let content = self.pool.content();
        Ok(TxpoolInspect {
            pending: by_sender(content.pending, summary),
            queued: by_sender(content.queued, summary),
        })
    }
}

/// Pooled transactions by sender, then nonce.
type SenderTxs = BTreeMap<Address, BTreeMap<u64, Arc<PooledTx>>>;

/// geth's txpool keys: the sender EIP-55 checksummed, the nonce in decimal.
fn by_sender<T>(
    side: SenderTxs,
    show: fn(&PooledTx) -> T,
) -> BTreeMap<String, BTreeMap<String, T>> {
    side.into_iter()
        .map(|(sender, txs)| (sender.to_checksum(None), by_nonce(txs, show)))
        .collect()
}

fn by_nonce<T>(txs: BTreeMap<u64, Arc<PooledTx>>, show: fn(&PooledTx) -> T) -> BTreeMap<String, T> {
    txs.into_iter()
        .map(|(n, t)| (n.to_string(), show(&t)))
        .collect()
}

fn as_rpc(t: &PooledTx) -> RpcTransaction {
    RpcTransaction(convert::rpc_pending_tx(&t.tx))
}

/// geth's `txpool_inspect` line: `"<to>: <value> wei + <gas> gas × <fee cap> wei"`, with
/// `contract creation` for a creation.
fn summary(t: &PooledTx) -> String {
    let tx = t.tx.inner();
    let to = match tx.to() {
        Some(to) => to.to_checksum(None),
        None => "contract creation".to_owned(),
    };
    format!(
        "{to}: {} wei + {} gas \u{d7} {} wei",
        tx.value(),
        tx.gas_limit(),
        tx.max_fee_per_gas()
    )
}

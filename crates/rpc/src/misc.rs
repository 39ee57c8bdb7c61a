//! The small namespaces: net, web3, admin and txpool.

use std::{collections::BTreeMap, sync::Arc};

use alloy_primitives::{keccak256, Bytes, B256, U64};
use jsonrpsee::core::{async_trait, RpcResult};
use l2node_api::{
    types::{
        AdminNodeInfo, AdminPeer, AdminPeerNetwork, RpcTransaction, TxpoolContent, TxpoolStatus,
    },
    AdminApiServer, NetApiServer, TxpoolApiServer, Web3ApiServer,
};

use super::convert;
use l2node_node::chain::Chain;
use l2node_node::p2p::NetStatus;
use l2node_node::pool::Pool;

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
        let convert = |m: BTreeMap<
            alloy_primitives::Address,
            BTreeMap<u64, Arc<l2node_node::pool::PooledTx>>,
        >| {
            m.into_iter()
                .map(|(sender, txs)| {
                    (
                        sender.to_checksum(None),
                        txs.into_iter()
                            .map(|(n, t)| {
                                (
                                    n.to_string(),
                                    RpcTransaction(convert::rpc_pending_tx(&t.tx)),
                                )
                            })
                            .collect(),
                    )
                })
                .collect()
        };
        Ok(TxpoolContent {
            pending: convert(content.pending),
            queued: convert(content.queued),
        })
    }
}

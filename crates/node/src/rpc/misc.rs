//! The small namespaces: net, web3 and txpool.

use std::{collections::BTreeMap, sync::Arc};

use alloy_primitives::{keccak256, Bytes, B256, U64};
use jsonrpsee::core::{async_trait, RpcResult};
use l2node_api::{
    types::{RpcTransaction, TxpoolContent, TxpoolStatus},
    NetApiServer, TxpoolApiServer, Web3ApiServer,
};

use super::convert;
use crate::pool::Pool;

/// net_ and web3_ handlers.
pub(super) struct NetRpc {
    /// Chain id, answered by net_version.
    pub chain_id: u64,
}

impl NetApiServer for NetRpc {
    fn version(&self) -> RpcResult<String> {
        Ok(self.chain_id.to_string())
    }

    fn listening(&self) -> RpcResult<bool> {
        Ok(true)
    }

    fn peer_count(&self) -> RpcResult<U64> {
        Ok(U64::ZERO)
    }
}

impl Web3ApiServer for NetRpc {
    fn client_version(&self) -> RpcResult<String> {
        Ok(format!(
            "l2node/v{}/{}/rust",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS
        ))
    }

    fn sha3(&self, data: Bytes) -> RpcResult<B256> {
        Ok(keccak256(&data))
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
        let convert =
            |m: BTreeMap<alloy_primitives::Address, BTreeMap<u64, Arc<crate::pool::PooledTx>>>| {
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

//! The `debug_` raw-encoding methods (geth's `debug_getRaw*`) and `rpc_modules`.

use std::collections::BTreeMap;

use alloy_consensus::Block;
use alloy_eips::{eip2718::Encodable2718, BlockId};
use alloy_primitives::{Bytes, B256};
use alloy_rlp::Encodable;
use jsonrpsee::core::{async_trait, RpcResult};
use l2node_api::{DebugApiServer, RpcApiServer};

use super::{error::RpcError, EthRpc, Namespace};

impl EthRpc {
    /// The number of `id`, or geth's "header #N not found" / "header 0x.. not found".
    fn held(&self, id: BlockId, what: &str) -> RpcResult<u64> {
        let missing = || match id {
            BlockId::Hash(h) => RpcError::NotFound(format!("{what} {} not found", h.block_hash)),
            BlockId::Number(tag) => RpcError::NotFound(match tag.as_number() {
                Some(n) => format!("{what} #{n} not found"),
                None => format!("{what} {tag} not found"),
            }),
        };
        let n = match id {
            BlockId::Hash(h) => self
                .chain
                .storage()
                .block_number(&h.block_hash)
                .map_err(RpcError::from)?,
            BlockId::Number(tag) => self.chain.resolve_tag(tag),
        };
        Ok(n.ok_or_else(missing)?)
    }
}

fn rlp(value: &impl Encodable) -> Bytes {
    let mut out = Vec::with_capacity(value.length());
    value.encode(&mut out);
    out.into()
}

#[async_trait]
impl DebugApiServer for EthRpc {
    async fn raw_header(&self, block: BlockId) -> RpcResult<Bytes> {
        let n = self.held(block, "header")?;
        let header = self.chain.storage().header(n).map_err(RpcError::from)?;
        Ok(rlp(&header.ok_or_else(|| {
            RpcError::NotFound(format!("header #{n} not found"))
        })?))
    }

    async fn raw_block(&self, block: BlockId) -> RpcResult<Bytes> {
        let n = self.held(block, "block")?;
        let b = self
            .chain
            .storage()
            .block(n)
            .map_err(RpcError::from)?
            .ok_or_else(|| RpcError::NotFound(format!("block #{n} not found")))?;
        Ok(rlp(&Block {
            header: b.header,
            body: b.body,
        }))
    }

    async fn raw_receipts(&self, block: BlockId) -> RpcResult<Vec<Bytes>> {
        let n = self.held(block, "block")?;
        let receipts = self
            .chain
            .storage()
            .receipts(n)
            .map_err(RpcError::from)?
            .unwrap_or_default();
        Ok(receipts.iter().map(|r| r.encoded_2718().into()).collect())
    }

    async fn raw_transaction(&self, hash: B256) -> RpcResult<Bytes> {
        let storage = self.chain.storage();
        if let Some((n, i)) = storage.tx_location(&hash).map_err(RpcError::from)? {
            let block = storage.block(n).map_err(RpcError::from)?;
            if let Some(tx) = block.and_then(|b| b.body.transactions.into_iter().nth(i as usize)) {
                return Ok(tx.encoded_2718().into());
            }
        }
        Ok(self
            .pool
            .get(&hash)
            .map(|t| t.raw.clone())
            .unwrap_or_default())
    }
}

/// `rpc_modules` of one transport: the namespaces it serves.
pub(super) struct RpcModules(pub(super) Vec<Namespace>);

impl RpcApiServer for RpcModules {
    fn modules(&self) -> RpcResult<BTreeMap<String, String>> {
        Ok(self
            .0
            .iter()
            .map(|n| n.prefix().to_owned())
            .chain(["rpc".to_owned()])
            .map(|n| (n, "1.0".to_owned()))
            .collect())
    }
}

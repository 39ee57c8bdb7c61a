//! Helpers: start a dev node, sign transactions, talk JSON-RPC.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use alloy_consensus::TxEip1559;
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{Address, Bytes, TxKind, U256};
use alloy_signer_local::PrivateKeySigner;
use jsonrpsee::{
    core::client::ClientT,
    http_client::{HttpClient, HttpClientBuilder},
    rpc_params,
};
use l2node_launch::NodeConfig;
use l2node_launch::NodeHandle;
use l2node_node::chainspec::ChainSpec;
use l2node_node::dev;
use l2node_node::test_utils;

/// A dev node with its temp dir.
// The addresses are for tests that open raw connections; not every build of the suite does.
#[allow(dead_code)]
pub(crate) struct TestNode {
    pub handle: Option<NodeHandle>,
    pub dir: tempfile::TempDir,
    pub http: HttpClient,
    pub http_addr: SocketAddr,
    pub ws_addr: SocketAddr,
}

pub(crate) fn dev_config(dir: &std::path::Path, block_time: Duration) -> NodeConfig {
    NodeConfig::dev(dir, block_time)
}

/// The dev chain without its `karma` section: a plain EVM chain (no gasless rules).
pub(crate) fn plain_dev_spec() -> Arc<ChainSpec> {
    let mut genesis = dev::dev_genesis(0);
    genesis.config.extra_fields.remove("karma");
    Arc::new(ChainSpec::from_genesis(genesis).unwrap())
}

impl TestNode {
    /// A dev node mining on every transaction.
    pub(crate) async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    pub(crate) async fn start_with(tweak: impl FnOnce(&mut NodeConfig)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = dev_config(dir.path(), Duration::ZERO);
        tweak(&mut cfg);
        Self::start_in(dir, cfg).await
    }

    pub(crate) async fn start_in(dir: tempfile::TempDir, cfg: NodeConfig) -> Self {
        let handle = l2node_launch::spawn(cfg).await.unwrap();
        let http_addr = handle.rpc.http_addr.unwrap();
        let ws_addr = handle.rpc.ws_addr.unwrap();
        let http = HttpClientBuilder::default()
            .build(format!("http://{http_addr}"))
            .unwrap();
        Self {
            handle: Some(handle),
            dir,
            http,
            http_addr,
            ws_addr,
        }
    }

    pub(crate) async fn stop(mut self) -> tempfile::TempDir {
        self.handle.take().unwrap().stop().await;
        self.dir
    }

    pub(crate) async fn request<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        params: jsonrpsee::core::params::ArrayParams,
    ) -> T {
        self.http
            .request(method, params)
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"))
    }

    pub(crate) async fn block_number(&self) -> u64 {
        let n: U256 = self.request("eth_blockNumber", rpc_params![]).await;
        n.to()
    }

    /// Waits for a receipt (mined) of `hash`.
    pub(crate) async fn wait_receipt(&self, hash: alloy_primitives::B256) -> serde_json::Value {
        eventually(&format!("a receipt of {hash}"), || async move {
            let r: serde_json::Value = self
                .request("eth_getTransactionReceipt", rpc_params![hash])
                .await;
            (!r.is_null()).then_some(r)
        })
        .await
    }
}

/// Asks `probe` every 25 ms until it answers `Some`, for up to [`WAIT_DEADLINE`]; panics
/// naming `what` it waited for.
pub(crate) async fn eventually<T, F: std::future::Future<Output = Option<T>>>(
    what: &str,
    mut probe: impl FnMut() -> F,
) -> T {
    let started = std::time::Instant::now();
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(
            started.elapsed() < WAIT_DEADLINE,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// How long the tests wait for something the node does in the background (a block mined, a
/// peer's block imported): a few milliseconds alone, seconds when the whole suite shares two
/// cores. A wait that succeeds costs no more for being long.
pub(crate) const WAIT_DEADLINE: Duration = Duration::from_secs(60);

/// Dev account `i`.
pub(crate) fn account(i: usize) -> PrivateKeySigner {
    dev::dev_accounts()[i].clone()
}

/// A signed EIP-1559 transaction.
pub(crate) fn signed_tx(
    key: &PrivateKeySigner,
    nonce: u64,
    to: TxKind,
    value: U256,
    input: Bytes,
    gas: u64,
) -> Bytes {
    let tx = TxEip1559 {
        chain_id: l2node_node::constants::DEV_CHAIN_ID,
        nonce,
        gas_limit: gas,
        max_fee_per_gas: 1_000_000_000,
        max_priority_fee_per_gas: 0,
        to,
        value,
        input,
        access_list: Default::default(),
    };
    test_utils::sign(key, tx).encoded_2718().into()
}

/// A signed plain transfer of `value` wei.
pub(crate) fn transfer(key: &PrivateKeySigner, nonce: u64, to: Address, value: u64) -> Bytes {
    signed_tx(
        key,
        nonce,
        TxKind::Call(to),
        U256::from(value),
        Bytes::new(),
        21_000,
    )
}

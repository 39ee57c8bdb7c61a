//! Chain behaviour through the real RPC: mining, receipts, restart.

use alloy_primitives::{Address, B256, U256};
use jsonrpsee::{core::client::ClientT, rpc_params};

use crate::common::{account, transfer, TestNode};

#[tokio::test]
async fn transfer_is_mined_with_a_receipt() {
    let node = TestNode::start().await;
    let to = Address::repeat_byte(0x42);
    let hash: B256 = node
        .request(
            "eth_sendRawTransaction",
            rpc_params![transfer(&account(0), 0, to, 1234)],
        )
        .await;
    let receipt = node.wait_receipt(hash).await;
    assert_eq!(receipt["status"], "0x1");
    assert_eq!(receipt["gasUsed"], "0x5208");
    let balance: U256 = node
        .request("eth_getBalance", rpc_params![to, "latest"])
        .await;
    assert_eq!(balance, U256::from(1234));
    let old: U256 = node.request("eth_getBalance", rpc_params![to, "0x0"]).await;
    assert_eq!(old, U256::ZERO, "state at genesis is still served");
    node.stop().await;
}

#[tokio::test]
async fn chain_resumes_after_restart() {
    let node = TestNode::start().await;
    let to = Address::repeat_byte(0x43);
    let mut last = B256::ZERO;
    for nonce in 0..5 {
        last = node
            .request(
                "eth_sendRawTransaction",
                rpc_params![transfer(&account(1), nonce, to, 1)],
            )
            .await;
    }
    node.wait_receipt(last).await;
    let head = node.block_number().await;
    let block: serde_json::Value = node
        .request("eth_getBlockByNumber", rpc_params!["latest", false])
        .await;
    let dir = node.stop().await;

    let cfg = crate::common::dev_config(dir.path(), std::time::Duration::ZERO);
    let node = TestNode::start_in(dir, cfg).await;
    assert_eq!(node.block_number().await, head);
    let again: serde_json::Value = node
        .request("eth_getBlockByNumber", rpc_params!["latest", false])
        .await;
    assert_eq!(block["hash"], again["hash"]);
    let balance: U256 = node
        .request("eth_getBalance", rpc_params![to, "latest"])
        .await;
    assert_eq!(balance, U256::from(5));
    node.stop().await;
}

/// A node whose RPC port is taken fails to start and stops what it had started: its miner and
/// background tasks let go of the chain, so the data directory opens again at once.
#[tokio::test]
async fn a_node_that_cannot_bind_its_rpc_port_stops_what_it_started() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = crate::common::dev_config(dir.path(), std::time::Duration::from_secs(1));
    cfg.create_empty_blocks = true;
    cfg.rpc_server.http_addr = taken.local_addr().unwrap();
    assert!(l2node_launch::spawn(cfg).await.is_err());
    // Aborted tasks are dropped when the runtime next runs them.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let cfg = crate::common::dev_config(dir.path(), std::time::Duration::ZERO);
    let node = TestNode::start_in(dir, cfg).await;
    assert_eq!(node.block_number().await, 0);
    node.stop().await;
}

#[tokio::test]
async fn get_logs_limits_name_a_smaller_range_to_retry() {
    let node = TestNode::start_with(|c| {
        c.rpc.max_logs_range = 2;
        c.rpc.max_logs_per_response = 0;
    })
    .await;
    for nonce in 0..3 {
        let hash: B256 = node
            .request(
                "eth_sendRawTransaction",
                rpc_params![transfer(&account(2), nonce, Address::ZERO, 1)],
            )
            .await;
        node.wait_receipt(hash).await;
    }
    let err = node
        .http
        .request::<serde_json::Value, _>(
            "eth_getLogs",
            rpc_params![serde_json::json!({"fromBlock": "0x0", "toBlock": "latest"})],
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("-32005") || err.contains("max block range"),
        "{err}"
    );
    assert!(
        err.contains("toBlock 0x1"),
        "suggests a range that fits: {err}"
    );
    let ok: Vec<serde_json::Value> = node
        .request(
            "eth_getLogs",
            rpc_params![serde_json::json!({"fromBlock": "0x0", "toBlock": "0x1"})],
        )
        .await;
    assert!(ok.is_empty());
    node.stop().await;
}

#[tokio::test]
async fn block_sized_transactions_of_one_sender_do_not_delay_others() {
    // Before Osaka: EIP-7825 keeps a transaction under 2^24 gas, less than a dev block.
    let node = TestNode::start_with(|c| {
        c.block_time = std::time::Duration::from_secs(1);
        let mut genesis = l2node_node::dev::dev_genesis(1);
        genesis.config.osaka_time = None;
        c.spec =
            std::sync::Arc::new(l2node_node::chainspec::ChainSpec::from_genesis(genesis).unwrap());
    })
    .await;
    let limit = l2node_node::constants::DEV_GAS_LIMIT;
    let big = account(1);
    let mut bigs = Vec::new();
    for nonce in 0..4 {
        let raw = crate::common::signed_tx(
            &big,
            nonce,
            alloy_primitives::TxKind::Call(big.address()),
            U256::ZERO,
            Default::default(),
            limit,
        );
        let hash: B256 = node
            .request("eth_sendRawTransaction", rpc_params![raw])
            .await;
        bigs.push(hash);
    }
    let hash: B256 = node
        .request(
            "eth_sendRawTransaction",
            rpc_params![transfer(&account(0), 0, Address::repeat_byte(0x44), 1)],
        )
        .await;
    let number = |r: &serde_json::Value| {
        u64::from_str_radix(&r["blockNumber"].as_str().unwrap()[2..], 16).unwrap()
    };
    let honest = number(&node.wait_receipt(hash).await);
    let mut big_blocks = Vec::new();
    for h in bigs {
        big_blocks.push(number(&node.wait_receipt(h).await));
    }
    // One block-sized transaction fits a block; the transfer behind them goes into the next
    // block built after it arrived, not after all of them.
    big_blocks.dedup();
    assert_eq!(big_blocks.len(), 4, "one per block: {big_blocks:?}");
    assert!(
        honest < big_blocks[3],
        "transfer in block {honest}, big ones in {big_blocks:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_endpoint_serves_prometheus_text() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // A free port for the exporter (it binds by address, not through a listener we hand it).
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let node = TestNode::start_with(|c| {
        c.metrics = Some(l2node_node::metrics::MetricsConfig { addr });
    })
    .await;
    let hash: B256 = node
        .request(
            "eth_sendRawTransaction",
            rpc_params![transfer(&account(0), 0, Address::repeat_byte(0x45), 1)],
        )
        .await;
    node.wait_receipt(hash).await;
    // The gauges are refreshed every METRICS_REFRESH: read until the head is there.
    let started = std::time::Instant::now();
    let body = loop {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut body = String::new();
        s.read_to_string(&mut body).await.unwrap();
        if body.lines().any(|l| l == "l2node_head_number 1") {
            break body;
        }
        assert!(
            started.elapsed() < crate::common::WAIT_DEADLINE,
            "no head in:\n{body}"
        );
        tokio::time::sleep(l2node_node::constants::METRICS_REFRESH / 2).await;
    };
    // The recorder is global to the test process: counters also count other tests' nodes.
    let value = |series: &str| -> f64 {
        body.lines()
            .find_map(|l| l.strip_prefix(series).and_then(|v| v.trim().parse().ok()))
            .unwrap_or_else(|| panic!("{series} missing from:\n{body}"))
    };
    assert_eq!(value("l2node_head_number "), 1.0);
    assert_eq!(value("l2node_peers "), 0.0);
    assert_eq!(value("l2node_pool_transactions{state=\"pending\"} "), 0.0);
    assert!(value("l2node_head_age_seconds ") >= 0.0);
    assert!(value("l2node_blocks_sealed_total ") >= 1.0);
    assert!(value("l2node_rpc_requests_total{method=\"eth_sendRawTransaction\"} ") >= 1.0);
    assert!(value("l2node_karma_admissions_total{outcome=\"gasless\"} ") >= 1.0);
    assert!(body.contains(
        "l2node_rpc_request_duration_seconds_bucket{method=\"eth_sendRawTransaction\",le="
    ));
}

#[test]
fn grafana_dashboard_queries_only_metrics_the_node_exports() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/grafana/l2node.json"
    );
    let dash: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let exported = [
        l2node_node::metrics::HEAD_NUMBER,
        l2node_node::metrics::HEAD_AGE,
        l2node_node::metrics::PEERS,
        l2node_node::metrics::SYNC_LAG,
        l2node_node::metrics::POOL_TXS,
        l2node_node::metrics::RPC_REQUESTS,
        l2node_node::metrics::RPC_LATENCY,
        l2node_node::metrics::BLOCKS_SEALED,
        l2node_node::metrics::BLOCK_SEAL_TIME,
        l2node_node::metrics::BLOCKS_IMPORTED,
        l2node_node::metrics::BLOCK_IMPORT_TIME,
        l2node_node::metrics::KARMA_ADMISSIONS,
    ];
    for panel in dash["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            let names: Vec<&str> = expr
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with("l2node_"))
                .collect();
            assert!(!names.is_empty(), "{expr}");
            for name in names {
                let base = name.trim_end_matches("_bucket");
                assert!(exported.contains(&base), "{expr}: {name} is not exported");
            }
        }
    }
}

//! The client against a real dev node: gasless and premium sends, quota exhaustion, a retry
//! that re-estimates, and the alloy filler.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use alloy_primitives::{Address, U256};
use alloy_signer_local::PrivateKeySigner;
use jsonrpsee::{
    core::client::ClientT,
    http_client::HttpClientBuilder,
    server::{RpcModule, ServerBuilder},
    types::ErrorObjectOwned,
};
use l2node_client::{Call, Client, ClientError, FeeState, L2FeeFiller, PremiumReason, Sent};
use l2node_launch::NodeConfig;
use l2node_launch::NodeHandle;
use l2node_node::dev;

struct Node {
    handle: NodeHandle,
    url: String,
    _dir: tempfile::TempDir,
}

async fn node() -> Node {
    let dir = tempfile::tempdir().unwrap();
    let cfg = NodeConfig::dev(dir.path(), Duration::ZERO);
    let handle = l2node_launch::spawn(cfg).await.unwrap();
    let url = format!("http://{}", handle.rpc.http_addr.unwrap());
    Node {
        handle,
        url,
        _dir: dir,
    }
}

fn account(i: usize) -> PrivateKeySigner {
    dev::dev_accounts()[i].clone()
}

/// Waits up to a minute (the suite shares two cores) for `hash`'s successful receipt.
async fn mined(client: &Client, hash: alloy_primitives::B256) {
    let started = std::time::Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        if let Some(r) = client.receipt(hash).await.unwrap() {
            assert!(r.status(), "{hash} reverted");
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{hash} not mined");
}

#[tokio::test(flavor = "multi_thread")]
async fn gasless_send_over_http_and_ws() {
    let node = node().await;
    let ws = format!("ws://{}", node.handle.rpc.ws_addr.unwrap());
    for (i, url) in [node.url.as_str(), ws.as_str()].into_iter().enumerate() {
        let client = Client::connect(url).await.unwrap();
        let key = account(0);
        let call = Call::new(key.address(), Address::repeat_byte(0x11)).value(U256::from(1));
        let quote = client.estimate(&call).await.unwrap();
        assert_eq!(
            (quote.state, quote.gas_limit, quote.max_fee_per_gas),
            (FeeState::Gasless, 21_000, 0)
        );
        let sent = client.send(&call, &key).await.unwrap();
        assert_eq!(
            (sent.attempts, sent.quote.state),
            (1, FeeState::Gasless),
            "transport {i}"
        );
        mined(&client, sent.hash).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn quota_exhaustion_turns_premium_and_a_premium_send_gets_in() {
    let node = node().await;
    let client = Client::connect(&node.url).await.unwrap();
    // Dev account 8: the entry tier, 2 free transactions a day.
    let key = account(8);
    let call = Call::new(key.address(), Address::repeat_byte(0x22));
    for _ in 0..2 {
        let sent = client.send(&call, &key).await.unwrap();
        assert!(sent.quote.is_gasless());
        mined(&client, sent.hash).await;
    }
    let quote = client.estimate(&call).await.unwrap();
    let FeeState::Premium {
        reason,
        window_resets_at,
    } = quote.state
    else {
        panic!("{quote:?}")
    };
    assert_eq!(reason, PremiumReason::QuotaExceeded);
    assert!(window_resets_at > 0);
    assert!(quote.priority_fee_per_gas >= 12_000_000_000);
    let sent = client.send(&call, &key).await.unwrap();
    assert!(!sent.quote.is_gasless());
    mined(&client, sent.hash).await;
    // The premium bought a tier of bonus quota back.
    assert!(client.estimate(&call).await.unwrap().is_gasless());

    // No Karma at all: premium with its reason.
    let none = Call::new(account(9).address(), Address::ZERO);
    let q = client.estimate(&none).await.unwrap();
    assert!(
        matches!(
            q.state,
            FeeState::Premium {
                reason: PremiumReason::NoKarma,
                ..
            }
        ),
        "{q:?}"
    );
}

/// A JSON-RPC proxy in front of the node that refuses the first eth_sendRawTransaction (as a
/// node would when the nonce was taken meanwhile; with `deliver`, after passing it on, as a
/// node does with a transaction it already holds when a client sends it again) and counts
/// l2_estimateGas calls.
async fn failing_proxy(
    upstream: &str,
    estimates: Arc<AtomicUsize>,
    deliver: bool,
) -> (String, jsonrpsee::server::ServerHandle) {
    let up = Arc::new(HttpClientBuilder::default().build(upstream).unwrap());
    let sends = Arc::new(AtomicUsize::new(0));
    let mut module = RpcModule::new(());
    for method in [
        "eth_chainId",
        "l2_estimateGas",
        "l2_getKarmaStatus",
        "eth_getTransactionCount",
        "eth_getTransactionByHash",
        "eth_sendRawTransaction",
    ] {
        let (up, estimates, sends) = (up.clone(), estimates.clone(), sends.clone());
        module
            .register_async_method(method, move |params, _, _| {
                let (up, estimates, sends) = (up.clone(), estimates.clone(), sends.clone());
                async move {
                    if method == "l2_estimateGas" {
                        estimates.fetch_add(1, Ordering::SeqCst);
                    }
                    let params: Vec<serde_json::Value> = params.parse().unwrap_or_default();
                    if method == "eth_sendRawTransaction"
                        && sends.fetch_add(1, Ordering::SeqCst) == 0
                    {
                        if deliver {
                            up.request::<serde_json::Value, _>(method, params)
                                .await
                                .unwrap();
                            return Err(ErrorObjectOwned::owned(
                                -32000,
                                "already known",
                                None::<()>,
                            ));
                        }
                        return Err(ErrorObjectOwned::owned(
                            -32000,
                            "nonce too low: next nonce 1, tx nonce 0",
                            None::<()>,
                        ));
                    }
                    up.request::<serde_json::Value, _>(method, params)
                        .await
                        .map_err(|e| ErrorObjectOwned::owned(-32000, e.to_string(), None::<()>))
                }
            })
            .unwrap();
    }
    let server = ServerBuilder::default().build("127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap();
    (format!("http://{addr}"), server.start(module))
}

/// A send from dev account `index` through [`failing_proxy`] (its first send answered "already
/// known" or refused): the node, what the send answered, and how many estimates were asked.
async fn send_through_failing_proxy(index: usize, already_known: bool) -> (Node, Sent, usize) {
    let node = node().await;
    let estimates = Arc::new(AtomicUsize::new(0));
    let (url, _proxy) = failing_proxy(&node.url, estimates.clone(), already_known).await;
    let key = account(index);
    let sent = Client::connect(&url)
        .await
        .unwrap()
        .send(
            &Call::new(key.address(), Address::repeat_byte(0x30 + index as u8)),
            &key,
        )
        .await
        .unwrap();
    (node, sent, estimates.load(Ordering::SeqCst))
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_after_a_refused_send_re_estimates() {
    let (node, sent, estimates) = send_through_failing_proxy(1, false).await;
    assert_eq!(sent.attempts, 2);
    assert_eq!(estimates, 2, "the retry signed a fresh estimate");
    mined(&Client::connect(&node.url).await.unwrap(), sent.hash).await;
}

/// "already known" is the node holding this very transaction: the send is done, and no second
/// transaction (with the next nonce) moves the value again.
#[tokio::test(flavor = "multi_thread")]
async fn already_known_is_the_transaction_sent_not_a_reason_to_send_another() {
    let (node, sent, estimates) = send_through_failing_proxy(3, true).await;
    assert_eq!(sent.attempts, 1);
    assert_eq!(estimates, 1);
    let direct = Client::connect(&node.url).await.unwrap();
    mined(&direct, sent.hash).await;
    assert_eq!(
        direct.pending_nonce(account(3).address()).await.unwrap(),
        1,
        "one transaction"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn refusal_that_a_new_quote_cannot_fix_is_not_retried() {
    let node = node().await;
    let client = Client::connect(&node.url).await.unwrap();
    let key = account(2);
    // More value than the account holds: "insufficient funds", not retryable.
    let call = Call::new(key.address(), Address::ZERO).value(U256::MAX);
    match client.send(&call, &key).await {
        Err(ClientError::Rpc { .. }) => {}
        other => panic!("{other:?}"),
    }
    // `from` must be the signer.
    assert!(matches!(
        client
            .send(&Call::new(Address::ZERO, Address::ZERO), &key)
            .await,
        Err(ClientError::Signing(_))
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn alloy_provider_with_the_filler_sends_with_l2_fees() {
    use alloy_network::{EthereumWallet, TransactionBuilder};
    use alloy_provider::{Provider, ProviderBuilder};
    let node = node().await;
    for (i, gasless) in [(3usize, true), (9, false)] {
        let key = account(i);
        let provider = ProviderBuilder::new()
            .disable_recommended_fillers()
            .filler(L2FeeFiller)
            .with_simple_nonce_management()
            .fetch_chain_id()
            .wallet(EthereumWallet::from(key.clone()))
            .connect_http(node.url.parse().unwrap());
        let tx = alloy_rpc_types_eth::TransactionRequest::default()
            .with_from(key.address())
            .with_to(Address::repeat_byte(0x44))
            .with_value(U256::from(5));
        let receipt = provider
            .send_transaction(tx)
            .await
            .unwrap()
            .get_receipt()
            .await
            .unwrap();
        assert!(receipt.status());
        assert_eq!(receipt.gas_used, 21_000);
        assert_eq!(
            receipt.effective_gas_price == 0,
            gasless,
            "account {i}: {receipt:?}"
        );
    }
}

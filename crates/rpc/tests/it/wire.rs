//! Wire-level behaviour of the JSON-RPC servers, checked with raw HTTP and raw WebSocket frames.

use std::net::SocketAddr;
use std::time::Duration;

use jsonrpsee::types::ErrorObjectOwned;
use jsonrpsee::{RpcModule, SubscriptionMessage};
use l2node_rpc::{start_rpc_servers, RpcServerConfig, RpcServerHandle};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub(crate) mod raw;
use raw::{parse_reply, raw_http, Reply, Ws};

const BATCH_LIMIT: i64 = 4;
const BODY_LIMIT: u32 = 64 * 1024;
const RESPONSE_LIMIT: u32 = 16 * 1024;

fn module() -> RpcModule<()> {
    let mut m = RpcModule::new(());
    m.register_method("eth_blockNumber", |_, _, _| "0x0")
        .unwrap();
    m.register_method("test_add", |params, _, _| {
        let (a, b): (u64, u64) = params.parse()?;
        Ok::<_, ErrorObjectOwned>(a + b)
    })
    .unwrap();
    m.register_method(
        "txpool_status",
        |_, _, _| json!({ "pending": "0x0", "queued": "0x0" }),
    )
    .unwrap();
    m.register_method("test_big", |_, _, _| {
        "x".repeat(2 * RESPONSE_LIMIT as usize)
    })
    .unwrap();
    m.register_subscription(
        "eth_subscribe",
        "eth_subscription",
        "eth_unsubscribe",
        |params, pending, _, _| async move {
            let kind: String = params.one()?;
            if kind != "newHeads" {
                pending
                    .reject(ErrorObjectOwned::owned(-32602, "unknown kind", None::<()>))
                    .await;
                return Ok(());
            }
            let sink = pending.accept().await?;
            for n in 1..=3u64 {
                let msg: SubscriptionMessage =
                    serde_json::value::to_raw_value(&json!({ "number": format!("{n:#x}") }))?
                        .into();
                sink.send(msg).await?;
            }
            Ok(())
        },
    )
    .unwrap();
    m
}

async fn start_with(tweak: impl FnOnce(&mut RpcServerConfig)) -> RpcServerHandle {
    let mut cfg = RpcServerConfig {
        http_addr: "127.0.0.1:0".parse().unwrap(),
        ws_addr: "127.0.0.1:0".parse().unwrap(),
        max_batch_size: BATCH_LIMIT,
        max_request_body: BODY_LIMIT,
        max_response_body: RESPONSE_LIMIT,
        ws_max_message: BODY_LIMIT,
        ..RpcServerConfig::default()
    };
    tweak(&mut cfg);
    start_rpc_servers(module(), &cfg).await.unwrap()
}

async fn start() -> RpcServerHandle {
    start_with(|_| {}).await
}

async fn post(addr: SocketAddr, body: &str) -> Reply {
    raw_http(
        addr,
        "POST",
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    )
    .await
}

fn http_addr(h: &RpcServerHandle) -> SocketAddr {
    h.http_addr.unwrap()
}

fn error_code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error object: {v}"))
}

fn assert_invalid_request_null_id(v: &Value) {
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert_eq!(error_code(v), -32600, "{v}");
    assert!(v.get("id").is_some_and(Value::is_null), "{v}");
}

// ---- single requests -----------------------------------------------------------------------

#[tokio::test]
async fn single_request_gets_object() {
    let h = start().await;
    let rp = post(
        http_addr(&h),
        r#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":7}"#,
    )
    .await;
    assert_eq!(rp.status, 200);
    assert_eq!(rp.json(), json!({"jsonrpc":"2.0","result":"0x0","id":7}));
}

#[tokio::test]
async fn invalid_json_is_parse_error_with_null_id() {
    let h = start().await;
    for body in [
        r#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#,
        r#"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method""#,
        "not json",
        "",
    ] {
        let rp = post(http_addr(&h), body).await;
        assert_eq!(rp.status, 200, "{body}");
        let v = rp.json();
        assert_eq!(error_code(&v), -32700, "{body}: {v}");
        assert!(v["id"].is_null());
    }
}

#[tokio::test]
async fn malformed_request_objects_are_invalid_request() {
    let h = start().await;
    for body in [
        r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#,
        r#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":{"a":1}}"#,
        r#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":[1]}"#,
        r#"{"jsonrpc":"1.0","method":"eth_blockNumber"}"#,
        "1",
    ] {
        let rp = post(http_addr(&h), body).await;
        assert_eq!(rp.status, 200, "{body}");
        assert_invalid_request_null_id(&rp.json());
    }
    // With a usable id, the error carries it.
    let rp = post(
        http_addr(&h),
        r#"{"jsonrpc":"1.0","method":"eth_blockNumber","id":3}"#,
    )
    .await;
    let v = rp.json();
    assert_eq!(error_code(&v), -32600);
    assert_eq!(v["id"], 3);
    let rp = post(http_addr(&h), r#"{"jsonrpc":"2.0","method":5,"id":4}"#).await;
    assert_eq!(error_code(&rp.json()), -32600);
}

#[tokio::test]
async fn unknown_method_is_32601() {
    let h = start().await;
    let rp = post(
        http_addr(&h),
        r#"{"jsonrpc":"2.0","method":"foobar","id":"1"}"#,
    )
    .await;
    let v = rp.json();
    assert_eq!(error_code(&v), -32601);
    assert_eq!(v["id"], "1");
}

#[tokio::test]
async fn wrong_params_are_32602() {
    let h = start().await;
    let rp = post(
        http_addr(&h),
        r#"{"jsonrpc":"2.0","method":"test_add","params":["x"],"id":1}"#,
    )
    .await;
    assert_eq!(error_code(&rp.json()), -32602);
    let rp = post(
        http_addr(&h),
        r#"{"jsonrpc":"2.0","method":"test_add","params":[2,3],"id":1}"#,
    )
    .await;
    assert_eq!(rp.json()["result"], 5);
}

#[tokio::test]
async fn notification_gets_empty_body() {
    let h = start().await;
    let rp = post(
        http_addr(&h),
        r#"{"jsonrpc":"2.0","method":"eth_blockNumber"}"#,
    )
    .await;
    assert_eq!(rp.status, 200);
    assert!(rp.body.is_empty(), "{:?}", rp.text());
}

// ---- batches -------------------------------------------------------------------------------

#[tokio::test]
async fn batch_gets_array_in_order() {
    let h = start_with(|c| c.max_batch_size = 10).await;
    let rp = post(
        http_addr(&h),
        r#"[{"jsonrpc":"2.0","method":"eth_blockNumber","id":1},
            {"jsonrpc":"2.0","method":"eth_blockNumber"},
            {"jsonrpc":"2.0","method":"foo","id":2},
            {"foo":"boo"},
            {"jsonrpc":"2.0","method":"test_add","params":[1,1],"id":"3"}]"#,
    )
    .await;
    assert_eq!(rp.status, 200);
    let v = rp.json();
    let arr = v
        .as_array()
        .unwrap_or_else(|| panic!("batch answer is an array: {v}"));
    assert_eq!(arr.len(), 4, "{v}");
    assert_eq!(arr[0]["result"], "0x0");
    assert_eq!(error_code(&arr[1]), -32601);
    assert_eq!(arr[1]["id"], 2);
    assert_invalid_request_null_id(&arr[2]);
    assert_eq!(arr[3]["result"], 2);
    assert_eq!(arr[3]["id"], "3");
}

#[tokio::test]
async fn empty_batch_is_invalid_request() {
    let h = start().await;
    let rp = post(http_addr(&h), "[]").await;
    assert_eq!(rp.status, 200);
    let v = rp.json();
    assert!(v.is_object(), "one object, not an array: {v}");
    assert_invalid_request_null_id(&v);
}

#[tokio::test]
async fn invalid_batch_entries_are_each_invalid_request() {
    let h = start().await;
    let v = post(http_addr(&h), "[1]").await.json();
    let arr = v.as_array().expect("array");
    assert_eq!(arr.len(), 1);
    assert_invalid_request_null_id(&arr[0]);

    let v = post(http_addr(&h), "[1,2,3]").await.json();
    let arr = v.as_array().expect("array");
    assert_eq!(arr.len(), 3);
    arr.iter().for_each(assert_invalid_request_null_id);

    // An object id would otherwise turn the entry into a silently dropped notification.
    let v = post(
        http_addr(&h),
        r#"[{"jsonrpc":"2.0","method":"eth_blockNumber","id":{}}]"#,
    )
    .await
    .json();
    let arr = v.as_array().expect("array");
    assert_eq!(arr.len(), 1);
    assert_invalid_request_null_id(&arr[0]);
}

#[tokio::test]
async fn notification_only_batch_gets_empty_body() {
    let h = start().await;
    let rp = post(
        http_addr(&h),
        r#"[{"jsonrpc":"2.0","method":"eth_blockNumber"},{"jsonrpc":"2.0","method":"foo"}]"#,
    )
    .await;
    assert_eq!(rp.status, 200);
    assert!(rp.body.is_empty(), "{:?}", rp.text());
}

fn batch_of(n: usize) -> String {
    let calls: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","method":"eth_blockNumber","id":{i}}}"#))
        .collect();
    format!("[{}]", calls.join(","))
}

#[tokio::test]
async fn batch_over_limit_gets_single_32005() {
    let h = start().await;
    let rp = post(http_addr(&h), &batch_of(BATCH_LIMIT as usize + 1)).await;
    assert_eq!(rp.status, 200);
    let v = rp.json();
    assert!(v.is_object(), "{v}");
    assert_eq!(error_code(&v), -32005);
    assert_eq!(
        v["error"]["message"],
        "Number of requests exceeds max batch size"
    );
    assert!(v["id"].is_null());
    // At the limit is fine.
    let v = post(http_addr(&h), &batch_of(BATCH_LIMIT as usize))
        .await
        .json();
    assert_eq!(v.as_array().unwrap().len(), BATCH_LIMIT as usize);
}

#[tokio::test]
async fn batch_limit_of_one_zero_or_negative_is_unlimited() {
    for limit in [1, 0, -1] {
        let h = start_with(|c| c.max_batch_size = limit).await;
        let v = post(http_addr(&h), &batch_of(50)).await.json();
        assert_eq!(v.as_array().map(Vec::len), Some(50), "limit {limit}: {v}");
    }
}

// ---- HTTP level ----------------------------------------------------------------------------

#[tokio::test]
async fn non_json_content_type_is_415() {
    let h = start().await;
    let body = br#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":1}"#;
    let rp = raw_http(
        http_addr(&h),
        "POST",
        &[("Content-Type", "text/plain")],
        body,
    )
    .await;
    assert_eq!(rp.status, 415);
    let rp = raw_http(http_addr(&h), "POST", &[], body).await;
    assert_eq!(rp.status, 415);
    // Parameters after the media type are fine.
    let rp = raw_http(
        http_addr(&h),
        "POST",
        &[("Content-Type", "application/json; charset=UTF-8")],
        body,
    )
    .await;
    assert_eq!(rp.status, 200);
    assert_eq!(rp.json()["result"], "0x0");
}

#[tokio::test]
async fn other_http_methods_are_405() {
    let h = start().await;
    for method in ["PUT", "DELETE", "PATCH"] {
        let rp = raw_http(
            http_addr(&h),
            method,
            &[("Content-Type", "application/json")],
            b"{}",
        )
        .await;
        assert_eq!(rp.status, 405, "{method}");
    }
}

#[tokio::test]
async fn get_root_describes_endpoint() {
    let h = start().await;
    let rp = raw_http(http_addr(&h), "GET", &[], b"").await;
    assert_eq!(rp.status, 200);
    assert!(rp.header("content-type").unwrap().starts_with("text/plain"));
    let text = rp.text();
    assert!(text.contains("l2node JSON-RPC endpoint"), "{text}");
    assert!(text.contains("POST JSON-RPC 2.0"), "{text}");
}

#[tokio::test]
async fn oversized_body_is_413_with_jsonrpc_error() {
    let h = start().await;
    let padding = "0".repeat(BODY_LIMIT as usize);
    let body =
        format!(r#"{{"jsonrpc":"2.0","method":"eth_blockNumber","params":["{padding}"],"id":1}}"#);
    let rp = post(http_addr(&h), &body).await;
    assert_eq!(rp.status, 413);
    let v = rp.json();
    assert_eq!(error_code(&v), -32005);
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains(&BODY_LIMIT.to_string()), "{msg}");
    assert!(
        msg.contains("--rpc-http-max-request-content-length"),
        "{msg}"
    );
    assert!(v["id"].is_null());
}

#[tokio::test]
async fn oversized_chunked_body_is_413_with_jsonrpc_error() {
    // No Content-Length: the limit must hold while the body streams in.
    let h = start().await;
    let mut s = TcpStream::connect(http_addr(&h)).await.unwrap();
    let head = "POST / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
        Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    s.write_all(head.as_bytes()).await.unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 16 * 1024, " ".repeat(16 * 1024));
    for _ in 0..(BODY_LIMIT as usize / (16 * 1024) + 2) {
        if s.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
    }
    let _ = s.write_all(b"0\r\n\r\n").await;
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut raw)).await;
    let rp = parse_reply(&raw);
    assert_eq!(rp.status, 413);
    assert_eq!(error_code(&rp.json()), -32005);
}

#[tokio::test]
async fn oversized_response_is_32005_naming_limit() {
    let h = start().await;
    let v = post(
        http_addr(&h),
        r#"{"jsonrpc":"2.0","method":"test_big","id":9}"#,
    )
    .await
    .json();
    assert_eq!(error_code(&v), -32005);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&RESPONSE_LIMIT.to_string()),
        "{v}"
    );
    assert_eq!(v["id"], 9);
    // In a batch too: one error object for the whole batch.
    let v = post(
        http_addr(&h),
        r#"[{"jsonrpc":"2.0","method":"eth_blockNumber","id":1},{"jsonrpc":"2.0","method":"test_big","id":2}]"#,
    )
    .await
    .json();
    let arr = v.as_array().expect("array");
    assert_eq!(error_code(&arr[1]), -32005);
}

#[tokio::test]
async fn disallowed_host_is_rejected() {
    let h = start().await;
    let body = br#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":1}"#;
    let ct = ("Content-Type", "application/json");
    let rp = raw_http(
        http_addr(&h),
        "POST",
        &[ct, ("Host", "evil.example:8545")],
        body,
    )
    .await;
    assert_eq!(rp.status, 403);
    for host in ["localhost", "LOCALHOST:8545", "127.0.0.1:1234"] {
        let rp = raw_http(http_addr(&h), "POST", &[ct, ("Host", host)], body).await;
        assert_eq!(rp.status, 200, "{host}");
    }
    // "*" allows any host.
    let h = start_with(|c| c.host_allowlist = vec!["*".into()]).await;
    let rp = raw_http(http_addr(&h), "POST", &[ct, ("Host", "evil.example")], body).await;
    assert_eq!(rp.status, 200);
}

#[tokio::test]
async fn cors_only_for_configured_origins() {
    let preflight = [
        ("Origin", "http://dapp.example"),
        ("Access-Control-Request-Method", "POST"),
        ("Access-Control-Request-Headers", "content-type"),
    ];
    // Default: no origins.
    let h = start().await;
    let rp = raw_http(http_addr(&h), "OPTIONS", &preflight, b"").await;
    assert_eq!(rp.status, 403);
    let rp = raw_http(
        http_addr(&h),
        "POST",
        &[
            ("Content-Type", "application/json"),
            ("Origin", "http://dapp.example"),
        ],
        br#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":1}"#,
    )
    .await;
    assert!(rp.header("access-control-allow-origin").is_none());

    let h = start_with(|c| c.cors_origins = vec!["http://dapp.example".into()]).await;
    let rp = raw_http(http_addr(&h), "OPTIONS", &preflight, b"").await;
    assert!(rp.status == 204 || rp.status == 200, "{}", rp.status);
    assert_eq!(
        rp.header("access-control-allow-origin"),
        Some("http://dapp.example")
    );
    assert!(rp
        .header("access-control-allow-methods")
        .unwrap()
        .contains("POST"));
    let rp = raw_http(
        http_addr(&h),
        "POST",
        &[
            ("Content-Type", "application/json"),
            ("Origin", "http://dapp.example"),
        ],
        br#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":1}"#,
    )
    .await;
    assert_eq!(
        rp.header("access-control-allow-origin"),
        Some("http://dapp.example")
    );
    assert_eq!(rp.json()["result"], "0x0");
}

#[tokio::test]
async fn subscribe_over_http_names_websocket() {
    let h = start().await;
    for method in ["eth_subscribe", "eth_unsubscribe"] {
        let body =
            format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":["newHeads"],"id":1}}"#);
        let v = post(http_addr(&h), &body).await.json();
        assert_eq!(error_code(&v), -32601, "{v}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains("WebSocket"), "{msg}");
        assert!(
            msg.contains(&format!("ws://{}", h.ws_addr.unwrap())),
            "{msg}"
        );
        assert!(msg.contains("eth_newFilter"), "{msg}");
    }
    // Inside a batch as well.
    let v = post(
        http_addr(&h),
        r#"[{"jsonrpc":"2.0","method":"eth_subscribe","params":["newHeads"],"id":1}]"#,
    )
    .await
    .json();
    assert_eq!(error_code(&v[0]), -32601);
}

#[tokio::test]
async fn servers_report_bound_addresses_and_stop() {
    let h = start().await;
    let (http, ws) = (h.http_addr.unwrap(), h.ws_addr.unwrap());
    assert_ne!(http.port(), 0);
    assert_ne!(ws.port(), 0);
    assert_ne!(http, ws);
    h.stop();
    tokio::time::timeout(Duration::from_secs(10), h.clone().stopped())
        .await
        .unwrap();
    assert!(TcpStream::connect(http).await.is_err());

    let h = start_with(|c| c.ws_enabled = false).await;
    assert!(h.ws_addr.is_none());
    let v = post(
        http_addr(&h),
        r#"{"jsonrpc":"2.0","method":"eth_subscribe","params":["newHeads"],"id":1}"#,
    )
    .await
    .json();
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--rpc-ws-enabled"),
        "{v}"
    );
}

// ---- WebSocket -----------------------------------------------------------------------------

#[tokio::test]
async fn subscription_ids_are_hex() {
    let h = start().await;
    let mut ws = Ws::connect(h.ws_addr.unwrap()).await;
    ws.send(r#"{"jsonrpc":"2.0","method":"eth_subscribe","params":["newHeads"],"id":1}"#)
        .await;
    let v = ws.recv().await;
    let id = v["result"]
        .as_str()
        .unwrap_or_else(|| panic!("string id expected: {v}"))
        .to_owned();
    assert_eq!(id.len(), 34, "{id}");
    assert!(
        id.starts_with("0x") && id[2..].bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );
    for n in 1..=3 {
        let note = ws.recv().await;
        assert_eq!(note["method"], "eth_subscription");
        assert_eq!(note["params"]["subscription"], id.as_str());
        assert_eq!(note["params"]["result"]["number"], format!("{n:#x}"));
    }
}

#[tokio::test]
async fn ws_calls_and_batches_follow_the_same_rules() {
    let h = start().await;
    let mut ws = Ws::connect(h.ws_addr.unwrap()).await;
    ws.send(r#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":1}"#)
        .await;
    assert_eq!(
        ws.recv().await,
        json!({"jsonrpc":"2.0","result":"0x0","id":1})
    );
    ws.send("[]").await;
    let v = ws.recv().await;
    assert!(v.is_object(), "{v}");
    assert_invalid_request_null_id(&v);
    ws.send("[1]").await;
    let v = ws.recv().await;
    assert_invalid_request_null_id(&v[0]);
    ws.send("{not json").await;
    assert_eq!(error_code(&ws.recv().await), -32700);
    // Notifications, alone or in a batch, get nothing back.
    ws.send(r#"{"jsonrpc":"2.0","method":"eth_blockNumber"}"#)
        .await;
    ws.send(r#"[{"jsonrpc":"2.0","method":"eth_blockNumber"}]"#)
        .await;
    ws.assert_silent().await;
}

#[tokio::test]
async fn ws_batch_obeys_limit() {
    let h = start().await;
    let mut ws = Ws::connect(h.ws_addr.unwrap()).await;
    ws.send(&batch_of(BATCH_LIMIT as usize + 1)).await;
    let v = ws.recv().await;
    assert!(v.is_object(), "{v}");
    assert_eq!(error_code(&v), -32005);
    assert_eq!(
        v["error"]["message"],
        "Number of requests exceeds max batch size"
    );
    ws.send(&batch_of(BATCH_LIMIT as usize)).await;
    assert_eq!(
        ws.recv().await.as_array().map(Vec::len),
        Some(BATCH_LIMIT as usize)
    );
}

#[tokio::test]
async fn ws_disallowed_host_is_rejected() {
    let h = start().await;
    let mut s = TcpStream::connect(h.ws_addr.unwrap()).await.unwrap();
    s.write_all(
        b"GET / HTTP/1.1\r\nHost: evil.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    )
    .await
    .unwrap();
    let mut status_line = [0u8; 12];
    s.read_exact(&mut status_line).await.unwrap();
    assert_eq!(&status_line, b"HTTP/1.1 403");
}

/// The status line of a WebSocket upgrade sent with `origin` (or none).
async fn ws_upgrade_status(addr: std::net::SocketAddr, origin: Option<&str>) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    let req = format!(
        "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         {origin}Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut status_line = [0u8; 12];
    s.read_exact(&mut status_line).await.unwrap();
    String::from_utf8_lossy(&status_line).into_owned()
}

#[tokio::test]
async fn ws_upgrade_from_a_foreign_origin_is_refused() {
    let h = start().await;
    let ws = h.ws_addr.unwrap();
    // Foreign pages are refused; pages served from this machine and clients without Origin
    // (not browsers) connect.
    for (origin, status) in [
        (Some("https://evil.example"), "HTTP/1.1 403"),
        (Some("http://localhost.evil.example"), "HTTP/1.1 403"),
        (Some("http://localhost:3000"), "HTTP/1.1 101"),
        (Some("http://127.0.0.1:8545"), "HTTP/1.1 101"),
        (None, "HTTP/1.1 101"),
    ] {
        assert_eq!(ws_upgrade_status(ws, origin).await, status, "{origin:?}");
    }
    let open = start_with(|c| c.ws_origins = vec!["*".into()]).await;
    let ws = open.ws_addr.unwrap();
    assert_eq!(
        ws_upgrade_status(ws, Some("https://evil.example")).await,
        "HTTP/1.1 101"
    );
}

#[tokio::test]
async fn jsonrpsee_client_works_over_both_transports() {
    use jsonrpsee::core::client::{ClientT, SubscriptionClientT};
    use jsonrpsee::rpc_params;
    let h = start().await;
    let http = jsonrpsee::http_client::HttpClientBuilder::default()
        .build(format!("http://localhost:{}", http_addr(&h).port()))
        .unwrap();
    let n: String = http
        .request("eth_blockNumber", rpc_params![])
        .await
        .unwrap();
    assert_eq!(n, "0x0");
    let ws = jsonrpsee::ws_client::WsClientBuilder::default()
        .build(format!("ws://localhost:{}", h.ws_addr.unwrap().port()))
        .await
        .unwrap();
    let mut sub: jsonrpsee::core::client::Subscription<Value> = ws
        .subscribe("eth_subscribe", rpc_params!["newHeads"], "eth_unsubscribe")
        .await
        .unwrap();
    assert_eq!(sub.next().await.unwrap().unwrap()["number"], "0x1");
}

const TXPOOL_STATUS: &str = r#"{"jsonrpc":"2.0","method":"txpool_status","id":1}"#;

#[tokio::test]
async fn txpool_is_off_by_default_and_the_error_names_the_flag() {
    let h = start().await;
    let rp = post(http_addr(&h), TXPOOL_STATUS).await;
    let v = rp.json();
    assert_eq!(v["error"]["code"], -32601, "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("TXPOOL") && msg.contains("--rpc-http-api"),
        "{msg}"
    );
    // Enabled per transport: HTTP only here.
    let h = start_with(|c| c.http_apis.push(l2node_rpc::Namespace::Txpool)).await;
    let rp = post(http_addr(&h), TXPOOL_STATUS).await;
    assert_eq!(rp.json()["result"]["pending"], "0x0");
    let mut ws = Ws::connect(h.ws_addr.unwrap()).await;
    ws.send(r#"{"jsonrpc":"2.0","method":"txpool_status","id":2}"#)
        .await;
    let v = ws.recv().await;
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--rpc-ws-api"),
        "{v}"
    );
}

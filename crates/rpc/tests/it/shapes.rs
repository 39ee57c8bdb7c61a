//! Exact JSON shapes of every method of the RPC surface, checked against hand-written expected
//! answers that follow the execution-apis specification and what geth returns for the same
//! request: the exact key set (nothing missing, nothing extra), known values exactly, and values
//! a test cannot know (timestamps, roots, gas of a deployment) by format.
//!
//! Placeholders in an expected answer: `"<quantity>"` (minimal hex, no leading zeros), `"<data>"`
//! (even-length hex), `"<hash>"` (32 bytes), `"<address>"` (20 bytes), `"<bloom>"` (256 bytes),
//! `"<nonce8>"` (8 bytes), `"<string>"`, `"<number>"` (a JSON number), `"<any>"`. Everything
//! else compares exactly (addresses are lowercase hex, as geth answers them).

use std::net::SocketAddr;

use alloy_consensus::{SignableTransaction, TxEnvelope, TxLegacy};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{hex, keccak256, Address, Bytes, TxKind, B256, U256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::{account, signed_tx, TestNode};

mod blocks;
mod calls;
mod filters;
mod misc;
mod txs;

// ---------------------------------------------------------------------------------------------
// Raw client

/// Posts one JSON-RPC request as raw HTTP and returns the whole response object (checked to be a
/// JSON-RPC 2.0 response with the request's id).
pub(crate) async fn rpc(addr: SocketAddr, method: &str, params: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params }).to_string();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: localhost:{}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        addr.port(),
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("HTTP head");
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    assert!(
        head.starts_with("http/1.1 200"),
        "{method}: HTTP status {head}"
    );
    let mut body = raw[split + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    let v: Value = serde_json::from_slice(&body).unwrap_or_else(|e| {
        panic!(
            "{method}: not JSON ({e}): {}",
            String::from_utf8_lossy(&body)
        )
    });
    let keys: Vec<&str> = v
        .as_object()
        .expect("response object")
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert!(
        keys.len() == 3
            && v["jsonrpc"] == "2.0"
            && v["id"] == 7
            && (v.get("result").is_some() ^ v.get("error").is_some()),
        "{method}: not a JSON-RPC 2.0 response: {v}"
    );
    v
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("chunk size line");
        let size = usize::from_str_radix(String::from_utf8_lossy(&body[..eol]).trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[eol + 2..eol + 2 + size]);
        body = &body[eol + 2 + size + 2..];
    }
}

/// The `result` of a request that must succeed.
pub(crate) async fn result(node: &TestNode, method: &str, params: Value) -> Value {
    let v = rpc(node.http_addr, method, params).await;
    assert!(
        v.get("error").is_none(),
        "{method}: unexpected error {}",
        v["error"]
    );
    v["result"].clone()
}

/// The `error` object of a request that must fail.
pub(crate) async fn error(node: &TestNode, method: &str, params: Value) -> Value {
    let v = rpc(node.http_addr, method, params).await;
    assert!(
        v.get("result").is_none(),
        "{method}: expected an error, got {}",
        v["result"]
    );
    v["error"].clone()
}

/// Sends the request and checks the result against `expected`.
pub(crate) async fn expect_result(
    node: &TestNode,
    method: &str,
    params: Value,
    expected: Value,
) -> Value {
    let got = result(node, method, params.clone()).await;
    assert_shape(&format!("{method} {params}"), &got, &expected);
    got
}

/// Sends the request and checks the error object against `expected`.
pub(crate) async fn expect_error(node: &TestNode, method: &str, params: Value, expected: Value) {
    let got = error(node, method, params.clone()).await;
    assert_shape(&format!("{method} {params} (error)"), &got, &expected);
}

// ---------------------------------------------------------------------------------------------
// Shape comparison

/// Panics with every difference between `actual` and the `expected` template.
pub(crate) fn assert_shape(what: &str, actual: &Value, expected: &Value) {
    let mut errs = Vec::new();
    check("$", actual, expected, &mut errs);
    if !errs.is_empty() {
        panic!(
            "{what}: differs from geth's shape:\n  {}\nactual: {}",
            errs.join("\n  "),
            serde_json::to_string_pretty(actual).unwrap()
        );
    }
}

fn check(path: &str, actual: &Value, expected: &Value, errs: &mut Vec<String>) {
    match expected {
        Value::String(p) if p.len() > 2 && p.starts_with('<') && p.ends_with('>') => {
            if let Err(why) = format_ok(&p[1..p.len() - 1], actual) {
                errs.push(format!("{path}: {why}, got {actual}"));
            }
        }
        Value::Object(e) => {
            let Some(a) = actual.as_object() else {
                errs.push(format!("{path}: expected an object, got {actual}"));
                return;
            };
            for k in e.keys().filter(|k| !a.contains_key(*k)) {
                errs.push(format!("{path}: missing key `{k}`"));
            }
            for k in a.keys().filter(|k| !e.contains_key(*k)) {
                errs.push(format!("{path}: extra key `{k}` = {}", a[k]));
            }
            for (k, ev) in e {
                if let Some(av) = a.get(k) {
                    check(&format!("{path}.{k}"), av, ev, errs);
                }
            }
        }
        Value::Array(e) => {
            let Some(a) = actual.as_array() else {
                errs.push(format!("{path}: expected an array, got {actual}"));
                return;
            };
            if a.len() != e.len() {
                errs.push(format!(
                    "{path}: expected {} entries, got {}",
                    e.len(),
                    a.len()
                ));
                return;
            }
            for (i, (av, ev)) in a.iter().zip(e).enumerate() {
                check(&format!("{path}[{i}]"), av, ev, errs);
            }
        }
        _ => {
            if actual != expected {
                errs.push(format!("{path}: expected {expected}, got {actual}"));
            }
        }
    }
}

fn is_hex_of(s: &str, bytes: usize) -> bool {
    s.len() == 2 + 2 * bytes && s.starts_with("0x") && s[2..].bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_lower_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn format_ok(kind: &str, v: &Value) -> Result<(), String> {
    let s = v.as_str();
    let hex_body = s
        .and_then(|s| s.strip_prefix("0x"))
        .filter(|h| is_lower_hex(h));
    let ok = match kind {
        "any" => true,
        "string" => s.is_some(),
        "number" => v.is_number(),
        "quantity" => hex_body.is_some_and(|h| h == "0" || (!h.is_empty() && !h.starts_with('0'))),
        "data" => hex_body.is_some_and(|h| h.len() % 2 == 0),
        "hash" => hex_body.is_some_and(|h| h.len() == 64),
        "bloom" => hex_body.is_some_and(|h| h.len() == 512),
        "nonce8" => hex_body.is_some_and(|h| h.len() == 16),
        "address" => s.is_some_and(|s| is_hex_of(s, 20)),
        other => return Err(format!("unknown placeholder <{other}>")),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("not a {kind}"))
    }
}

/// `template` with the keys of `over` replaced (or added).
pub(crate) fn with(template: Value, over: Value) -> Value {
    let mut t: Map<String, Value> = template.as_object().cloned().unwrap();
    for (k, v) in over.as_object().cloned().unwrap() {
        t.insert(k, v);
    }
    Value::Object(t)
}

/// A quantity.
pub(crate) fn q(n: u64) -> String {
    format!("{n:#x}")
}

/// Lowercase hex of an address.
pub(crate) fn a(addr: Address) -> String {
    format!("{addr:#x}")
}

// ---------------------------------------------------------------------------------------------
// geth's shapes (execution-apis schemas)

/// A Prague block header + body as geth's RPCMarshalBlock gives it, every field by format.
pub(crate) fn block_template() -> Value {
    json!({
        "baseFeePerGas": "<quantity>", "blobGasUsed": "<quantity>", "difficulty": "<quantity>",
        "excessBlobGas": "<quantity>", "extraData": "<data>", "gasLimit": "<quantity>",
        "gasUsed": "<quantity>", "hash": "<hash>", "logsBloom": "<bloom>", "miner": "<address>",
        "mixHash": "<hash>", "nonce": "<nonce8>", "number": "<quantity>",
        "parentBeaconBlockRoot": "<hash>", "parentHash": "<hash>", "receiptsRoot": "<hash>",
        "requestsHash": "<hash>", "sha3Uncles": "<hash>", "size": "<quantity>",
        "stateRoot": "<hash>", "timestamp": "<quantity>", "transactions": [],
        "transactionsRoot": "<hash>", "uncles": [], "withdrawals": [], "withdrawalsRoot": "<hash>",
    })
}

/// Where a mined transaction sits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mined {
    pub hash: B256,
    pub block_hash: B256,
    pub block_number: u64,
    pub index: u64,
}

/// geth's RPCTransaction of a mined EIP-1559 transaction from `common::signed_tx` (max fee
/// 1 gwei, tip 0, no access list) on the zero-base-fee dev chain.
pub(crate) fn tx1559_template(
    m: &Mined,
    from: Address,
    to: Option<Address>,
    nonce: u64,
    gas: u64,
    value: u64,
    input: &str,
) -> Value {
    json!({
        "blockHash": m.block_hash, "blockNumber": q(m.block_number), "blockTimestamp": "<quantity>",
        "from": a(from), "gas": q(gas), "gasPrice": "0x0", "maxFeePerGas": "0x3b9aca00",
        "maxPriorityFeePerGas": "0x0", "hash": m.hash, "input": input, "nonce": q(nonce),
        "to": to.map(a), "transactionIndex": q(m.index), "value": q(value), "type": "0x2",
        "accessList": [], "chainId": q(l2node_node::constants::DEV_CHAIN_ID),
        "v": "<quantity>", "r": "<quantity>", "s": "<quantity>", "yParity": "<quantity>",
    })
}

/// geth's RPCTransaction of a mined EIP-155 legacy transfer: no accessList, no fee caps, no
/// yParity; `chainId` because it is replay-protected.
pub(crate) fn legacy_template(
    m: &Mined,
    from: Address,
    to: Address,
    nonce: u64,
    value: u64,
) -> Value {
    json!({
        "blockHash": m.block_hash, "blockNumber": q(m.block_number), "blockTimestamp": "<quantity>",
        "from": a(from), "gas": "0x5208", "gasPrice": "0x3b9aca00", "hash": m.hash, "input": "0x",
        "nonce": q(nonce), "to": a(to), "transactionIndex": q(m.index), "value": q(value),
        "type": "0x0", "chainId": q(l2node_node::constants::DEV_CHAIN_ID),
        "v": "<quantity>", "r": "<quantity>", "s": "<quantity>",
    })
}

// ---------------------------------------------------------------------------------------------
// Chain state every test starts from

/// Topic of the log the storage contract's constructor emits.
pub(crate) const TOPIC: B256 = B256::repeat_byte(0x11);
/// The value the storage contract's constructor stores in slot 0 (and logs).
pub(crate) const STORED: u64 = 0x2a;

/// Runtime of the storage contract: returns slot 0.
pub(crate) const STORE_RUNTIME: &str = "60005460005260206000f3";
/// Runtime of the reverting contract: `revert Error("nope")`.
pub(crate) fn revert_runtime() -> Vec<u8> {
    let mut code = hex!("6064600c60003960646000fd").to_vec();
    code.extend_from_slice(&revert_data());
    code
}

/// ABI encoding of `Error("nope")`.
pub(crate) fn revert_data() -> Vec<u8> {
    let mut d = hex!("08c379a0").to_vec();
    d.extend_from_slice(&U256::from(0x20).to_be_bytes::<32>());
    d.extend_from_slice(&U256::from(4).to_be_bytes::<32>());
    let mut s = [0u8; 32];
    s[..4].copy_from_slice(b"nope");
    d.extend_from_slice(&s);
    d
}

/// Init code: SSTORE(0, 42); LOG1(mem[0..32] = 42, TOPIC); return STORE_RUNTIME.
pub(crate) fn store_init() -> Vec<u8> {
    let mut code = hex!("602a600055602a6000527f").to_vec();
    code.extend_from_slice(TOPIC.as_slice());
    code.extend_from_slice(&hex!("60206000a1600b603c600039600b6000f3"));
    assert_eq!(code.len(), 0x3c);
    code.extend_from_slice(&hex::decode(STORE_RUNTIME).unwrap());
    code
}

/// Init code returning [`revert_runtime`].
pub(crate) fn revert_init() -> Vec<u8> {
    let mut code = hex!("6070600c60003960706000f3").to_vec();
    let runtime = revert_runtime();
    assert_eq!(runtime.len(), 0x70);
    code.extend_from_slice(&runtime);
    code
}

/// A signed EIP-155 legacy transfer (gas price 1 gwei).
pub(crate) fn legacy_transfer(
    key: &PrivateKeySigner,
    nonce: u64,
    to: Address,
    value: u64,
) -> Bytes {
    let tx = TxLegacy {
        chain_id: Some(l2node_node::constants::DEV_CHAIN_ID),
        nonce,
        gas_price: 1_000_000_000,
        gas_limit: 21_000,
        to: TxKind::Call(to),
        value: U256::from(value),
        input: Bytes::new(),
    };
    let sig = key.sign_hash_sync(&tx.signature_hash()).unwrap();
    TxEnvelope::from(tx.into_signed(sig)).encoded_2718().into()
}

/// A node with three mined blocks: 1 deploys the storage contract (account 0, EIP-1559, one
/// log), 2 a legacy transfer (account 1 -> account 2), 3 deploys the reverting contract.
pub(crate) struct Fixture {
    pub node: TestNode,
    pub store: Address,
    pub reverter: Address,
    pub deploy: Mined,
    pub legacy: Mined,
    pub revert_deploy: Mined,
}

/// Gas limit of the deployments.
pub(crate) const DEPLOY_GAS: u64 = 300_000;
/// Value of the legacy transfer.
pub(crate) const LEGACY_VALUE: u64 = 1000;

impl Fixture {
    pub(crate) async fn new() -> Self {
        let node = TestNode::start().await;
        let a0 = account(0);
        let deploy = send(
            &node,
            signed_tx(
                &a0,
                0,
                TxKind::Create,
                U256::ZERO,
                store_init().into(),
                DEPLOY_GAS,
            ),
        )
        .await;
        let legacy = send(
            &node,
            legacy_transfer(&account(1), 0, account(2).address(), LEGACY_VALUE),
        )
        .await;
        let revert_deploy = send(
            &node,
            signed_tx(
                &a0,
                1,
                TxKind::Create,
                U256::ZERO,
                revert_init().into(),
                DEPLOY_GAS,
            ),
        )
        .await;
        assert!(
            deploy.block_number < legacy.block_number
                && legacy.block_number < revert_deploy.block_number
        );
        let store = a0.address().create(0);
        let reverter = a0.address().create(1);
        Self {
            node,
            store,
            reverter,
            deploy,
            legacy,
            revert_deploy,
        }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.node.http_addr
    }
}

/// Sends a raw transaction (checking the answer is its hash) and waits until it is mined.
pub(crate) async fn send(node: &TestNode, raw: Bytes) -> Mined {
    let hash = keccak256(&raw);
    let got = rpc(node.http_addr, "eth_sendRawTransaction", json!([raw])).await;
    assert_eq!(
        got["result"],
        json!(hash),
        "eth_sendRawTransaction answers the tx hash: {got}"
    );
    let r = node.wait_receipt(hash).await;
    assert_eq!(r["status"], "0x1", "{r}");
    Mined {
        hash,
        block_hash: serde_json::from_value(r["blockHash"].clone()).unwrap(),
        block_number: u64::from_str_radix(
            r["blockNumber"].as_str().unwrap().trim_start_matches("0x"),
            16,
        )
        .unwrap(),
        index: u64::from_str_radix(
            r["transactionIndex"]
                .as_str()
                .unwrap()
                .trim_start_matches("0x"),
            16,
        )
        .unwrap(),
    }
}

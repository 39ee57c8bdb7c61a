//! The dashboard page at `GET /` of the HTTP port: served to browsers, self-contained, pointing
//! at this node's WebSocket port; other clients still get the plain description.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::TestNode;

async fn get(addr: std::net::SocketAddr, accept: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

#[tokio::test]
async fn browsers_get_the_dashboard_and_other_clients_the_description() {
    let node = TestNode::start().await;
    let page = get(node.http_addr, "text/html,application/xhtml+xml,*/*;q=0.8").await;
    assert!(
        page.starts_with("HTTP/1.1 200"),
        "{}",
        &page[..200.min(page.len())]
    );
    assert!(page
        .to_ascii_lowercase()
        .contains("content-type: text/html"));
    assert!(page.contains(&format!(
        r#"name="l2node-ws-port" content="{}""#,
        node.ws_addr.port()
    )));
    for panel in [
        r#"id="health""#,
        r#"id="fees""#,
        "l2_estimateGas",
        "l2_getKarmaStatus",
        "net_peerCount",
    ] {
        assert!(page.contains(panel), "{panel}");
    }
    assert!(
        !page.contains("<script src") && !page.contains("https://cdn"),
        "no external assets"
    );

    let plain = get(node.http_addr, "*/*").await;
    assert!(
        plain.starts_with("HTTP/1.1 200") && plain.contains("JSON-RPC endpoint"),
        "{plain}"
    );
}

async fn get_path(addr: std::net::SocketAddr, path: &str) -> (u16, serde_json::Value) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    let code = out[9..12].parse().unwrap();
    let body = out.split("\r\n\r\n").nth(1).unwrap_or_default();
    (
        code,
        serde_json::from_str(body).unwrap_or(serde_json::Value::Null),
    )
}

#[tokio::test]
async fn liveness_and_readiness_probes_answer_as_besu() {
    let node = TestNode::start().await;
    let (code, body) = get_path(node.http_addr, "/liveness").await;
    assert_eq!((code, body["status"].as_str()), (200, Some("UP")));
    // A node without peers is not ready by Besu's default (minPeers=1)...
    let (code, body) = get_path(node.http_addr, "/readiness").await;
    assert_eq!(
        (code, body["status"].as_str()),
        (503, Some("DOWN")),
        "{body}"
    );
    assert_eq!(body["checks"]["peers"]["minPeers"], 1);
    assert_eq!(body["checks"]["sync"]["status"], "UP");
    // ...and is with minPeers=0.
    let (code, body) = get_path(node.http_addr, "/readiness?minPeers=0&maxBlocksBehind=5").await;
    assert_eq!((code, body["status"].as_str()), (200, Some("UP")), "{body}");
    assert_eq!(body["checks"]["sync"]["maxBlocksBehind"], 5);
    let (code, body) = get_path(node.http_addr, "/readiness?minPeers=x").await;
    assert_eq!(code, 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("minPeers"));
}

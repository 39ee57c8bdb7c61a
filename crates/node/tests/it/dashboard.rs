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

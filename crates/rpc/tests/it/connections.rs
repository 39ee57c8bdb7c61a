//! Connection limits and timeouts of the JSON-RPC servers: `--rpc-max-connections` caps open TCP
//! connections, and idle, silent or slow clients cannot hold a slot for long.
//!
//! Timeouts are behaviour here, so they are asserted, always with a generous margin (a loaded
//! 2-core CI machine runs many test nodes at once).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use jsonrpsee::RpcModule;
use l2node_rpc::{start_rpc_servers, RpcServerConfig, RpcServerHandle};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::wire::raw::{parse_reply, raw_http, Reply, Ws};

/// `max_connections` of these tests.
const CAP: usize = 4;
/// The short timeouts the tests configure.
const SHORT: Duration = Duration::from_secs(1);
/// A timeout long enough not to fire during a test.
const LONG: Duration = Duration::from_secs(120);
/// Slack on top of a timeout before a test calls it broken.
const MARGIN: Duration = Duration::from_secs(8);

const CALL: &str = r#"{"jsonrpc":"2.0","method":"eth_blockNumber","id":1}"#;

fn module() -> RpcModule<()> {
    let mut m = RpcModule::new(());
    m.register_method("eth_blockNumber", |_, _, _| "0x0")
        .unwrap();
    m
}

/// Servers with [`CAP`] connections and [`SHORT`] header and body timeouts.
async fn start_with(tweak: impl FnOnce(&mut RpcServerConfig)) -> RpcServerHandle {
    let mut cfg = RpcServerConfig {
        http_addr: "127.0.0.1:0".parse().unwrap(),
        ws_addr: "127.0.0.1:0".parse().unwrap(),
        max_connections: CAP as u32,
        header_read_timeout: SHORT,
        body_read_timeout: SHORT,
        http_idle_timeout: LONG,
        ..RpcServerConfig::default()
    };
    tweak(&mut cfg);
    start_rpc_servers(module(), &cfg).await.unwrap()
}

/// One JSON-RPC call on a new `Connection: close` connection.
async fn call(addr: SocketAddr) -> Reply {
    raw_http(
        addr,
        "POST",
        &[("Content-Type", "application/json")],
        CALL.as_bytes(),
    )
    .await
}

/// Whether a new connection gets its call answered (not refused, not closed unanswered).
async fn served(addr: SocketAddr) -> bool {
    let mut s = match TcpStream::connect(addr).await {
        Ok(s) => s,
        Err(_) => return false,
    };
    if s.write_all(&request_bytes(addr, true)).await.is_err() {
        return false;
    }
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(MARGIN, s.read_to_end(&mut raw)).await;
    raw.starts_with(b"HTTP/1.1 200")
}

/// Retries [`served`] (or a WebSocket upgrade) until it succeeds; panics after `limit`.
async fn served_within(addr: SocketAddr, ws: bool, limit: Duration) {
    let start = Instant::now();
    loop {
        let ok = if ws {
            upgrade_status(addr).await.as_deref() == Some("HTTP/1.1 101")
        } else {
            served(addr).await
        };
        if ok {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "a new client was not served within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn request_bytes(addr: SocketAddr, close: bool) -> Vec<u8> {
    let connection = if close { "Connection: close\r\n" } else { "" };
    format!(
        "POST / HTTP/1.1\r\nHost: localhost:{}\r\n{connection}Content-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{CALL}",
        addr.port(),
        CALL.len()
    )
    .into_bytes()
}

/// One call on a kept-alive connection: the reply, `None` if the connection closed first.
async fn keep_alive_call(s: &mut TcpStream, addr: SocketAddr) -> Option<Reply> {
    s.write_all(&request_bytes(addr, false)).await.ok()?;
    let mut raw = Vec::new();
    let head_end = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let mut buf = [0u8; 1024];
        let n = tokio::time::timeout(MARGIN, s.read(&mut buf))
            .await
            .expect("no reply")
            .ok()?;
        if n == 0 {
            return None;
        }
        raw.extend_from_slice(&buf[..n]);
    };
    let len = parse_reply(&raw)
        .header("content-length")
        .expect("content-length")
        .parse::<usize>()
        .unwrap();
    while raw.len() < head_end + len {
        let mut buf = [0u8; 1024];
        let n = s.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        raw.extend_from_slice(&buf[..n]);
    }
    Some(parse_reply(&raw))
}

/// The status line of a WebSocket upgrade on a new connection, `None` if closed unanswered.
async fn upgrade_status(addr: SocketAddr) -> Option<String> {
    let mut s = TcpStream::connect(addr).await.ok()?;
    let req = format!(
        "GET / HTTP/1.1\r\nHost: localhost:{}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        addr.port()
    );
    s.write_all(req.as_bytes()).await.ok()?;
    let mut status_line = [0u8; 12];
    tokio::time::timeout(MARGIN, s.read_exact(&mut status_line))
        .await
        .ok()?
        .ok()?;
    Some(String::from_utf8_lossy(&status_line).into_owned())
}

/// Whether the server closes `s` within `limit` (whatever it sends first is skipped).
async fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    let drain = async {
        let mut buf = [0u8; 1024];
        while let Ok(n) = s.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    };
    tokio::time::timeout(limit, drain).await.is_ok()
}

#[tokio::test]
async fn idle_and_half_open_sockets_do_not_lock_out_new_clients() {
    let h = start_with(|_| {}).await;
    for (addr, ws) in [(h.http_addr.unwrap(), false), (h.ws_addr.unwrap(), true)] {
        // 100 sockets: half send nothing, half half a request head.
        let mut idle = Vec::new();
        for i in 0..100 {
            let mut s = TcpStream::connect(addr).await.unwrap();
            if i % 2 == 1 {
                let _ = s.write_all(b"POST / HTTP/1.1\r\nHost: loc").await;
            }
            idle.push(s);
        }
        // A new client gets in at once: it takes an idle socket's slot ...
        served_within(addr, ws, MARGIN).await;
        // ... and the header timeout closes the rest: none is left holding a slot.
        let start = Instant::now();
        for (i, s) in idle.iter_mut().enumerate() {
            let left = (SHORT + MARGIN).saturating_sub(start.elapsed());
            assert!(
                closed_within(s, left).await,
                "idle socket {i} to {addr} still open after {:?}",
                start.elapsed()
            );
        }
    }
}

#[tokio::test]
async fn max_connections_caps_open_connections() {
    let h = start_with(|c| {
        c.header_read_timeout = LONG;
        c.body_read_timeout = LONG;
    })
    .await;
    let addr = h.http_addr.unwrap();
    // Four idle keep-alive connections: a fifth client takes the slot of the one idle the
    // longest, which is closed; the cap of open connections holds.
    let mut open = Vec::new();
    for _ in 0..CAP {
        let mut s = TcpStream::connect(addr).await.unwrap();
        assert_eq!(keep_alive_call(&mut s, addr).await.unwrap().status, 200);
        open.push(s);
    }
    let mut fifth = TcpStream::connect(addr).await.unwrap();
    assert_eq!(keep_alive_call(&mut fifth, addr).await.unwrap().status, 200);
    assert!(
        closed_within(&mut open[0], MARGIN).await,
        "the idlest connection was not closed"
    );
    for s in &mut open[1..] {
        assert_eq!(keep_alive_call(s, addr).await.unwrap().status, 200);
    }
    drop(open);
    drop(fifth);

    // Four connections busy with a request (bodies still arriving): a fifth is refused, with a
    // reason naming the flag, and nothing busy is cut off for it.
    let mut busy = Vec::new();
    for _ in 0..CAP {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST / HTTP/1.1\r\nHost: localhost:{}\r\nContent-Type: application/json\r\n\
             Content-Length: 1000\r\n\r\n ",
            addr.port()
        );
        s.write_all(head.as_bytes()).await.unwrap();
        busy.push(s);
    }
    // (The server may still be closing the connections above: retry until it is full.)
    let start = Instant::now();
    let rp = loop {
        let rp = call(addr).await;
        if rp.status == 503 || start.elapsed() > MARGIN {
            break rp;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(rp.status, 503, "{}", rp.text());
    assert!(rp.text().contains("--rpc-max-connections"), "{}", rp.text());
    // ... and closing one gives its slot to the next client.
    drop(busy.pop());
    served_within(addr, false, MARGIN).await;

    // WebSocket: four open sockets fill the server.
    let ws_addr = h.ws_addr.unwrap();
    let mut sockets = Vec::new();
    for _ in 0..CAP {
        let mut ws = Ws::connect(ws_addr).await;
        ws.send(CALL).await;
        assert_eq!(ws.recv().await["result"], "0x0");
        sockets.push(ws);
    }
    assert_eq!(
        upgrade_status(ws_addr).await.as_deref(),
        Some("HTTP/1.1 503")
    );
    drop(sockets.pop());
    served_within(ws_addr, true, MARGIN).await;
}

#[tokio::test]
async fn idle_keep_alive_connections_are_closed_after_the_idle_timeout() {
    // Idle timeout short, header timeout long: the idle connection is closed ...
    let h = start_with(|c| {
        c.http_idle_timeout = SHORT;
        c.header_read_timeout = LONG;
    })
    .await;
    let addr = h.http_addr.unwrap();
    let mut s = TcpStream::connect(addr).await.unwrap();
    assert_eq!(keep_alive_call(&mut s, addr).await.unwrap().status, 200);
    assert!(closed_within(&mut s, SHORT + MARGIN).await);

    // ... and the header timeout does not cut an idle keep-alive connection short.
    let h = start_with(|c| {
        c.http_idle_timeout = LONG;
        c.header_read_timeout = SHORT;
    })
    .await;
    let addr = h.http_addr.unwrap();
    let mut s = TcpStream::connect(addr).await.unwrap();
    assert_eq!(keep_alive_call(&mut s, addr).await.unwrap().status, 200);
    tokio::time::sleep(3 * SHORT).await;
    assert_eq!(keep_alive_call(&mut s, addr).await.unwrap().status, 200);
}

#[tokio::test]
async fn slow_body_is_cut_off_and_does_not_block_others() {
    let h = start_with(|_| {}).await;
    let addr = h.http_addr.unwrap();
    // CAP clients each announce 1000 bytes and send one every 100 ms.
    let mut slow = Vec::new();
    for _ in 0..CAP {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST / HTTP/1.1\r\nHost: localhost:{}\r\nContent-Type: application/json\r\n\
             Content-Length: 1000\r\n\r\n",
            addr.port()
        );
        s.write_all(head.as_bytes()).await.unwrap();
        let (rd, mut wr) = s.into_split();
        let trickle = tokio::spawn(async move {
            for _ in 0..1000 {
                if wr.write_all(b" ").await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        slow.push((rd, trickle));
    }
    // Other clients get in once the body timeout has cut the slow ones off ...
    served_within(addr, false, SHORT + MARGIN).await;
    // ... and each slow client got 408 with a JSON-RPC error, then its connection closed.
    for (mut rd, trickle) in slow {
        let mut raw = Vec::new();
        let read = tokio::time::timeout(MARGIN, rd.read_to_end(&mut raw)).await;
        assert!(read.is_ok(), "slow connection still open");
        let rp = parse_reply(&raw);
        assert_eq!(rp.status, 408, "{}", rp.text());
        let v = rp.json();
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        assert!(v["error"]["code"].is_i64(), "{v}");
        assert!(v["id"].is_null(), "{v}");
        trickle.abort();
    }
}

/// Reads WebSocket frames until the server closes the connection; returns the opcodes seen.
async fn frames_until_closed(s: &mut TcpStream) -> Vec<u8> {
    let mut opcodes = Vec::new();
    loop {
        let mut head = [0u8; 2];
        if s.read_exact(&mut head).await.is_err() {
            return opcodes;
        }
        let opcode = head[0] & 0x0f;
        opcodes.push(opcode);
        let len = match head[1] & 0x7f {
            126 => s.read_u16().await.map(usize::from),
            127 => s.read_u64().await.map(|n| n as usize),
            n => Ok(usize::from(n)),
        };
        let Ok(len) = len else { return opcodes };
        let mut payload = vec![0; len];
        if s.read_exact(&mut payload).await.is_err() || opcode == 0x8 {
            return opcodes;
        }
    }
}

// Two worker threads and a limit of 1.5 s: the client that answers pings must not miss the
// limit because the test's one thread was descheduled on a loaded machine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_that_never_answers_pings_is_closed() {
    let h = start_with(|c| {
        c.ws_ping_interval = Duration::from_millis(300);
        c.ws_inactivity_limit = Duration::from_millis(1_500);
    })
    .await;
    let ws_addr = h.ws_addr.unwrap();
    // The raw client skips pings and never answers them.
    let mut ws = Ws::connect(ws_addr).await;
    ws.send(CALL).await;
    assert_eq!(ws.recv().await["result"], "0x0");
    let opcodes = tokio::time::timeout(MARGIN, frames_until_closed(&mut ws.0))
        .await
        .expect("a WebSocket that never answers pings stays open");
    assert!(
        opcodes.contains(&0x9),
        "no ping before the close: {opcodes:?}"
    );

    // A client that answers pings (every WebSocket library does) stays connected.
    use jsonrpsee::core::client::ClientT;
    let client = jsonrpsee::ws_client::WsClientBuilder::default()
        .build(format!("ws://localhost:{}", ws_addr.port()))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let n: String = client
        .request("eth_blockNumber", jsonrpsee::rpc_params![])
        .await
        .unwrap();
    assert_eq!(n, "0x0");
}

#[tokio::test]
async fn stop_closes_open_connections_promptly() {
    let h = start_with(|c| c.header_read_timeout = LONG).await;
    let addr = h.http_addr.unwrap();
    let mut keep_alive = TcpStream::connect(addr).await.unwrap();
    assert_eq!(
        keep_alive_call(&mut keep_alive, addr).await.unwrap().status,
        200
    );
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let mut ws = Ws::connect(h.ws_addr.unwrap()).await;
    ws.send(CALL).await;
    assert_eq!(ws.recv().await["result"], "0x0");

    h.stop();
    tokio::time::timeout(MARGIN, h.clone().stopped())
        .await
        .expect("servers did not stop");
    assert!(closed_within(&mut keep_alive, MARGIN).await);
    assert!(closed_within(&mut silent, MARGIN).await);
    assert!(closed_within(&mut ws.0, MARGIN).await);
    assert!(TcpStream::connect(addr).await.is_err());
}

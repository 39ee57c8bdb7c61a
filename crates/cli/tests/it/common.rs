//! A dev node run as a real `l2node` process.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::Duration,
};

use jsonrpsee::http_client::{HttpClient, HttpClientBuilder};

/// An HTTP JSON-RPC client of `url` with a 10 s request timeout.
pub(crate) fn client(url: &str) -> HttpClient {
    HttpClientBuilder::default()
        .request_timeout(Duration::from_secs(10))
        .build(url)
        .unwrap()
}

/// A TCP port free on 127.0.0.1 right now.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process killed (and reaped) on drop.
pub(crate) struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An `l2node` process (a dev node unless told otherwise); killed on drop.
pub(crate) struct Node {
    pub child: Child,
    /// Its HTTP JSON-RPC URL.
    pub url: String,
    /// Its peer-to-peer address (with `/p2p/<id>`), when it runs peer-to-peer.
    pub p2p: Option<String>,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a dev node on `dir` (mining on each transaction, HTTP on a free port, peer-to-peer
/// on a free port) and waits for it to print its HTTP address.
pub(crate) fn start(dir: &std::path::Path) -> Node {
    start_with(dir, &[])
}

/// [`start`] with extra `run` flags (they override the defaults).
pub(crate) fn start_with(dir: &std::path::Path, extra: &[&str]) -> Node {
    let mut child = Command::new(env!("CARGO_BIN_EXE_l2node"))
        .args([
            "run",
            "--dev",
            "--block-time",
            "0",
            "--rpc-http-port",
            "0",
            "--rpc-ws-enabled",
            "false",
            "--p2p-host",
            "127.0.0.1",
            "--p2p-port",
            "0",
        ])
        .args(extra)
        .arg("--data-path")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start l2node");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut p2p = None;
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(i) = line.find("peer-to-peer on /") {
                p2p = line[i + "peer-to-peer on ".len()..]
                    .split_whitespace()
                    .next()
                    .map(String::from);
            }
            // The HTTP address is printed last.
            if !sent {
                if let Some(i) = line.find("http://") {
                    let url: String = line[i..].split_whitespace().next().unwrap().to_string();
                    let _ = tx.send((url, p2p.clone()));
                    sent = true;
                }
            }
        }
    });
    let (url, p2p) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("node printed its HTTP address");
    Node { child, url, p2p }
}

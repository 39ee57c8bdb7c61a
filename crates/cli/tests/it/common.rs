//! A dev node run as a real `l2node` process.

use std::{
    io::{BufRead, BufReader, Read, Seek, SeekFrom},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use alloy_primitives::U256;
use jsonrpsee::{
    core::client::ClientT,
    http_client::{HttpClient, HttpClientBuilder},
    rpc_params,
};

/// An HTTP JSON-RPC client of `url` with a 10 s request timeout.
pub(crate) fn client(url: &str) -> HttpClient {
    HttpClientBuilder::default()
        .request_timeout(Duration::from_secs(10))
        .build(url)
        .unwrap()
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
        .recv_timeout(START_DEADLINE)
        .expect("node printed its HTTP address");
    Node { child, url, p2p }
}

/// A running `l2node devnet`; killed on drop.
pub(crate) struct Devnet {
    _process: KillOnDrop,
    /// The HTTP JSON-RPC URLs of the sequencer and the follower.
    pub http: [String; 2],
    /// The WebSocket URLs of the sequencer and the follower.
    pub ws: [String; 2],
}

/// How long a process is given to come up (or to reach a state): a debug build started beside
/// the rest of the suite on two cores can take several seconds before it listens.
pub(crate) const START_DEADLINE: Duration = Duration::from_secs(60);

/// Starts `l2node devnet` on `dir` with `extra` (after `--block-time 0 --p2p-port 0`), every
/// port chosen by the system, and reads the addresses it prints; returns once both nodes answer
/// and are peered. If the process exits first, the panic shows what it printed.
pub(crate) async fn devnet(dir: &std::path::Path, extra: &[&str]) -> Devnet {
    // Its log goes to a file, which a pipe nobody reads would not do for long.
    let mut log = tempfile::tempfile().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_l2node"))
        .args(["devnet", "--block-time", "0", "--p2p-port", "0"])
        .args(["--sequencer-ports", "0,0", "--follower-ports", "0,0"])
        .args(extra)
        .arg("--data-path")
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(log.try_clone().unwrap())
        .spawn()
        .unwrap();
    // The summary names each node as `  sequencer  http://..  ws://..  p2p ..`.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let ["sequencer" | "follower", http, ws, ..] = words[..] {
                let _ = tx.send((http.to_string(), ws.to_string()));
            }
        }
    });
    let mut process = KillOnDrop(child);
    let started = Instant::now();
    let mut nodes = Vec::new();
    loop {
        nodes.extend(rx.try_iter());
        if let [(seq_http, seq_ws), (fol_http, fol_ws)] = &nodes[..] {
            let mut peered = true;
            for url in [seq_http, fol_http] {
                let n = client(url)
                    .request::<U256, _>("net_peerCount", rpc_params![])
                    .await;
                peered &= matches!(n, Ok(n) if !n.is_zero());
            }
            if peered {
                return Devnet {
                    _process: process,
                    http: [seq_http.clone(), fol_http.clone()],
                    ws: [seq_ws.clone(), fol_ws.clone()],
                };
            }
        }
        if let Ok(Some(status)) = process.0.try_wait() {
            let mut err = String::new();
            log.seek(SeekFrom::Start(0)).unwrap();
            log.read_to_string(&mut err).unwrap();
            panic!("devnet exited with {status} before it was up:\n{err}");
        }
        assert!(
            started.elapsed() < START_DEADLINE,
            "devnet not up and peered within {START_DEADLINE:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

//! A dev node run as a real `l2node` process.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::Duration,
};

/// A `l2node run --dev --block-time 0` process on a free HTTP port; killed on drop.
pub(crate) struct Node {
    pub child: Child,
    pub url: String,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a dev node on `dir` and waits for it to print its HTTP address.
pub(crate) fn start(dir: &std::path::Path) -> Node {
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
            "--p2p-port",
            "0",
        ])
        .arg("--data-path")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start l2node");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if !sent {
                if let Some(i) = line.find("http://") {
                    let url: String = line[i..].split_whitespace().next().unwrap().to_string();
                    let _ = tx.send(url);
                    sent = true;
                }
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("node printed its HTTP address");
    Node { child, url }
}

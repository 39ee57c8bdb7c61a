//! One typed config, end to end: `devnet` applies the `run` groups to both nodes (flags and
//! `--config-file` alike), and a bad file stops the binary with the file, key and expectation.

use std::{
    collections::BTreeMap,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use alloy_primitives::U256;
use jsonrpsee::{core::client::ClientT, rpc_params};

use crate::common::{client, free_port, KillOnDrop};

/// Starts `l2node devnet` with `extra` and four free ports; returns the process and the two
/// HTTP URLs once both nodes answer and are peered.
async fn devnet(dir: &std::path::Path, extra: &[&str]) -> (KillOnDrop, [String; 2]) {
    let ports: Vec<u16> = (0..4).map(|_| free_port()).collect();
    let child = Command::new(env!("CARGO_BIN_EXE_l2node"))
        .args(["devnet", "--block-time", "0", "--p2p-port", "0"])
        .arg("--data-path")
        .arg(dir)
        .args([
            "--sequencer-ports",
            &format!("{},{}", ports[0], ports[1]),
            "--follower-ports",
            &format!("{},{}", ports[2], ports[3]),
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let guard = KillOnDrop(child);
    let urls = [
        format!("http://127.0.0.1:{}", ports[0]),
        format!("http://127.0.0.1:{}", ports[2]),
    ];
    let started = Instant::now();
    loop {
        let mut peered = true;
        for url in &urls {
            let n = client(url)
                .request::<U256, _>("net_peerCount", rpc_params![])
                .await;
            peered &= matches!(n, Ok(n) if !n.is_zero());
        }
        if peered {
            return (guard, urls);
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "devnet not up and peered within 15 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn modules(url: &str) -> Vec<String> {
    let m: BTreeMap<String, String> = client(url)
        .request("rpc_modules", rpc_params![])
        .await
        .unwrap();
    m.into_keys().collect()
}

const ASKED: [&str; 7] = ["debug", "eth", "l2", "net", "rpc", "txpool", "web3"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn devnet_serves_the_namespaces_asked_for_on_both_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let (_guard, urls) = devnet(
        dir.path(),
        &["--rpc-http-api", "ETH,NET,WEB3,L2,DEBUG,TXPOOL"],
    )
    .await;
    for url in &urls {
        assert_eq!(modules(url).await, ASKED, "{url}");
        // Served, not only listed: a method of each added namespace answers.
        let _: serde_json::Value = client(url)
            .request("txpool_status", rpc_params![])
            .await
            .unwrap();
        let _: serde_json::Value = client(url)
            .request("debug_getRawHeader", rpc_params!["latest"])
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn devnet_reads_the_same_config_file_as_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    std::fs::write(
        &file,
        "rpc-http-api = [\"ETH\", \"NET\", \"WEB3\", \"L2\", \"DEBUG\", \"TXPOOL\"]\n\
         tx-pool-max-size = 100\n",
    )
    .unwrap();
    let data = dir.path().join("data");
    let (_guard, urls) = devnet(&data, &["--config-file", file.to_str().unwrap()]).await;
    for url in &urls {
        assert_eq!(modules(url).await, ASKED, "{url}");
    }
}

#[test]
fn a_bad_config_file_names_the_file_the_key_and_what_is_expected() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.toml");
    for (toml, want) in [
        (
            "rpc-htp-port = 1\n",
            "node.toml:1: unknown key `rpc-htp-port`, did you mean `rpc-http-port`?",
        ),
        (
            "rpc-http-port = \"abc\"\n",
            "node.toml:1: rpc-http-port: invalid value \"abc\", expected a port number 0-65535",
        ),
    ] {
        std::fs::write(&file, toml).unwrap();
        for sub in ["run", "devnet"] {
            let out = Command::new(env!("CARGO_BIN_EXE_l2node"))
                .args([sub, "--config-file"])
                .arg(&file)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{sub}: {stderr}");
            assert!(stderr.contains(want), "{sub}: {stderr}");
        }
    }
}

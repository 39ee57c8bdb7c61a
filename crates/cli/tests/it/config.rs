//! One typed config, end to end: `devnet` applies the `run` groups to both nodes (flags and
//! `--config-file` alike), and a bad file stops the binary with the file, key and expectation.

use std::{collections::BTreeMap, process::Command};

use jsonrpsee::{core::client::ClientT, rpc_params};

use crate::common::{client, devnet};

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
    let devnet = devnet(
        dir.path(),
        &["--rpc-http-api", "ETH,NET,WEB3,L2,DEBUG,TXPOOL"],
    )
    .await;
    for url in &devnet.http {
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
    let devnet = devnet(&data, &["--config-file", file.to_str().unwrap()]).await;
    for url in &devnet.http {
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

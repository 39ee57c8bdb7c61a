//! `l2node estimate` and `l2node send` against a real dev node: gasless and premium quotes in
//! text and JSON, sends from a gasless and a premium sender (key and keystore), and the exit
//! codes for an unreachable node, a missing confirmation and a bad command line.

use std::process::{Command, Output, Stdio};

use alloy_signer_local::PrivateKeySigner;
use serde_json::Value;

use crate::common::start;

/// Dev account 0: legendary Karma tier, gasless.
const GASLESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const GASLESS_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
/// Dev account 9: no Karma, always premium.
const PREMIUM: &str = "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720";
const PREMIUM_KEY: &str = "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6";
/// Dev account 8 (entry tier, 2 free transactions a day): sent from a keystore.
const KEYSTORE_KEY: &str = "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97";
const TO: &str = "0x0000000000000000000000000000000000000001";
/// The premium threshold: 12 gwei.
const PREMIUM_TIP: u128 = 12_000_000_000;

/// Runs `l2node ARGS` with stdin, stdout and stderr not terminals.
fn l2node(args: &[&str]) -> Output {
    l2node_env(args, &[])
}

fn l2node_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_l2node"));
    cmd.args(args)
        .env_remove("L2NODE_PRIVATE_KEY")
        .env_remove("L2NODE_KEYSTORE_PASSWORD")
        .env_remove("L2NODE_RPC_URL")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run l2node")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// stdout of a run that must succeed.
fn ok(o: Output) -> String {
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout:\n{out}\nstderr:\n{err}");
    out
}

fn json(o: Output) -> Value {
    let out = ok(o);
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

fn hex_u128(v: &Value) -> u128 {
    u128::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

#[test]
fn estimate_and_send_against_a_dev_node() {
    let dir = tempfile::tempdir().unwrap();
    let node = start(&dir.path().join("data"));
    let rpc = node.url.as_str();

    // Gasless: a free-transaction state and no fee warning.
    let out = ok(l2node(&[
        "estimate", "--rpc", rpc, "--from", GASLESS, "--to", TO, "--value", "1gwei",
    ]));
    assert!(
        out.contains("Free transaction: no fee. Uses 1 of your Karma quota"),
        "{out}"
    );
    assert!(out.contains("legendary tier"), "{out}");
    assert!(out.contains("Value      0.000000001 ETH"), "{out}");
    assert!(
        !out.contains("Premium") && !out.contains("at most"),
        "{out}"
    );
    assert!(!out.contains('\x1b'), "no ANSI colours when piped: {out:?}");
    let q = json(l2node(&[
        "estimate", "--rpc", rpc, "--from", GASLESS, "--to", TO, "--json",
    ]));
    assert_eq!(q["state"], "gasless", "{q}");
    assert!(
        q["reason"].is_null() && q["windowResetsAt"].is_null(),
        "{q}"
    );
    assert_eq!(
        (
            hex_u128(&q["priorityFeePerGas"]),
            hex_u128(&q["maxFeePerGas"])
        ),
        (0, 0)
    );
    assert!(hex_u128(&q["gasLimit"]) >= 21_000, "{q}");
    assert!(q["takenAt"].as_u64().unwrap() > 0, "{q}");

    // Premium: the fee in gwei and ETH, why, and when the window refreshes.
    let out = ok(l2node(&[
        "estimate", "--rpc", rpc, "--from", PREMIUM, "--to", TO,
    ]));
    for want in [
        "Premium fee: ",
        " ETH at most (",
        "priority fee 12 gwei per gas, max fee 12 gwei per gas",
        "Why: the sender holds no Karma",
        "You can pay the premium now, or wait until the window refreshes at ",
        ", in ",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
    assert!(!out.contains("Free transaction"), "{out}");
    let q = json(l2node(&[
        "estimate", "--rpc", rpc, "--from", PREMIUM, "--to", TO, "--json",
    ]));
    assert_eq!(
        (q["state"].as_str(), q["reason"].as_str()),
        (Some("premium"), Some("noKarma")),
        "{q}"
    );
    let tip = hex_u128(&q["priorityFeePerGas"]);
    assert!(tip >= PREMIUM_TIP, "{q}");
    assert_eq!(
        hex_u128(&q["maxFeePerGas"]),
        2 * hex_u128(&q["baseFeePerGas"]) + tip
    );
    assert!(
        q["windowResetsAt"].as_u64().unwrap() > q["takenAt"].as_u64().unwrap(),
        "{q}"
    );

    // No terminal and no --yes: nothing is sent.
    let o = l2node(&[
        "send",
        "--rpc",
        rpc,
        "--private-key",
        PREMIUM_KEY,
        "--to",
        TO,
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("pass --yes"), "{err}");

    // A premium send is never refused: it goes through and pays.
    let out = ok(l2node(&[
        "send",
        "--rpc",
        rpc,
        "--private-key",
        PREMIUM_KEY,
        "--to",
        TO,
        "--value",
        "1gwei",
        "--yes",
    ]));
    for want in [
        "Premium fee: ",
        "Hash       0x",
        "Block      ",
        "Status     1 (success)",
        "Fee paid   0.000",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
    // The gasless sender, key from the environment, JSON out: free.
    let r = json(l2node_env(
        &["send", "--rpc", rpc, "--to", TO, "--yes", "--json"],
        &[("L2NODE_PRIVATE_KEY", GASLESS_KEY)],
    ));
    assert_eq!(r["status"], 1, "{r}");
    assert_eq!(r["feePaid"], "0x0", "{r}");
    assert_eq!(r["quote"]["state"], "gasless", "{r}");
    assert!(r["blockNumber"].as_u64().unwrap() >= 1, "{r}");
    assert_eq!(r["hash"].as_str().unwrap().len(), 66, "{r}");

    // From an encrypted keystore with a password file.
    let key: PrivateKeySigner = KEYSTORE_KEY.parse().unwrap();
    PrivateKeySigner::encrypt_keystore(
        dir.path(),
        &mut rand::thread_rng(),
        key.to_bytes(),
        "hunter2",
        Some("key.json"),
    )
    .unwrap();
    let password = dir.path().join("password");
    std::fs::write(&password, "hunter2\n").unwrap();
    let keystore = dir.path().join("key.json");
    let r = json(l2node(&[
        "send",
        "--rpc",
        rpc,
        "--keystore",
        keystore.to_str().unwrap(),
        "--password-file",
        password.to_str().unwrap(),
        "--to",
        TO,
        "--yes",
        "--json",
    ]));
    assert_eq!(r["status"], 1, "{r}");
    assert_eq!(
        r["quote"]["from"].as_str().unwrap(),
        key.address().to_string().to_lowercase()
    );
    std::fs::write(&password, "wrong\n").unwrap();
    let o = l2node(&[
        "send",
        "--rpc",
        rpc,
        "--keystore",
        keystore.to_str().unwrap(),
        "--password-file",
        password.to_str().unwrap(),
        "--to",
        TO,
        "--yes",
    ]);
    assert_eq!(o.status.code(), Some(1), "{:?}", text(&o));

    // A transaction the node refuses to estimate (it reverts): exit 1, nothing sent.
    let o = l2node(&[
        "send",
        "--rpc",
        rpc,
        "--private-key",
        PREMIUM_KEY,
        "--data",
        "0x60006000fd",
        "--yes",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("estimating the transaction"), "{err}");
}

#[test]
fn unreachable_node_exits_2_and_a_bad_command_line_64() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let rpc = format!("http://127.0.0.1:{port}");
    let o = l2node(&["estimate", "--rpc", &rpc, "--from", GASLESS, "--to", TO]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("cannot reach the node at"), "{err}");
    let o = l2node(&[
        "send",
        "--rpc",
        &rpc,
        "--private-key",
        GASLESS_KEY,
        "--to",
        TO,
        "--yes",
    ]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));

    let o = l2node(&["estimate", "--from", "0xnot-an-address"]);
    assert_eq!(o.status.code(), Some(64), "{:?}", text(&o));
    let o = l2node(&["estimate", "--from", GASLESS, "--value", "1.5wei"]);
    assert_eq!(o.status.code(), Some(64), "{:?}", text(&o));
}

#[test]
fn health_reports_the_three_checks_and_exits_by_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let node = start(dir.path());
    // A lone dev node: in sync and answering, but without peers, so unhealthy (exit 1).
    let out = l2node(&["health", "--rpc", &node.url, "--reference", &node.url]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("block number (max lag 2)") && stdout.contains("unhealthy"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ok false") && stdout.contains("FAIL 0"),
        "{stdout}"
    );

    let out = l2node(&["health", "--rpc", &node.url, "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &rows[0];
    assert_eq!(
        (
            row["reachable"].as_bool(),
            row["healthy"].as_bool(),
            row["syncingOk"].as_bool(),
            row["peersOk"].as_bool(),
            row["peers"].as_u64()
        ),
        (Some(true), Some(false), Some(true), Some(false), Some(0)),
        "{rows}"
    );
    assert_eq!(row["blockNumberOk"], true);

    // Nothing answers: exit 2.
    let out = l2node(&["health", "--rpc", "http://127.0.0.1:9"]);
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
}

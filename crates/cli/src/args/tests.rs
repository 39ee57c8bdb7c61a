//! Unit tests of the option groups, `--config-file` and their precedence.

use std::net::SocketAddr;

use alloy_primitives::U256;
use clap::{CommandFactory, Parser};
use l2node_node::constants as c;
use l2node_node::dev;
use l2node_node::p2p::P2pRole;
use l2node_rpc::Namespace;

use super::config_file::{known_keys, ConfigFile};
use super::*;

/// `argv` (without the program name) with `toml` as its `--config-file`.
fn load(toml: &str, argv: &[&str]) -> anyhow::Result<(Cli, Vec<String>)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.toml");
    std::fs::write(&path, toml).unwrap();
    let mut v: Vec<String> = vec!["l2node".into()];
    v.extend(argv.iter().map(|s| s.to_string()));
    v.extend(["--config-file".into(), path.display().to_string()]);
    Cli::load(v)
}

fn run(cli: Cli) -> RunArgs {
    match cli.command {
        Command::Run(r) => *r,
        _ => panic!("expected run"),
    }
}

fn devnet(cli: Cli) -> DevnetArgs {
    match cli.command {
        Command::Devnet(d) => *d,
        _ => panic!("expected devnet"),
    }
}

/// The error text of a file that must not load.
fn file_error(toml: &str) -> String {
    ConfigFile::parse("node.toml", toml).unwrap_err()
}

// --- precedence -------------------------------------------------------------------------------

#[test]
fn config_file_sets_options_and_flags_override_it() {
    let toml =
        "dev = true\nrpc-http-port = 9545\nblock-time = 0\nhost-allowlist = [\"a\", \"b\"]\n";
    let r = run(load(toml, &["run"]).unwrap().0);
    assert!(r.chain.dev);
    assert_eq!(r.node.rpc.rpc_http_port, 9545);
    assert_eq!(r.node.miner.block_time, 0);
    assert_eq!(r.node.rpc.host_allowlist, vec!["a", "b"]);
    let r = run(load(toml, &["run", "--rpc-http-port", "7000"]).unwrap().0);
    assert_eq!(r.node.rpc.rpc_http_port, 7000);
}

#[test]
fn a_flag_given_with_its_default_value_still_beats_the_file() {
    // value_source, not "differs from the default", decides.
    let r = run(load(
        "rpc-http-port = 9545\n",
        &["run", "--dev", "--rpc-http-port", "8545"],
    )
    .unwrap()
    .0);
    assert_eq!(r.node.rpc.rpc_http_port, 8545);
}

#[test]
fn the_file_beats_defaults_and_silence_keeps_them() {
    let r = run(load("tx-pool-max-size = 10\n", &["run", "--dev"])
        .unwrap()
        .0);
    assert_eq!(r.node.pool.tx_pool_max_size.get(), 10);
    assert_eq!(r.node.pool.tx_pool_max_bytes.get(), c::POOL_MAX_BYTES);
    assert_eq!(r.node.rpc, RpcArgs::default());
}

#[test]
fn a_boolean_set_by_the_file_can_be_turned_off_by_a_flag() {
    let toml = "metrics-enabled = true\ncreate-empty-blocks = true\n";
    let r = run(load(toml, &["run", "--dev", "--metrics-enabled", "false"])
        .unwrap()
        .0);
    assert!(!r.node.metrics.metrics_enabled);
    assert!(r.node.miner.create_empty_blocks);
    // A bare flag still means true.
    let r = run(Cli::parse_from([
        "l2node",
        "run",
        "--dev",
        "--create-empty-blocks",
    ]));
    assert!(r.node.miner.create_empty_blocks && r.chain.dev);
}

#[test]
fn global_log_options_come_from_the_file_unless_given() {
    let toml = "log-level = \"debug\"\nlog-format = \"json\"\n";
    let cli = load(toml, &["run", "--dev"]).unwrap().0;
    assert_eq!(
        (cli.log.log_level.as_str(), cli.log.log_format),
        ("debug", LogFormat::Json)
    );
    let cli = load(toml, &["run", "--dev", "--log-level", "warn"])
        .unwrap()
        .0;
    assert_eq!(cli.log.log_level, "warn");
    let cli = load(toml, &["--log-level", "trace", "run", "--dev"])
        .unwrap()
        .0;
    assert_eq!(cli.log.log_level, "trace");
}

#[test]
fn values_in_the_former_loaders_shapes_still_load() {
    // Strings for numbers, comma-separated strings for lists, `false` for an enabled flag:
    // what the argv-rewriting loader accepted.
    let toml = "rpc-http-port = \"9000\"\nrpc-http-api = \"eth,net,debug\"\n\
                rpc-ws-enabled = false\nrpc-http-max-batch-size = -1\n\
                bootnodes = []\np2p-host = \"127.0.0.1\"\n";
    let r = run(load(toml, &["run", "--dev"]).unwrap().0);
    assert_eq!(r.node.rpc.rpc_http_port, 9000);
    assert_eq!(
        r.node.rpc.rpc_http_api,
        vec![Namespace::Eth, Namespace::Net, Namespace::Debug]
    );
    assert!(!r.node.rpc.rpc_ws_enabled);
    assert_eq!(r.node.rpc.rpc_http_max_batch_size, -1);
    assert_eq!(r.node.p2p.p2p_host, Some("127.0.0.1".parse().unwrap()));
}

/// `--syncmode` by flag and by file (case-insensitive, as clap takes it); a follower's
/// configuration carries it, and anything else is refused naming both modes.
#[test]
fn syncmode_snap_reaches_the_followers_peer_configuration() {
    let r = run(load("syncmode = \"SNAP\"\n", &["run", "--dev"]).unwrap().0);
    assert_eq!(r.node.p2p.syncmode, super::p2p::SyncMode::Snap);
    let dir = tempfile::tempdir().unwrap();
    let cfg = r
        .node
        .p2p
        .config("127.0.0.1".parse().unwrap(), dir.path(), false)
        .unwrap();
    assert!(cfg.snap_sync);
    let r = run(load("", &["run", "--dev", "--syncmode", "full"]).unwrap().0);
    assert_eq!(r.node.p2p.syncmode, super::p2p::SyncMode::Full);
    let e = file_error("syncmode = \"fast\"\n");
    assert!(e.contains("full or snap"), "{e}");
}

// --- errors -----------------------------------------------------------------------------------

#[test]
fn an_unknown_key_names_the_file_the_line_and_the_nearest_key() {
    let e = file_error("dev = true\nrpc-htp-port = 1\n");
    assert_eq!(
        e,
        "node.toml:2: unknown key `rpc-htp-port`, did you mean `rpc-http-port`?"
    );
    let e = file_error("frobnicate = 1\n");
    assert!(
        e.starts_with("node.toml:1: unknown key `frobnicate`, expected one of: "),
        "{e}"
    );
    assert!(
        e.contains("rpc-http-port") && e.contains("tx-pool-max-size"),
        "{e}"
    );
    let e = file_error("rpc_http_port = 1\n");
    assert!(e.contains("write it `rpc-http-port`"), "{e}");
    let e = file_error("[rpc]\nhttp-port = 1\n");
    assert!(e.contains("no sections"), "{e}");
    // Every unknown key, one per line.
    assert_eq!(file_error("a-x = 1\nb-x = 2\n").lines().count(), 2);
}

#[test]
fn a_bad_value_names_the_file_the_line_the_key_and_what_is_expected() {
    let e = file_error("dev = true\nrpc-http-port = \"abc\"\n");
    assert_eq!(
        e,
        "node.toml:2: rpc-http-port: invalid value \"abc\", expected a port number 0-65535"
    );
    let e = file_error("rpc-http-port = 70000\n");
    assert!(
        e.ends_with("invalid value 70000, expected a port number 0-65535"),
        "{e}"
    );
    let e = file_error("rpc-http-api = [\"ETH\", \"FOO\"]\n");
    assert!(e.contains("rpc-http-api: invalid item \"FOO\""), "{e}");
    assert!(
        e.contains("ETH, NET, WEB3, TXPOOL, L2, L2ADMIN, ADMIN, DEBUG, TRACE, OTS"),
        "{e}"
    );
    let e = file_error("rpc-ws-ping-interval = 0\n");
    assert!(e.contains("at least 1"), "{e}");
    let e = file_error("dev = \"yes\"\n");
    assert!(
        e.ends_with("dev: invalid value \"yes\", expected true or false"),
        "{e}"
    );
    let e = file_error("rpc-http-port = \n");
    assert!(
        e.starts_with("node.toml: TOML parse error at line 1"),
        "{e}"
    );
}

#[test]
fn the_config_file_is_refused_by_the_client_commands() {
    let e = load("", &["health"]).unwrap_err().to_string();
    assert!(e.contains("`l2node health` reads no config file"), "{e}");
}

#[test]
fn a_file_conflict_clap_cannot_see_is_refused_at_start() {
    let r = run(load("dev = true\n", &["run", "--genesis-file", "g.json"])
        .unwrap()
        .0);
    let e = r.into_config().unwrap_err().to_string();
    assert!(
        e.contains("--dev and --genesis-file exclude each other"),
        "{e}"
    );
}

// --- the keys and the help --------------------------------------------------------------------

#[test]
fn every_flag_of_run_and_devnet_is_a_file_key_and_keys_are_unique() {
    let keys: Vec<String> = known_keys().into_iter().map(|(k, _)| k).collect();
    let mut unique = keys.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), keys.len(), "a key in two groups");
    let cmd = Cli::command();
    for sub in ["run", "devnet", "import"] {
        for arg in cmd.find_subcommand(sub).unwrap().get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if ["config-file", "help", "version"].contains(&long) {
                continue;
            }
            assert!(
                keys.iter().any(|k| k == long),
                "--{long} of {sub} has no file key"
            );
        }
    }
}

#[test]
fn the_defaults_of_the_file_are_the_flags_defaults() {
    let file = ConfigFile::parse("node.toml", "").unwrap();
    let r = run(Cli::parse_from(["l2node", "run"]));
    assert_eq!(file.rpc, r.node.rpc);
    assert_eq!(file.pool, r.node.pool);
    assert_eq!(file.p2p, r.node.p2p);
    assert_eq!(file.storage, r.node.storage);
}

#[test]
fn help_lists_every_namespace() {
    for sub in ["run", "devnet"] {
        let help = Cli::command()
            .find_subcommand_mut(sub)
            .unwrap()
            .render_long_help()
            .to_string();
        for n in Namespace::ALL {
            assert!(help.contains(&n.to_string()), "{sub} --help lacks {n}");
        }
    }
}

#[test]
fn namespaces_parse_case_insensitively() {
    let r = run(Cli::parse_from([
        "l2node",
        "run",
        "--rpc-http-api",
        "eth,Debug,OTS",
    ]));
    assert_eq!(
        r.node.rpc.rpc_http_api,
        vec![Namespace::Eth, Namespace::Debug, Namespace::Ots]
    );
    assert!(Cli::try_parse_from(["l2node", "run", "--rpc-http-api", "eth,foo"]).is_err());
}

#[test]
fn every_documented_default_changes_nothing_when_given() {
    // Passing a flag's shown default yields the same runtime config as leaving it out.
    let base = run(Cli::parse_from(["l2node", "run", "--dev"]))
        .into_config()
        .unwrap();
    let cmd = Cli::command();
    for arg in cmd.find_subcommand("run").unwrap().get_arguments() {
        let (Some(long), defaults) = (arg.get_long(), arg.get_default_values()) else {
            continue;
        };
        if defaults.is_empty() || long == "dev" {
            continue;
        }
        let value = defaults
            .iter()
            .map(|d| d.to_str().unwrap())
            .collect::<Vec<_>>()
            .join(",");
        let flag = format!("--{long}");
        let cfg = run(Cli::parse_from(["l2node", "run", "--dev", &flag, &value]))
            .into_config()
            .unwrap();
        // NodeConfig has no PartialEq (PrivateKeySigner): compare its parts.
        assert_eq!(cfg.rpc_server, base.rpc_server, "{flag} {value}");
        assert_eq!(cfg.pool, base.pool, "{flag} {value}");
        assert_eq!(cfg.data_dir, base.data_dir, "{flag} {value}");
    }
}

// --- every limit reaches the runtime config ---------------------------------------------------

#[test]
fn every_pool_and_server_limit_is_reachable_by_flag_and_by_file() {
    let flags = [
        "--tx-pool-max-size",
        "7",
        "--tx-pool-max-bytes",
        "70000",
        "--tx-pool-max-queued",
        "3",
        "--tx-pool-account-slots",
        "2",
        "--tx-pool-max-future-by-sender",
        "5",
        "--tx-pool-queue-lifetime",
        "60",
        "--tx-pool-price-bump",
        "25",
        "--tx-pool-max-tx-size",
        "1000",
        "--rpc-header-read-timeout",
        "3",
        "--rpc-http-idle-timeout",
        "4",
        "--rpc-body-read-timeout",
        "5",
        "--rpc-ws-ping-interval",
        "6",
        "--rpc-ws-inactivity-timeout",
        "12",
        "--db-cache-size",
        "1048576",
    ];
    let mut argv = vec!["l2node", "run", "--dev"];
    argv.extend(flags);
    let by_flag = run(Cli::parse_from(argv)).into_config().unwrap();
    let toml: String = flags
        .chunks(2)
        .map(|kv| format!("{} = {}\n", &kv[0][2..], kv[1]))
        .collect();
    let by_file = run(load(&toml, &["run", "--dev"]).unwrap().0)
        .into_config()
        .unwrap();
    for cfg in [&by_flag, &by_file] {
        assert_eq!(cfg.pool.max_txs, 7);
        assert_eq!(cfg.pool.max_bytes, 70_000);
        assert_eq!(cfg.pool.max_queued, 3);
        assert_eq!(cfg.pool.account_slots, 2);
        assert_eq!(cfg.pool.account_queue, 5);
        assert_eq!(cfg.pool.queue_lifetime.as_secs(), 60);
        assert_eq!(cfg.pool.price_bump_percent, 25);
        assert_eq!(cfg.pool.max_tx_size, 1000);
        assert_eq!(cfg.rpc_server.header_read_timeout.as_secs(), 3);
        assert_eq!(cfg.rpc_server.http_idle_timeout.as_secs(), 4);
        assert_eq!(cfg.rpc_server.body_read_timeout.as_secs(), 5);
        assert_eq!(cfg.rpc_server.ws_ping_interval.as_secs(), 6);
        assert_eq!(cfg.rpc_server.ws_inactivity_limit.as_secs(), 12);
        assert_eq!(cfg.db_cache_bytes, 1 << 20);
    }
}

// --- devnet -----------------------------------------------------------------------------------

#[test]
fn devnet_takes_the_run_groups_and_applies_them_to_both_nodes() {
    let cli = Cli::try_parse_from([
        "l2node",
        "devnet",
        "--rpc-http-api",
        "ETH,NET,WEB3,L2,DEBUG,TXPOOL",
        "--block-time",
        "0",
        "--tx-pool-max-size",
        "9",
        "--p2p-port",
        "40000",
    ])
    .unwrap();
    let d = devnet(cli);
    let seq = d.sequencer().unwrap();
    let boot: l2node_node::p2p::Multiaddr = "/ip4/127.0.0.1/tcp/40000".parse().unwrap();
    let fol = d.follower(&boot).unwrap();
    let apis = vec![
        Namespace::Eth,
        Namespace::Net,
        Namespace::Web3,
        Namespace::L2,
        Namespace::Debug,
        Namespace::Txpool,
    ];
    for cfg in [&seq, &fol] {
        assert_eq!(cfg.rpc_server.http_apis, apis);
        assert_eq!(cfg.pool.max_txs, 9);
        assert_eq!(cfg.block_time.as_secs(), 0);
        assert_eq!(cfg.spec.chain_id, c::DEV_CHAIN_ID);
    }
    // What differs: role, ports, directory, p2p port and bootnodes, metrics.
    assert!(seq.signer.is_some() && fol.signer.is_none());
    assert_eq!(seq.rpc_server.http_addr.port(), 8545);
    assert_eq!(seq.rpc_server.ws_addr.port(), 8546);
    assert_eq!(fol.rpc_server.http_addr.port(), 8445);
    assert_eq!(fol.rpc_server.ws_addr.port(), 8446);
    assert!(
        seq.data_dir.ends_with("devnet/sequencer") && fol.data_dir.ends_with("devnet/follower")
    );
    let (sp, fp) = (seq.p2p.as_ref().unwrap(), fol.p2p.as_ref().unwrap());
    assert_eq!((sp.port, fp.port), (40000, 40001));
    assert_eq!(sp.host, "127.0.0.1".parse::<std::net::IpAddr>().unwrap());
    assert_eq!(fp.bootnodes, vec![boot]);
    assert!(matches!(sp.role, P2pRole::Sequencer) && matches!(fp.role, P2pRole::Follower));
}

#[test]
fn devnet_reads_the_same_keys_as_run() {
    let toml = "rpc-http-api = [\"ETH\", \"DEBUG\"]\nrpc-http-port = 9100\nsequencer-ports = \"9200,9201\"\n\
                follower-ports = [9300, 9301]\ngenesis-file = \"g.json\"\n";
    let (cli, warnings) = load(toml, &["devnet"]).unwrap();
    let d = devnet(cli);
    let (seq, fol) = (
        d.sequencer().unwrap(),
        d.follower(&"/ip4/127.0.0.1/tcp/1".parse().unwrap())
            .unwrap(),
    );
    assert_eq!(
        seq.rpc_server.http_apis,
        vec![Namespace::Eth, Namespace::Debug]
    );
    assert_eq!(
        fol.rpc_server.http_apis,
        vec![Namespace::Eth, Namespace::Debug]
    );
    // --sequencer-ports wins over rpc-http-port.
    assert_eq!(seq.rpc_server.http_addr.port(), 9200);
    assert_eq!(fol.rpc_server.ws_addr.port(), 9301);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("`genesis-file` is ignored by devnet"));
    // The same file for run: its ports are rpc-http-port's; the devnet keys are silent.
    let r = run(load(
        toml.replace("genesis-file = \"g.json\"\n", "dev = true\n")
            .as_str(),
        &["run"],
    )
    .unwrap()
    .0);
    assert_eq!(r.into_config().unwrap().rpc_server.http_addr.port(), 9100);
}

#[test]
fn devnet_without_port_flags_uses_rpc_ports_for_its_sequencer() {
    let d = devnet(Cli::parse_from([
        "l2node",
        "devnet",
        "--rpc-http-port",
        "0",
        "--rpc-ws-port",
        "0",
    ]));
    let seq = d.sequencer().unwrap();
    assert_eq!(
        (
            seq.rpc_server.http_addr.port(),
            seq.rpc_server.ws_addr.port()
        ),
        (0, 0)
    );
}

#[test]
fn devnet_refuses_p2p_disabled_and_a_last_port() {
    let d = devnet(Cli::parse_from([
        "l2node",
        "devnet",
        "--p2p-enabled",
        "false",
    ]));
    assert!(d.sequencer().is_err());
    let d = devnet(Cli::parse_from(["l2node", "devnet", "--p2p-port", "65535"]));
    assert!(d
        .follower(&"/ip4/127.0.0.1/tcp/1".parse().unwrap())
        .is_err());
    let d = devnet(Cli::parse_from([
        "l2node",
        "devnet",
        "--sequencer-group",
        "http://127.0.0.1:2379",
    ]));
    let e = d.sequencer().unwrap_err().to_string();
    assert!(e.contains("l2node run"), "{e}");
}

#[test]
fn a_block_time_or_group_lease_beyond_its_bound_is_refused_with_the_bound() {
    let e = run(Cli::parse_from([
        "l2node",
        "run",
        "--dev",
        "--block-time",
        "86401",
    ]))
    .into_config()
    .unwrap_err()
    .to_string();
    assert!(e.contains("block-time") && e.contains("86400"), "{e}");
    let e = run(Cli::parse_from([
        "l2node",
        "run",
        "--dev",
        "--sequencer-group",
        "http://127.0.0.1:2379",
        "--sequencer-group-lease",
        "18446744073709551615",
    ]))
    .into_config()
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("sequencer-group-lease") && e.contains("3600"),
        "{e}"
    );
}

// --- kept from the former args.rs ---------------------------------------------------------------

#[test]
fn negative_batch_size_means_unlimited_and_parses() {
    let r = run(Cli::parse_from([
        "l2node",
        "run",
        "--dev",
        "--rpc-http-max-batch-size",
        "-1",
    ]));
    assert_eq!(r.node.rpc.rpc_http_max_batch_size, -1);
}

#[test]
fn dev_config_has_the_dev_signer_and_chain() {
    let cfg = run(Cli::parse_from(["l2node", "run", "--dev"]))
        .into_config()
        .unwrap();
    assert_eq!(cfg.spec.chain_id, c::DEV_CHAIN_ID);
    assert_eq!(
        cfg.signer.unwrap().address(),
        dev::dev_sequencer().address()
    );
    assert_eq!(cfg.rpc_server.http_addr.port(), 8545);
    let any: SocketAddr = "127.0.0.1:8545".parse().unwrap();
    assert_eq!(cfg.rpc_server.http_addr, any);
}

#[test]
fn amounts_parse_in_wei_hex_and_units() {
    let ok = |s: &str| parse_amount(s).unwrap();
    assert_eq!(ok("0"), U256::ZERO);
    assert_eq!(ok("1000"), U256::from(1000));
    assert_eq!(ok("0x3e8"), U256::from(1000));
    assert_eq!(ok("2gwei"), U256::from(2_000_000_000u64));
    assert_eq!(ok("2 GWEI"), U256::from(2_000_000_000u64));
    assert_eq!(ok("1ether"), U256::from(10u64.pow(18)));
    assert_eq!(ok("1.5eth"), U256::from(15 * 10u64.pow(17)));
    assert_eq!(ok(".5gwei"), U256::from(500_000_000u64));
    assert_eq!(ok("1_000wei"), U256::from(1000));
    for bad in [
        "",
        "abc",
        "1.5wei",
        "1.0000000001gwei",
        "1parsec",
        "0xzz",
        "-1",
        "1.2.3",
    ] {
        assert!(parse_amount(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn send_takes_exactly_one_key_source() {
    let parse = |extra: &[&str]| {
        let mut v = vec![
            "l2node",
            "send",
            "--to",
            "0x0000000000000000000000000000000000000001",
        ];
        v.extend(extra);
        Cli::try_parse_from(v)
    };
    assert!(parse(&[]).is_err() || std::env::var_os("L2NODE_PRIVATE_KEY").is_some());
    assert!(parse(&["--private-key", "0x01", "--keystore", "k.json"]).is_err());
    assert!(parse(&["--password-file", "p"]).is_err());
    let Command::Send(s) = parse(&[
        "--keystore",
        "k.json",
        "--password-file",
        "p",
        "--value",
        "1ether",
    ])
    .unwrap()
    .command
    else {
        panic!("expected send")
    };
    assert_eq!(s.tx.value, U256::from(10u64.pow(18)));
    assert_eq!(s.tx.rpc, "http://127.0.0.1:8545");
    assert!(!s.yes && !s.tx.json);
}

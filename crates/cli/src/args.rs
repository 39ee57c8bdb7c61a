//! Command-line arguments (Besu-style names) and their one conversion into runtime config.
//! A TOML `--config-file` supplies the same options; flags on the command line win.

use std::{net::SocketAddr, path::PathBuf, sync::Arc, time::Duration};

use alloy_primitives::{utils::Unit, Address, Bytes, U256};
use anyhow::Context;
use clap::{ArgAction, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use l2node_launch::KarmaNodeConfig;
use l2node_launch::NodeConfig;
use l2node_node::chainspec::ChainSpec;
use l2node_node::constants as c;
use l2node_node::dev;
use l2node_node::p2p::P2pConfig;
use l2node_node::pool::PoolConfig;
use l2node_rpc::{Namespace, RpcConfig, RpcServerConfig};

use crate::logging::LogFormat;

/// l2node: a self-hosted node for a gasless EVM layer-2 network.
#[derive(Debug, Parser)]
#[command(name = "l2node", version, about, args_override_self = true)]
pub(crate) struct Cli {
    /// TOML file with the same options as the flags (keys without the leading dashes, e.g.
    /// `rpc-http-port = 8545`); flags given on the command line override it.
    #[arg(long, global = true, value_name = "FILE")]
    pub config_file: Option<PathBuf>,
    /// Log output format.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Log filter (tracing `EnvFilter` syntax, e.g. `info,l2node::miner=debug`); RUST_LOG overrides.
    #[arg(long, global = true, default_value = "info")]
    pub log_level: String,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run a node (a sequencer when it has a signing key).
    Run(Box<RunArgs>),
    /// Import blocks as `geth export` writes them (concatenated RLP).
    Import(ImportArgs),
    /// Quote what a transaction costs its sender: free (Karma quota) or premium, and why.
    #[command(after_help = EXIT_CODES)]
    Estimate(EstimateArgs),
    /// Estimate, confirm, sign and send a transaction, then wait for its receipt.
    #[command(after_help = EXIT_CODES)]
    Send(Box<SendArgs>),
    /// Health of nodes: block number within --max-lag of a reference, eth_syncing false,
    /// net_peerCount > 0. Exit 0 healthy, 1 unhealthy, 2 unreachable.
    Health(HealthArgs),
    /// A dev sequencer (HTTP 8545, WS 8546) and a follower (HTTP 8445, WS 8446), peered, in
    /// one process; Ctrl-C stops both.
    Devnet(DevnetArgs),
}

/// Arguments of `l2node devnet`.
#[derive(Debug, Args)]
pub(crate) struct DevnetArgs {
    /// Data directory: the sequencer's chain in DIR/sequencer, the follower's in DIR/follower.
    #[arg(long, value_name = "DIR", default_value = "l2node-data/devnet")]
    pub data_path: PathBuf,
    /// Seconds between blocks; 0 mines a block as soon as transactions arrive.
    #[arg(long, default_value_t = c::DEFAULT_BLOCK_TIME_SECS)]
    pub block_time: u64,
    /// Seal blocks even when there is no transaction.
    #[arg(long)]
    pub create_empty_blocks: bool,
    /// The sequencer's peer-to-peer port (on 127.0.0.1); the follower takes the next one.
    #[arg(long, default_value_t = c::DEFAULT_P2P_PORT)]
    pub p2p_port: u16,
    /// The sequencer's HTTP and WebSocket ports.
    #[arg(long, value_name = "HTTP,WS", value_delimiter = ',', default_values_t = [8545, 8546])]
    pub sequencer_ports: Vec<u16>,
    /// The follower's HTTP and WebSocket ports.
    #[arg(long, value_name = "HTTP,WS", value_delimiter = ',', default_values_t = [8445, 8446])]
    pub follower_ports: Vec<u16>,
}

impl DevnetArgs {
    /// The configuration of one of the two nodes: its HTTP, WS and peer-to-peer ports, and
    /// extra `run` flags.
    pub(crate) fn node(
        &self,
        role: &str,
        ports: &[u16],
        p2p: u16,
        extra: &[&str],
    ) -> anyhow::Result<NodeConfig> {
        let [http, ws] = ports else {
            anyhow::bail!("--{role}-ports takes two ports: HTTP,WS");
        };
        let dir = self.data_path.join(role);
        let mut argv: Vec<String> = ["l2node", "run", "--dev", "--p2p-host", "127.0.0.1"]
            .map(String::from)
            .into();
        for (flag, value) in [
            ("--data-path", dir.display().to_string()),
            ("--rpc-http-port", http.to_string()),
            ("--rpc-ws-port", ws.to_string()),
            ("--p2p-port", p2p.to_string()),
            ("--block-time", self.block_time.to_string()),
        ] {
            argv.extend([flag.to_owned(), value]);
        }
        if self.create_empty_blocks {
            argv.push("--create-empty-blocks".into());
        }
        argv.extend(extra.iter().map(|s| s.to_string()));
        match Cli::try_parse_from(argv)?.command {
            Command::Run(r) => r.into_config(),
            _ => unreachable!("parsed a run command"),
        }
    }
}

/// Arguments of `l2node health`.
#[derive(Debug, Args)]
pub(crate) struct HealthArgs {
    /// Nodes to check (JSON-RPC URLs, repeatable or comma-separated). Default: the two local
    /// HTTP ports, 8545 and 8445, skipping one that is not running.
    #[arg(long, value_name = "URL", value_delimiter = ',')]
    pub rpc: Vec<String>,
    /// A trusted node to compare block numbers with (default: each node's own number, so the
    /// block-number check only proves the node answers).
    #[arg(long, value_name = "URL")]
    pub reference: Option<String>,
    /// Most blocks a node may be behind (or ahead of) the reference.
    #[arg(long, default_value_t = l2node_client::health::DEFAULT_MAX_LAG)]
    pub max_lag: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Exit codes of `estimate` and `send`.
const EXIT_CODES: &str = "Exit codes: 0 done; 1 the node refused, the transaction failed or \
nothing was sent; 2 the node is unreachable; 64 bad command line.";

/// The transaction of `estimate` and `send`, less its sender.
#[derive(Debug, Args)]
pub(crate) struct TxArgs {
    /// Recipient; without it the data is init code and the transaction creates a contract.
    #[arg(long, value_name = "ADDRESS")]
    pub to: Option<Address>,
    /// Value sent along: wei as decimal or 0x hex, or with a unit (`1ether`, `2.5gwei`).
    #[arg(long, value_name = "AMOUNT", value_parser = parse_amount, default_value = "0")]
    pub value: U256,
    /// Calldata (or init code), 0x hex.
    #[arg(long, value_name = "HEX", default_value = "0x")]
    pub data: Bytes,
    /// The node's JSON-RPC endpoint (http(s):// or ws(s)://).
    #[arg(
        long,
        value_name = "URL",
        env = "L2NODE_RPC_URL",
        default_value = "http://127.0.0.1:8545"
    )]
    pub rpc: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `l2node estimate`.
#[derive(Debug, Args)]
pub(crate) struct EstimateArgs {
    /// The sender: its Karma decides whether the transaction is free.
    #[arg(long, value_name = "ADDRESS")]
    pub from: Address,
    /// The transaction.
    #[command(flatten)]
    pub tx: TxArgs,
}

/// `l2node send`.
#[derive(Debug, Args)]
pub(crate) struct SendArgs {
    /// Where the signing key comes from.
    #[command(flatten)]
    pub key: KeyArgs,
    /// The transaction.
    #[command(flatten)]
    pub tx: TxArgs,
    /// Send without asking for confirmation (required when stdin is not a terminal).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Seconds to wait for the receipt.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub timeout: u64,
}

/// The sender's key: a raw private key or an encrypted JSON keystore.
#[derive(Debug, Args)]
pub(crate) struct KeyArgs {
    /// Private key (hex). Prefer the environment variable or a keystore: a command line is
    /// visible to other users of the machine.
    #[arg(
        long,
        value_name = "HEX",
        env = "L2NODE_PRIVATE_KEY",
        hide_env_values = true,
        required_unless_present = "keystore",
        conflicts_with = "keystore"
    )]
    pub private_key: Option<String>,
    /// Encrypted JSON keystore (geth / foundry format).
    #[arg(long, value_name = "FILE")]
    pub keystore: Option<PathBuf>,
    /// File holding the keystore's password (else L2NODE_KEYSTORE_PASSWORD, else a prompt on a
    /// terminal).
    #[arg(long, value_name = "FILE", requires = "keystore")]
    pub password_file: Option<PathBuf>,
}

/// An amount of wei: decimal, `0x` hex, or a decimal number with a unit (`wei`, `gwei`,
/// `ether`/`eth`, ...; `1.5ether`, `2 gwei`). More decimals than the unit has are refused.
pub(crate) fn parse_amount(s: &str) -> Result<U256, String> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return U256::from_str_radix(hex, 16).map_err(|e| format!("bad hex amount {s:?}: {e}"));
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(s.len());
    let (number, unit) = (s[..split].replace('_', ""), s[split..].trim());
    let exponent = if unit.is_empty() {
        0
    } else {
        unit.parse::<Unit>()
            .map_err(|_| format!("unknown unit {unit:?} (wei, gwei, ether, ...)"))?
            .get() as usize
    };
    let (int, frac) = number.split_once('.').unwrap_or((&number, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(format!(
            "{s:?} is not an amount (e.g. 1000, 0x3e8, 2gwei, 1.5ether)"
        ));
    }
    if frac.len() > exponent {
        return Err(format!("{s:?} has more decimals than its unit allows"));
    }
    let digits = format!("{int}{frac}{}", "0".repeat(exponent - frac.len()));
    U256::from_str_radix(&digits, 10).map_err(|e| format!("bad amount {s:?}: {e}"))
}

/// Exit status of a command line `estimate` or `send` cannot parse: EX_USAGE, so that 2 keeps
/// meaning "node unreachable".
const EXIT_USAGE: i32 = 64;

/// Prints a parse error (or the help) and exits like clap, but with [`EXIT_USAGE`] for a bad
/// `estimate` or `send` command line.
fn exit_on_parse_error(e: clap::Error, argv: &[String]) -> ! {
    let ours = argv.iter().skip(1).any(|a| a == "estimate" || a == "send");
    if ours && e.use_stderr() {
        let _ = e.print();
        std::process::exit(EXIT_USAGE);
    }
    e.exit()
}

/// `l2node import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// geth-format genesis.json of the chain.
    #[arg(long, value_name = "FILE")]
    pub genesis_file: PathBuf,
    /// Data directory.
    #[arg(long, value_name = "DIR", default_value = "l2node-data")]
    pub data_path: PathBuf,
    /// The exported blocks.
    pub file: PathBuf,
}

/// `l2node run`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Development chain: built-in genesis, 10 funded test accounts, sealing by the dev key.
    #[arg(long, conflicts_with = "genesis_file")]
    pub dev: bool,
    /// geth-format genesis.json (required unless --dev).
    #[arg(long, value_name = "FILE")]
    pub genesis_file: Option<PathBuf>,
    /// Data directory (default: l2node-data, or l2node-data/dev with --dev).
    #[arg(long, value_name = "DIR")]
    pub data_path: Option<PathBuf>,
    /// Block-signing key (hex); a node with a key is a sequencer. --dev uses the dev key.
    #[arg(
        long,
        env = "L2NODE_SIGNER_KEY",
        value_name = "HEX",
        hide_env_values = true
    )]
    pub signer_key: Option<String>,
    /// Never seal, even with --dev or a --signer-key: follow the chain from peers (give
    /// --bootnodes).
    #[arg(long)]
    pub follower: bool,
    /// Seconds between blocks; 0 mines a block as soon as transactions arrive.
    #[arg(long, default_value_t = c::DEFAULT_BLOCK_TIME_SECS)]
    pub block_time: u64,
    /// Seal blocks even when there is no transaction.
    #[arg(long)]
    pub create_empty_blocks: bool,
    /// Serve JSON-RPC over HTTP.
    #[arg(long, action = ArgAction::Set, default_value_t = true, num_args = 0..=1, default_missing_value = "true")]
    pub rpc_http_enabled: bool,
    /// HTTP listen host.
    #[arg(long, default_value = "127.0.0.1")]
    pub rpc_http_host: String,
    /// HTTP listen port (0 = any free port).
    #[arg(long, default_value_t = c::DEFAULT_RPC_HTTP_PORT)]
    pub rpc_http_port: u16,
    /// Serve JSON-RPC over WebSocket (subscriptions).
    #[arg(long, action = ArgAction::Set, default_value_t = true, num_args = 0..=1, default_missing_value = "true")]
    pub rpc_ws_enabled: bool,
    /// WebSocket listen host.
    #[arg(long, default_value = "127.0.0.1")]
    pub rpc_ws_host: String,
    /// WebSocket listen port (0 = any free port).
    #[arg(long, default_value_t = c::DEFAULT_RPC_WS_PORT)]
    pub rpc_ws_port: u16,
    /// Host names accepted in the Host header, comma-separated; "*" accepts any.
    #[arg(long, value_delimiter = ',', default_values_t = c::DEFAULT_RPC_HOST_ALLOWLIST.iter().map(|s| s.to_string()))]
    pub host_allowlist: Vec<String>,
    /// Origins allowed for browser requests (CORS), comma-separated; "*" allows all.
    #[arg(long, value_delimiter = ',')]
    pub rpc_http_cors_origins: Vec<String>,
    /// Namespaces served over HTTP, comma-separated: ETH, NET, WEB3, TXPOOL, L2, L2ADMIN
    /// (case-insensitive).
    #[arg(long, value_delimiter = ',', default_values_t = Namespace::defaults())]
    pub rpc_http_api: Vec<Namespace>,
    /// Namespaces served over WebSocket, comma-separated: ETH, NET, WEB3, TXPOOL, L2, L2ADMIN.
    #[arg(long, value_delimiter = ',', default_values_t = Namespace::defaults())]
    pub rpc_ws_api: Vec<Namespace>,
    /// Browser origins allowed to open a WebSocket, comma-separated ([scheme://]host[:port]; a
    /// part left out matches any); clients without an Origin header are always allowed; "*"
    /// allows all.
    #[arg(long, value_delimiter = ',', default_values_t = c::DEFAULT_RPC_WS_ORIGINS.iter().map(|s| s.to_string()))]
    pub rpc_ws_origins: Vec<String>,
    /// Most requests in one batch (HTTP and WS). 1, 0 and negative values mean unlimited.
    #[arg(long, default_value_t = c::DEFAULT_RPC_MAX_BATCH_SIZE, allow_hyphen_values = true)]
    pub rpc_http_max_batch_size: i64,
    /// Largest request body in bytes (larger: HTTP 413).
    #[arg(long, default_value_t = c::DEFAULT_RPC_MAX_REQUEST_BODY)]
    pub rpc_http_max_request_content_length: u32,
    /// Largest response in bytes (larger: error -32005).
    #[arg(long, default_value_t = c::DEFAULT_RPC_MAX_RESPONSE_BODY)]
    pub rpc_max_response_size: u32,
    /// Most simultaneous connections per server.
    #[arg(long, default_value_t = c::DEFAULT_RPC_MAX_CONNECTIONS)]
    pub rpc_max_connections: u32,
    /// Most subscriptions per WebSocket connection.
    #[arg(long, default_value_t = c::DEFAULT_RPC_MAX_SUBSCRIPTIONS_PER_CONNECTION)]
    pub rpc_ws_max_subscriptions: u32,
    /// Largest WebSocket message in bytes.
    #[arg(long, default_value_t = c::DEFAULT_RPC_WS_MAX_MESSAGE)]
    pub rpc_ws_max_frame_size: u32,
    /// Largest eth_getLogs block range (0 = unlimited).
    #[arg(long, default_value_t = c::MAX_LOGS_RANGE)]
    pub rpc_max_logs_range: u64,
    /// Gas cap of eth_call and eth_estimateGas.
    #[arg(long, default_value_t = c::DEFAULT_RPC_GAS_CAP)]
    pub rpc_gas_cap: u64,
    /// Connect to peers over libp2p (gossip of blocks and transactions, block sync).
    #[arg(long, action = ArgAction::Set, default_value_t = true, num_args = 0..=1, default_missing_value = "true")]
    pub p2p_enabled: bool,
    /// Peer-to-peer listen host.
    #[arg(long, default_value = "0.0.0.0")]
    pub p2p_host: std::net::IpAddr,
    /// Peer-to-peer listen port (TCP; 0 picks a free one).
    #[arg(long, default_value_t = c::DEFAULT_P2P_PORT)]
    pub p2p_port: u16,
    /// Peers to connect to and keep connected, as libp2p multiaddrs
    /// (`/ip4/127.0.0.1/tcp/30303/p2p/<peer id>`, printed by a node at start), comma-separated.
    #[arg(long, value_name = "MULTIADDR", value_delimiter = ',')]
    pub bootnodes: Vec<l2node_node::p2p::Multiaddr>,
    /// Most connected peers.
    #[arg(long, default_value_t = c::DEFAULT_MAX_PEERS)]
    pub max_peers: u32,
    /// Serve Prometheus metrics (GET /metrics on --metrics-host:--metrics-port).
    #[arg(long)]
    pub metrics_enabled: bool,
    /// Metrics listen host.
    #[arg(long, default_value = "127.0.0.1")]
    pub metrics_host: String,
    /// Metrics listen port (Besu's 9545).
    #[arg(long, default_value_t = c::DEFAULT_METRICS_PORT)]
    pub metrics_port: u16,
    /// Allow the L2ADMIN namespace on a non-loopback listen address (refused at start
    /// otherwise). Only for a private network or behind an authenticating proxy.
    #[arg(long)]
    pub rpc_l2admin_allow_remote: bool,
    /// While this file exists, every gasless path is off (checked every second): free
    /// transactions are refused, estimates turn premium, premium still works.
    #[arg(long, value_name = "FILE")]
    pub gasless_kill_switch_file: Option<PathBuf>,
    /// Key holding the Karma slasher role (hex). A sequencer with it refuses a second, different
    /// free transaction for a sender and nonce already pending and submits Karma.slash(sender).
    /// --dev uses the dev sequencer key, which is the dev chain's slasher.
    #[arg(
        long,
        env = "L2NODE_KARMA_SLASHER_KEY",
        value_name = "HEX",
        hide_env_values = true
    )]
    pub karma_slasher_key: Option<String>,
}

impl Cli {
    /// Parses the command line, with options from `--config-file` placed before it.
    pub(crate) fn parse_with_config_file() -> anyhow::Result<Self> {
        Self::parse_from_with_config_file(std::env::args().collect())
    }

    /// [`Self::parse_with_config_file`] over an explicit argument list.
    pub(crate) fn parse_from_with_config_file(argv: Vec<String>) -> anyhow::Result<Self> {
        let first = Self::try_parse_from(&argv).unwrap_or_else(|e| exit_on_parse_error(e, &argv));
        let Some(path) = &first.config_file else {
            return Ok(first);
        };
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let table: toml::Table = text
            .parse()
            .with_context(|| format!("parsing {}", path.display()))?;
        // Insert the file's options right after the subcommand so command-line flags override.
        let sub = argv
            .iter()
            .position(|a| {
                matches!(
                    a.as_str(),
                    "run" | "import" | "estimate" | "send" | "health" | "devnet"
                )
            })
            .unwrap_or(argv.len());
        let mut merged: Vec<String> = argv[..=sub.min(argv.len() - 1)].to_vec();
        for (key, value) in table {
            let values: Vec<String> = match value {
                toml::Value::Boolean(true) => vec![],
                toml::Value::Boolean(false) => vec!["false".into()],
                toml::Value::String(s) => vec![s],
                toml::Value::Array(a) => vec![a
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(String::from)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .collect::<Vec<_>>()
                    .join(",")],
                other => vec![other.to_string()],
            };
            merged.push(format!("--{key}"));
            merged.extend(values);
        }
        merged.extend(argv[(sub + 1).min(argv.len())..].iter().cloned());
        let matches = Self::command().try_get_matches_from(&merged)?;
        Ok(Self::from_arg_matches(&matches)?)
    }
}

fn socket(host: &str, port: u16) -> anyhow::Result<SocketAddr> {
    use std::net::ToSocketAddrs;
    (host, port)
        .to_socket_addrs()
        .with_context(|| format!("resolving {host}:{port}"))?
        .next()
        .with_context(|| format!("{host} has no address"))
}

impl RunArgs {
    /// The runtime configuration these arguments describe.
    pub(crate) fn into_config(self) -> anyhow::Result<NodeConfig> {
        let (spec, default_dir, dev_key) = if self.dev {
            let spec = ChainSpec::from_genesis(dev::dev_genesis(self.block_time))?;
            (
                spec,
                PathBuf::from("l2node-data/dev"),
                Some(dev::dev_sequencer()),
            )
        } else {
            let path = self.genesis_file.as_ref().context(
                "--genesis-file is required (or --dev for the built-in development chain)",
            )?;
            let spec = ChainSpec::from_genesis_file(path)
                .with_context(|| format!("reading genesis {}", path.display()))?;
            (spec, PathBuf::from("l2node-data"), None)
        };
        let signer = match &self.signer_key {
            _ if self.follower => None,
            Some(hex) => Some(
                hex.trim()
                    .parse()
                    .context("--signer-key must be a 32-byte hex private key")?,
            ),
            None => dev_key,
        };
        let slasher = match &self.karma_slasher_key {
            Some(hex) => Some(
                hex.trim()
                    .parse()
                    .context("--karma-slasher-key must be a 32-byte hex private key")?,
            ),
            None if self.dev => Some(dev::dev_sequencer()),
            None => None,
        };
        let data_dir = self.data_path.unwrap_or(default_dir);
        Ok(NodeConfig {
            p2p: self.p2p_enabled.then(|| P2pConfig {
                host: self.p2p_host,
                port: self.p2p_port,
                bootnodes: self.bootnodes,
                max_peers: self.max_peers,
                key_path: l2node_launch::p2p_key_path(&data_dir),
                sequencer: signer.is_some(),
            }),
            data_dir,
            spec: Arc::new(spec),
            signer,
            block_time: Duration::from_secs(self.block_time),
            create_empty_blocks: self.create_empty_blocks,
            rpc_server: RpcServerConfig {
                http_enabled: self.rpc_http_enabled,
                http_addr: socket(&self.rpc_http_host, self.rpc_http_port)?,
                ws_enabled: self.rpc_ws_enabled,
                ws_addr: socket(&self.rpc_ws_host, self.rpc_ws_port)?,
                max_batch_size: self.rpc_http_max_batch_size,
                max_request_body: self.rpc_http_max_request_content_length,
                max_response_body: self.rpc_max_response_size,
                max_connections: self.rpc_max_connections,
                max_subscriptions_per_connection: self.rpc_ws_max_subscriptions,
                ws_max_message: self.rpc_ws_max_frame_size,
                host_allowlist: self.host_allowlist,
                cors_origins: self.rpc_http_cors_origins,
                ws_origins: self.rpc_ws_origins,
                http_apis: self.rpc_http_api,
                ws_apis: self.rpc_ws_api,
                l2admin_allow_remote: self.rpc_l2admin_allow_remote,
                // Connection timeouts and WebSocket pings: the defaults (constants.rs).
                ..Default::default()
            },
            rpc: RpcConfig {
                gas_cap: self.rpc_gas_cap,
                max_logs_range: self.rpc_max_logs_range,
                ..Default::default()
            },
            pool: PoolConfig::default(),
            metrics: self
                .metrics_enabled
                .then(|| socket(&self.metrics_host, self.metrics_port))
                .transpose()?
                .map(|addr| l2node_node::metrics::MetricsConfig { addr }),
            karma: KarmaNodeConfig {
                kill_switch_file: self.gasless_kill_switch_file,
                slasher,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(cli: Cli) -> RunArgs {
        match cli.command {
            Command::Run(r) => *r,
            _ => panic!("expected run"),
        }
    }

    #[test]
    fn config_file_sets_options_and_flags_override_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("node.toml");
        std::fs::write(
            &path,
            "dev = true\nrpc-http-port = 9545\nblock-time = 0\nhost-allowlist = [\"a\", \"b\"]\n",
        )
        .unwrap();
        let argv = |extra: &[&str]| {
            let mut v: Vec<String> = ["l2node", "run", "--config-file", path.to_str().unwrap()]
                .iter()
                .map(|s| s.to_string())
                .collect();
            v.extend(extra.iter().map(|s| s.to_string()));
            v
        };
        let r = run_args(Cli::parse_from_with_config_file(argv(&[])).unwrap());
        assert!(r.dev);
        assert_eq!(r.rpc_http_port, 9545);
        assert_eq!(r.block_time, 0);
        assert_eq!(r.host_allowlist, vec!["a", "b"]);
        let r =
            run_args(Cli::parse_from_with_config_file(argv(&["--rpc-http-port", "7000"])).unwrap());
        assert_eq!(r.rpc_http_port, 7000);
    }

    #[test]
    fn negative_batch_size_means_unlimited_and_parses() {
        let r = run_args(Cli::parse_from([
            "l2node",
            "run",
            "--dev",
            "--rpc-http-max-batch-size",
            "-1",
        ]));
        assert_eq!(r.rpc_http_max_batch_size, -1);
    }

    #[test]
    fn dev_config_has_the_dev_signer_and_chain() {
        let cfg = run_args(Cli::parse_from(["l2node", "run", "--dev"]))
            .into_config()
            .unwrap();
        assert_eq!(cfg.spec.chain_id, c::DEV_CHAIN_ID);
        assert_eq!(
            cfg.signer.unwrap().address(),
            dev::dev_sequencer().address()
        );
        assert_eq!(cfg.rpc_server.http_addr.port(), 8545);
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
}

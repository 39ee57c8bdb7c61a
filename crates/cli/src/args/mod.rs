//! Command-line arguments (Besu-style names), grouped by concern and flattened into each command,
//! and their one conversion into runtime config.
//!
//! Each group (`RpcArgs`, `P2pArgs`, `PoolArgs`, `KarmaArgs`, `MetricsArgs`, `StorageArgs`,
//! `MinerArgs`, `ChainArgs`, `LogArgs`, `DevnetPortsArgs`) is one struct that is both the clap
//! arguments and the serde shape of `--config-file`: a TOML key is a long flag without its
//! dashes. Precedence: command line (or the flag's environment variable) > file > default; see
//! [`Merge`].

use std::{net::SocketAddr, num::NonZeroU64, path::PathBuf, sync::OnceLock, time::Duration};

use alloy_primitives::{utils::Unit, Address, Bytes, U256};
use anyhow::Context;
use clap::{
    builder::TypedValueParser, parser::ValueSource, ArgMatches, Args, CommandFactory,
    FromArgMatches, Parser, Subcommand,
};
use l2node_rpc::Namespace;

use crate::logging::LogFormat;
use config_file::ConfigFile;

/// Declares an option group: one struct that derives clap's `Args` (the flags) and serde's
/// `Deserialize` (the same options as `--config-file` keys, kebab-case = the long flag names),
/// its [`Default`] (the flags' defaults, so a key the file leaves out means what a flag the
/// command line leaves out means) and its [`Merge`].
///
/// Every field is read from TOML by [`crate::args::config_file::value`], which accepts what the flag
/// accepts (a string parsed like the flag, a TOML integer or boolean, an array or a
/// comma-separated string for a list), so one field list serves both and cannot drift.
macro_rules! option_group {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $fvis:vis $field:ident : $ty:ty
            ),* $(,)?
        }
    ) => {
        #[derive(Debug, Clone, PartialEq, clap::Args, serde::Deserialize)]
        #[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[$fmeta])*
                #[serde(deserialize_with = "crate::args::config_file::value")]
                $fvis $field: $ty,
            )*
        }

        impl Default for $name {
            /// The flags' defaults (their `default_value_t`, or `None` / empty).
            fn default() -> Self {
                $crate::args::clap_defaults::<Self>()
            }
        }

        impl $crate::args::Merge for $name {
            fn merge(self, file: Self, given: &dyn Fn(&str) -> bool) -> Self {
                Self {
                    // The clap id of a derived argument is its field name.
                    $( $field: if given(stringify!($field)) { self.$field } else { file.$field }, )*
                }
            }
        }
    };
}

mod chain;
mod config_file;
mod karma;
mod metrics;
mod node;
mod p2p;
mod pool;
mod rpc;
mod storage;
#[cfg(test)]
mod tests;

pub(crate) use chain::{ChainArgs, MinerArgs};
pub(crate) use karma::KarmaArgs;
pub(crate) use metrics::MetricsArgs;
pub(crate) use node::{DevnetArgs, DevnetPortsArgs, ImportArgs, PortPair, RunArgs};
pub(crate) use p2p::P2pArgs;
pub(crate) use pool::PoolArgs;
pub(crate) use rpc::RpcArgs;
pub(crate) use storage::StorageArgs;

/// Combines an option group from the command line with the same group from `--config-file`.
pub(crate) trait Merge: Sized {
    /// `self` is the command line's group, `file` the file's (the defaults where the file is
    /// silent); each option takes the command line's value when `given(id)` says the command
    /// line (or the flag's environment variable) set it, and the file's value otherwise. So:
    /// command line > environment > file > default.
    fn merge(self, file: Self, given: &dyn Fn(&str) -> bool) -> Self;
}

/// Whether the command line or an environment variable set argument `id` in `matches`
/// (`ValueSource::DefaultValue` and absent both mean "not given").
pub(crate) fn given(matches: &ArgMatches) -> impl Fn(&str) -> bool + '_ {
    move |id| {
        matches!(
            matches.value_source(id),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        )
    }
}

/// A group's flag defaults: the group parsed from an empty command line. The one source of
/// defaults for both the flags and the file's missing keys.
pub(crate) fn clap_defaults<T: Args + FromArgMatches>() -> T {
    let cmd = T::augment_args(clap::Command::new("defaults").no_binary_name(true));
    // An environment variable of the group (L2NODE_SIGNER_KEY, L2NODE_KARMA_SLASHER_KEY) is read
    // here too; harmless, since `given` reports it as set and the command line's copy wins.
    let matches = cmd
        .try_get_matches_from(std::iter::empty::<String>())
        .expect("every option of a group has a default or is optional");
    T::from_arg_matches(&matches).expect("the defaults convert")
}

/// l2node: a self-hosted node for a gasless EVM layer-2 network.
#[derive(Debug, Parser)]
#[command(name = "l2node", version, about, args_override_self = true)]
pub(crate) struct Cli {
    /// TOML file with the same options as the flags: each key is a long flag without its
    /// dashes (`rpc-http-port = 8545`, `rpc-http-api = ["ETH", "NET"]`), at the top level.
    /// Read by run, devnet and import; flags given on the command line override it.
    #[arg(long, global = true, value_name = "FILE")]
    pub config_file: Option<PathBuf>,
    /// Logging.
    #[command(flatten)]
    pub log: LogArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

option_group! {
    /// Logging (global: before or after the subcommand).
    #[command(next_help_heading = "Logging")]
    pub(crate) struct LogArgs {
        /// Log output format.
        #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
        pub log_format: LogFormat,
        /// Log filter (tracing `EnvFilter` syntax, e.g. `info,l2node::miner=debug`); RUST_LOG
        /// overrides.
        #[arg(long, global = true, default_value = "info")]
        pub log_level: String,
    }
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
    /// one process; Ctrl-C stops both. Every node option of `run` (RPC, peer-to-peer, pool,
    /// Karma, storage) applies to both nodes; metrics cover the process.
    Devnet(Box<DevnetArgs>),
    /// Inspect a stopped node's database.
    #[command(subcommand)]
    Db(DbCommand),
}

/// `l2node db` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum DbCommand {
    /// Bytes per table and per kind of data (blocks, receipts, indexes, state, trie, history,
    /// Karma) and per transaction. The node must be stopped (the database takes one process).
    Stats(DbStatsArgs),
}

/// Arguments of `l2node db stats`.
#[derive(Debug, Args)]
pub(crate) struct DbStatsArgs {
    /// The node's data directory (`l2node-data`, `l2node-data/dev` with --dev, or the
    /// `sequencer` / `follower` directory of a devnet).
    #[arg(long, value_name = "DIR", default_value = chain::RUN_DATA_PATH)]
    pub data_path: PathBuf,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

impl Cli {
    /// Parses `argv` and merges `--config-file` under it. Also returns warnings to log once
    /// logging is set up (for devnet: keys of the file it ignores).
    pub(crate) fn load(argv: Vec<String>) -> anyhow::Result<(Self, Vec<String>)> {
        let matches = Self::command()
            .try_get_matches_from(&argv)
            .unwrap_or_else(|e| exit_on_parse_error(e, &argv));
        let cli =
            Self::from_arg_matches(&matches).unwrap_or_else(|e| exit_on_parse_error(e, &argv));
        let Some(path) = cli.config_file.clone() else {
            return Ok((cli, Vec::new()));
        };
        let file = ConfigFile::load(&path)?;
        cli.with_file(&matches, &file)
    }

    /// Merges `file` under the command line `matches` was parsed from (see [`Merge`]).
    pub(crate) fn with_file(
        self,
        matches: &ArgMatches,
        file: &ConfigFile,
    ) -> anyhow::Result<(Self, Vec<String>)> {
        let (name, sub) = matches.subcommand().expect("clap requires a subcommand");
        let (top, sub) = (given(matches), given(sub));
        let log = self.log.merge(file.log.clone(), &top);
        let mut warnings = Vec::new();
        let command = match self.command {
            Command::Run(run) => Command::Run(Box::new(run.merge(file, &sub))),
            Command::Devnet(devnet) => {
                warnings.extend(DevnetArgs::ignored_keys(file));
                Command::Devnet(Box::new(devnet.merge(file, &sub)))
            }
            Command::Import(import) => Command::Import(import.merge(file, &sub)),
            Command::Estimate(_) | Command::Send(_) | Command::Health(_) | Command::Db(_) => {
                anyhow::bail!(
                "--config-file {}: `l2node {name}` reads no config file (run, devnet and import \
                 do); give its options as flags",
                file.name()
            )
            }
        };
        Ok((
            Self {
                config_file: self.config_file,
                log,
                command,
            },
            warnings,
        ))
    }
}

/// The namespaces as `--rpc-http-api` / `--rpc-ws-api` take them: every [`Namespace::ALL`],
/// case-insensitive (with `ignore_case = true` on the argument), listed in `--help`.
pub(crate) fn namespace_parser() -> impl clap::builder::TypedValueParser<Value = Namespace> {
    // clap's possible values need `&'static str` (without its `string` feature): the ten
    // upper-case names are made once per process.
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        Namespace::ALL
            .iter()
            .map(|n| &*Box::leak(n.to_string().into_boxed_str()))
            .collect()
    });
    clap::builder::PossibleValuesParser::new(names.iter().copied()).map(|s: String| {
        s.parse::<Namespace>()
            .expect("every possible value names a namespace")
    })
}

/// A default duration as the whole seconds the flags take.
pub(crate) fn secs(d: Duration) -> NonZeroU64 {
    NonZeroU64::new(d.as_secs()).expect("the defaults are at least one second")
}

/// `host:port` resolved (a name like `localhost` is looked up once, at start).
pub(crate) fn socket(host: &str, port: u16) -> anyhow::Result<SocketAddr> {
    use std::net::ToSocketAddrs;
    (host, port)
        .to_socket_addrs()
        .with_context(|| format!("resolving {host}:{port}"))?
        .next()
        .with_context(|| format!("{host} has no address"))
}

// ---------------------------------------------------------------------------------------------
// The client commands (health, estimate, send): unchanged from the former args.rs. They take no
// config file (see `Cli::with_file`).
// ---------------------------------------------------------------------------------------------

/// Arguments of `l2node health`.
#[derive(Debug, Args)]
pub(crate) struct HealthArgs {
    /// Nodes to check (JSON-RPC URLs, repeatable or comma-separated). Default: the two local
    /// HTTP ports, 8545 and 8445, skipping one that is not running.
    #[arg(long, value_name = "URL", value_delimiter = ',')]
    pub rpc: Vec<String>,
    /// A trusted node to compare block numbers with. Default: the node among those checked that
    /// seals blocks (it answers eth_coinbase: the sequencer; in a group, the member at the
    /// highest block), else each node's own number (then
    /// the block-number check only proves the node answers).
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

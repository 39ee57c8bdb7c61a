//! `--config-file`: a TOML file of the same options as the flags, deserialized with serde into
//! the same option groups (`crate::args`).
//!
//! The shape is flat, like Besu's `--config-file`: each key is a long flag without its dashes, at
//! the top level (`rpc-http-port = 8545`, `rpc-http-api = ["ETH", "DEBUG"]`). A value is what the
//! flag takes: a string parsed as the flag parses it, or a TOML integer or boolean; a list is an
//! array or a comma-separated string. So every file the former argv-rewriting loader read still
//! loads (bar keys that were never flags, which it also refused).
//!
//! Errors name the file, the line, the key and what is expected:
//!
//! ```text
//! node.toml:3: unknown key `rpc-htp-port`, did you mean `rpc-http-port`?
//! node.toml:2: rpc-http-port: invalid value "abc", expected a port number 0-65535
//! ```

use std::{
    collections::BTreeMap,
    net::IpAddr,
    num::{NonZeroU64, NonZeroUsize},
    path::{Path, PathBuf},
    str::FromStr,
};

use anyhow::Context;
use clap::Args;
use l2node_node::p2p::Multiaddr;
use l2node_rpc::Namespace;
use serde::{de::DeserializeOwned, Deserialize, Deserializer};

use super::p2p::SyncMode;
use super::{
    ChainArgs, DevnetPortsArgs, KarmaArgs, LogArgs, MetricsArgs, MinerArgs, P2pArgs, PoolArgs,
    PortPair, RpcArgs, StorageArgs,
};
use crate::logging::LogFormat;

/// A loaded `--config-file`: every group, with the flags' defaults where the file is silent.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConfigFile {
    /// The file's name in messages (as given on the command line).
    name: String,
    /// The keys the file sets, with their line.
    lines: BTreeMap<String, usize>,
    /// `log-format`, `log-level`.
    pub log: LogArgs,
    /// `dev`, `genesis-file`, `signer-key`, `follower` (run; import reads `genesis-file`).
    pub chain: ChainArgs,
    /// `block-time`, `create-empty-blocks`.
    pub miner: MinerArgs,
    /// `rpc-*`, `host-allowlist`.
    pub rpc: RpcArgs,
    /// `p2p-*`, `bootnodes`, `max-peers`.
    pub p2p: P2pArgs,
    /// `tx-pool-*`.
    pub pool: PoolArgs,
    /// `gasless-kill-switch-file`, `karma-slasher-key`.
    pub karma: KarmaArgs,
    /// `metrics-*`.
    pub metrics: MetricsArgs,
    /// `data-path`, `db-cache-size`.
    pub storage: StorageArgs,
    /// `sequencer-ports`, `follower-ports` (devnet).
    pub devnet: DevnetPortsArgs,
}

/// The groups a file's keys belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Group {
    Log,
    Chain,
    Miner,
    Rpc,
    P2p,
    Pool,
    Karma,
    Metrics,
    Storage,
    Devnet,
}

/// A group's `clap::Args::augment_args`: adds its flags to a command.
type Augment = fn(clap::Command) -> clap::Command;

/// Each group and its flags: the file's keys are exactly their long names.
const GROUPS: [(Group, Augment); 10] = [
    (Group::Log, <LogArgs as Args>::augment_args),
    (Group::Chain, <ChainArgs as Args>::augment_args),
    (Group::Miner, <MinerArgs as Args>::augment_args),
    (Group::Rpc, <RpcArgs as Args>::augment_args),
    (Group::P2p, <P2pArgs as Args>::augment_args),
    (Group::Pool, <PoolArgs as Args>::augment_args),
    (Group::Karma, <KarmaArgs as Args>::augment_args),
    (Group::Metrics, <MetricsArgs as Args>::augment_args),
    (Group::Storage, <StorageArgs as Args>::augment_args),
    (Group::Devnet, <DevnetPortsArgs as Args>::augment_args),
];

/// Every key a file may set, with its group, from the flags themselves (so they cannot drift).
#[cfg(test)]
pub(crate) fn known_keys() -> Vec<(String, &'static str)> {
    keys()
        .into_iter()
        .map(|(k, g)| (k, group_name(g)))
        .collect()
}

fn keys() -> Vec<(String, Group)> {
    GROUPS
        .iter()
        .flat_map(|(group, augment)| {
            augment(clap::Command::new("keys"))
                .get_arguments()
                .filter_map(|arg| arg.get_long().map(|long| (long.to_owned(), *group)))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
fn group_name(g: Group) -> &'static str {
    match g {
        Group::Log => "logging",
        Group::Chain => "chain",
        Group::Miner => "block production",
        Group::Rpc => "JSON-RPC",
        Group::P2p => "peer-to-peer",
        Group::Pool => "transaction pool",
        Group::Karma => "Karma",
        Group::Metrics => "metrics",
        Group::Storage => "storage",
        Group::Devnet => "devnet",
    }
}

impl ConfigFile {
    /// Reads and checks `path`.
    pub(crate) fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading --config-file {}", path.display()))?;
        Self::parse(&path.display().to_string(), &text).map_err(anyhow::Error::msg)
    }

    /// Parses `text`, named `name` in errors. Every unknown key is reported (one per line);
    /// then the first bad value.
    pub(crate) fn parse(name: &str, text: &str) -> Result<Self, String> {
        // Spanned keys give each key's line for the messages.
        let doc: BTreeMap<toml::Spanned<String>, toml::Value> =
            toml::from_str(text).map_err(|e| format!("{name}: {}", e.to_string().trim_end()))?;
        let known = keys();
        let mut tables: BTreeMap<Group, toml::Table> = BTreeMap::new();
        let mut lines = BTreeMap::new();
        let mut unknown = Vec::new();
        for (key, value) in doc {
            let line = line_of(text, key.span().start);
            let key = key.into_inner();
            match known.iter().find(|(k, _)| *k == key) {
                Some((_, group)) => {
                    lines.insert(key.clone(), line);
                    tables.entry(*group).or_default().insert(key, value);
                }
                None => unknown.push(format!(
                    "{name}:{line}: {}",
                    unknown_key(&key, &value, &known)
                )),
            }
        }
        if !unknown.is_empty() {
            return Err(unknown.join("\n"));
        }
        let mut take = |g: Group| tables.remove(&g).unwrap_or_default();
        let (log, chain, miner, rpc, p2p) = (
            take(Group::Log),
            take(Group::Chain),
            take(Group::Miner),
            take(Group::Rpc),
            take(Group::P2p),
        );
        let (pool, karma, metrics, storage, devnet) = (
            take(Group::Pool),
            take(Group::Karma),
            take(Group::Metrics),
            take(Group::Storage),
            take(Group::Devnet),
        );
        let typed = Typed {
            name,
            lines: &lines,
        };
        Ok(Self {
            log: typed.group(log)?,
            chain: typed.group(chain)?,
            miner: typed.group(miner)?,
            rpc: typed.group(rpc)?,
            p2p: typed.group(p2p)?,
            pool: typed.group(pool)?,
            karma: typed.group(karma)?,
            metrics: typed.group(metrics)?,
            storage: typed.group(storage)?,
            devnet: typed.group(devnet)?,
            name: name.to_owned(),
            lines,
        })
    }

    /// The file's name in messages.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Whether the file sets `key`.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.lines.contains_key(key)
    }
}

/// Deserializes one group's keys, naming the file, line and key of a bad value.
struct Typed<'a> {
    name: &'a str,
    lines: &'a BTreeMap<String, usize>,
}

impl Typed<'_> {
    fn group<T: DeserializeOwned>(&self, table: toml::Table) -> Result<T, String> {
        serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(
            |e: serde_path_to_error::Error<toml::de::Error>| {
                let key = e.path().to_string();
                let line = self
                    .lines
                    .get(&key)
                    .map_or_else(String::new, |l| format!(":{l}"));
                format!("{}{line}: {key}: {}", self.name, e.inner().message())
            },
        )
    }
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// Why `key` is not accepted, with the nearest key when there is one.
fn unknown_key(key: &str, value: &toml::Value, known: &[(String, Group)]) -> String {
    let flag_like = key.trim_start_matches('-').replace('_', "-");
    if flag_like != key && known.iter().any(|(k, _)| *k == flag_like) {
        return format!(
            "unknown key `{key}`: write it `{flag_like}` (the long flag without its dashes)"
        );
    }
    if value.is_table() {
        return format!(
            "unknown key `{key}`: the file has no sections; write each option at the top level, \
             named like its flag (e.g. `rpc-http-port = 8545`)"
        );
    }
    let nearest = known.iter().map(|(k, _)| (edit_distance(key, k), k)).min();
    match nearest {
        Some((d, k)) if d <= 3 => format!("unknown key `{key}`, did you mean `{k}`?"),
        _ => {
            let mut all: Vec<&str> = known.iter().map(|(k, _)| k.as_str()).collect();
            all.sort_unstable();
            format!("unknown key `{key}`, expected one of: {}", all.join(", "))
        }
    }
}

/// Levenshtein distance (keys are short ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diag + usize::from(ca != *cb));
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

// ---------------------------------------------------------------------------------------------
// Values: what the flag accepts, from TOML.
// ---------------------------------------------------------------------------------------------

/// Reads one option's TOML value (the `deserialize_with` of every group field, set by
/// `option_group!`).
pub(crate) fn value<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FromToml,
{
    let v = toml::Value::deserialize(deserializer)?;
    T::from_toml(&v).map_err(serde::de::Error::custom)
}

/// A field type readable from TOML: `T`, `Option<T>` (a present key is `Some`) and `Vec<T>`
/// (an array, or a comma-separated string) of every [`Scalar`] `T`.
pub(crate) trait FromToml: Sized {
    /// The value, or "invalid value ..., expected ...".
    fn from_toml(v: &toml::Value) -> Result<Self, String>;
}

/// A type a flag parses from a string ([`FromStr`], as clap does), and what it expects.
pub(crate) trait Scalar: FromStr {
    /// What a valid value looks like, for the error message.
    fn expected() -> String;
}

/// The text the flag would have been given: what the former loader put on the command line
/// (a string as is, numbers and booleans written out, an array comma-joined); `None` for a table.
fn text(v: &toml::Value) -> Option<String> {
    Some(match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(items) => items
            .iter()
            .map(text)
            .collect::<Option<Vec<_>>>()?
            .join(","),
        toml::Value::Table(_) => return None,
    })
}

fn scalar<T: Scalar>(v: &toml::Value) -> Result<T, String> {
    text(v)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("invalid value {v}, expected {}", T::expected()))
}

fn list<T: Scalar>(v: &toml::Value) -> Result<Vec<T>, String> {
    let whole = text(v).ok_or_else(|| {
        format!(
            "invalid value {v}, expected a list (an array or a comma-separated string) of {}",
            T::expected()
        )
    })?;
    whole
        .split(',')
        .filter(|item| !item.is_empty())
        .map(|item| {
            item.parse()
                .map_err(|_| format!("invalid item {item:?} in {v}, expected {}", T::expected()))
        })
        .collect()
}

/// [`Scalar`] and [`FromToml`] for `T`, `Option<T>` and `Vec<T>` of each type the groups use.
macro_rules! scalars {
    ($($t:ty => $expected:expr),* $(,)?) => {$(
        impl Scalar for $t {
            fn expected() -> String {
                $expected.into()
            }
        }
        impl FromToml for $t {
            fn from_toml(v: &toml::Value) -> Result<Self, String> {
                scalar(v)
            }
        }
        impl FromToml for Option<$t> {
            fn from_toml(v: &toml::Value) -> Result<Self, String> {
                scalar(v).map(Some)
            }
        }
        impl FromToml for Vec<$t> {
            fn from_toml(v: &toml::Value) -> Result<Self, String> {
                list(v)
            }
        }
    )*};
}

scalars! {
    bool => "true or false",
    // Every u16 option is a port.
    u16 => "a port number 0-65535",
    u32 => format!("a whole number 0-{}", u32::MAX),
    u64 => format!("a whole number 0-{}", u64::MAX),
    i64 => "a whole number (may be negative)",
    usize => format!("a whole number 0-{}", usize::MAX),
    // Every NonZeroU64 option is a number of seconds.
    NonZeroU64 => "a whole number of seconds, at least 1",
    NonZeroUsize => "a whole number, at least 1",
    String => "a string",
    PathBuf => "a path",
    IpAddr => "an IP address (e.g. 127.0.0.1 or ::)",
    Multiaddr => "a libp2p multiaddr (e.g. /ip4/127.0.0.1/tcp/30303/p2p/<peer id>)",
    Namespace => format!(
        "one of {}",
        Namespace::ALL.map(|n| n.to_string()).join(", ")
    ),
    PortPair => "two ports, HTTP and WS (\"8545,8546\" or [8545, 8546])",
    LogFormat => "text or json",
    SyncMode => "full or snap",
}

//! The chain and the node's role (`run` only: `devnet` always runs the dev chain with a dev
//! sequencer and a follower) and block production (`run` and `devnet`).

use std::{path::PathBuf, sync::Arc, time::Duration};

use alloy_signer_local::PrivateKeySigner;
use anyhow::Context;
use clap::ArgAction;
use l2node_launch::GroupConfig;
use l2node_node::chainspec::ChainSpec;
use l2node_node::constants as c;
use l2node_node::dev;

option_group! {
    /// Which chain, and whether this node seals it (`run` only).
    #[command(next_help_heading = "Chain and role")]
    pub(crate) struct ChainArgs {
        /// Development chain: built-in genesis, 10 funded test accounts, sealing by the dev key.
        #[arg(long, conflicts_with = "genesis_file", action = ArgAction::Set, num_args = 0..=1,
              default_missing_value = "true", default_value_t = false, value_name = "BOOL")]
        pub dev: bool,
        /// geth-format genesis.json (required unless --dev).
        #[arg(long, value_name = "FILE")]
        pub genesis_file: Option<PathBuf>,
        /// Block-signing key (hex); a node with a key is a sequencer. --dev uses the dev key.
        #[arg(long, env = "L2NODE_SIGNER_KEY", value_name = "HEX", hide_env_values = true)]
        pub signer_key: Option<String>,
        /// Never seal, even with --dev or a --signer-key: follow the chain from peers (give
        /// --bootnodes).
        #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
              default_value_t = false, value_name = "BOOL")]
        pub follower: bool,
    }
}

option_group! {
    /// Block production (a sequencer's; `devnet` applies it to its sequencer).
    #[command(next_help_heading = "Block production")]
    pub(crate) struct MinerArgs {
        /// Seconds between blocks (at most 86400); 0 mines a block as soon as transactions
        /// arrive.
        #[arg(long, value_name = "SECS", default_value_t = c::DEFAULT_BLOCK_TIME_SECS)]
        pub block_time: u64,
        /// Seal blocks even when there is no transaction.
        #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
              default_value_t = false, value_name = "BOOL")]
        pub create_empty_blocks: bool,
        /// Join a sequencer group: the etcd client URLs, comma-separated
        /// (`http://10.0.0.5:2379,...`). The node then seals only while it holds the group's
        /// leadership, records each block in the group's log before anyone sees it, and
        /// follows the leader otherwise. Every member needs the same sealing key (see
        /// docs/high-availability.md).
        #[arg(long, value_name = "URLS", value_delimiter = ',')]
        pub sequencer_group: Vec<String>,
        /// This member's name in its sequencer group, unique among the members [default: the
        /// host name and the peer-to-peer port].
        #[arg(long, value_name = "NAME")]
        pub sequencer_group_name: Option<String>,
        /// Seconds a sequencer group's leader keeps its leadership without renewing it: about
        /// how long blocks pause when the leader's machine is lost (etcd's minimum applies; at
        /// most 3600).
        #[arg(long, value_name = "SECS", default_value_t = c::DEFAULT_SEQUENCER_GROUP_LEASE_SECS)]
        pub sequencer_group_lease: u64,
    }
}

impl MinerArgs {
    /// The block period.
    pub(crate) fn block_period(&self) -> anyhow::Result<Duration> {
        anyhow::ensure!(
            self.block_time <= c::MAX_BLOCK_TIME_SECS,
            "block-time: {} s is longer than a sequencer's period can be; give at most {} (a day)",
            self.block_time,
            c::MAX_BLOCK_TIME_SECS
        );
        Ok(Duration::from_secs(self.block_time))
    }

    /// The sequencer group to join, if any; `p2p_port` names the member by default.
    pub(crate) fn group(&self, p2p_port: u16) -> anyhow::Result<Option<GroupConfig>> {
        if self.sequencer_group.is_empty() {
            return Ok(None);
        }
        for url in &self.sequencer_group {
            anyhow::ensure!(
                url.starts_with("http://") || url.starts_with("https://"),
                "sequencer-group: {url:?} is not an etcd client URL; give URLs like \
                 http://127.0.0.1:2379, comma-separated"
            );
        }
        anyhow::ensure!(
            (1..=c::MAX_SEQUENCER_GROUP_LEASE_SECS).contains(&self.sequencer_group_lease),
            "sequencer-group-lease: give 1 to {} seconds (blocks pause about this long when the \
             leader's machine is lost)",
            c::MAX_SEQUENCER_GROUP_LEASE_SECS
        );
        let name = match &self.sequencer_group_name {
            Some(n) if n.is_empty() || n.contains('/') => anyhow::bail!(
                "sequencer-group-name: {n:?} cannot name a member; use letters, digits, '-' \
                 or '.'"
            ),
            Some(n) => n.clone(),
            None => format!("{}-{p2p_port}", host_name()),
        };
        Ok(Some(GroupConfig {
            endpoints: self.sequencer_group.clone(),
            name,
            lease: Duration::from_secs(self.sequencer_group_lease),
        }))
    }
}

/// This machine's host name (`/etc/hostname`), or `l2node` when it cannot be read.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "l2node".into())
}

/// What [`ChainArgs`] resolve to: the chain, the sealing key and where the data goes by default.
#[derive(Debug)]
pub(crate) struct ChainSetup {
    /// The chain.
    pub spec: Arc<ChainSpec>,
    /// The sealing key; `None` on a follower.
    pub signer: Option<PrivateKeySigner>,
    /// The dev chain (its dev sequencer key is also the default Karma slasher).
    pub dev: bool,
    /// The data directory when `--data-path` is not given.
    pub default_dir: PathBuf,
}

/// `l2node run`'s data directory without `--data-path`.
pub(crate) const RUN_DATA_PATH: &str = "l2node-data";
/// `l2node run --dev`'s data directory without `--data-path`.
pub(crate) const DEV_DATA_PATH: &str = "l2node-data/dev";

impl ChainArgs {
    /// Reads the genesis (or builds the dev chain's, whose period is `block_time` seconds) and
    /// the sealing key.
    pub(crate) fn resolve(&self, block_time: u64) -> anyhow::Result<ChainSetup> {
        // clap only sees the command line; one of the two may come from the file.
        anyhow::ensure!(
            !(self.dev && self.genesis_file.is_some()),
            "--dev and --genesis-file exclude each other (one of them may come from --config-file)"
        );
        let (spec, default_dir, dev_key) = if self.dev {
            let spec = ChainSpec::from_genesis(dev::dev_genesis(block_time))?;
            (spec, DEV_DATA_PATH, Some(dev::dev_sequencer()))
        } else {
            let path = self.genesis_file.as_ref().context(
                "--genesis-file is required (or --dev for the built-in development chain)",
            )?;
            let spec = ChainSpec::from_genesis_file(path)
                .with_context(|| format!("reading genesis {}", path.display()))?;
            (spec, RUN_DATA_PATH, None)
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
        Ok(ChainSetup {
            spec: Arc::new(spec),
            signer,
            dev: self.dev,
            default_dir: default_dir.into(),
        })
    }
}

//! The chain and the node's role (`run` only: `devnet` always runs the dev chain with a dev
//! sequencer and a follower) and block production (`run` and `devnet`).

use std::{path::PathBuf, sync::Arc, time::Duration};

use alloy_signer_local::PrivateKeySigner;
use anyhow::Context;
use clap::ArgAction;
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
        /// Seconds between blocks; 0 mines a block as soon as transactions arrive.
        #[arg(long, value_name = "SECS", default_value_t = c::DEFAULT_BLOCK_TIME_SECS)]
        pub block_time: u64,
        /// Seal blocks even when there is no transaction.
        #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
              default_value_t = false, value_name = "BOOL")]
        pub create_empty_blocks: bool,
    }
}

impl MinerArgs {
    /// The block period.
    pub(crate) fn block_period(&self) -> Duration {
        Duration::from_secs(self.block_time)
    }
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

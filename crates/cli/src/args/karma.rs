//! Karma operation (`--gasless-kill-switch-file`, `--karma-slasher-key`) and its
//! [`KarmaNodeConfig`]. Used on a chain whose genesis has a `karma` section.

use std::path::PathBuf;

use anyhow::Context;
use l2node_launch::KarmaNodeConfig;
use l2node_node::dev;

option_group! {
    /// Karma: the gasless kill switch and slashing.
    #[command(next_help_heading = "Karma")]
    pub(crate) struct KarmaArgs {
        /// While this file exists, every gasless path is off (checked every second): free
        /// transactions are refused, estimates turn premium, premium still works.
        #[arg(long, value_name = "FILE")]
        pub gasless_kill_switch_file: Option<PathBuf>,
        /// Key holding the Karma slasher role (hex). A sequencer with it refuses a second,
        /// different free transaction for a sender and nonce already pending and submits
        /// Karma.slash(sender). --dev (and devnet) use the dev sequencer key, which is the dev
        /// chain's slasher.
        #[arg(long, env = "L2NODE_KARMA_SLASHER_KEY", value_name = "HEX", hide_env_values = true)]
        pub karma_slasher_key: Option<String>,
    }
}

impl KarmaArgs {
    /// The Karma configuration; on the dev chain the slasher defaults to the dev sequencer key.
    pub(crate) fn config(&self, dev_chain: bool) -> anyhow::Result<KarmaNodeConfig> {
        let slasher = match &self.karma_slasher_key {
            Some(hex) => Some(
                hex.trim()
                    .parse()
                    .context("--karma-slasher-key must be a 32-byte hex private key")?,
            ),
            None if dev_chain => Some(dev::dev_sequencer()),
            None => None,
        };
        Ok(KarmaNodeConfig {
            kill_switch_file: self.gasless_kill_switch_file.clone(),
            slasher,
        })
    }
}

//! Peer-to-peer options (`--p2p-*`, `--bootnodes`, `--max-peers`) and their [`P2pConfig`].

use std::{
    net::{IpAddr, Ipv4Addr},
    path::Path,
};

use clap::ArgAction;
use l2node_node::constants as c;
use l2node_node::p2p::{Multiaddr, P2pConfig, P2pRole};

/// `run`'s peer-to-peer host without `--p2p-host`: every interface, so followers elsewhere can
/// reach a sequencer.
pub(crate) const RUN_P2P_HOST: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
/// `devnet`'s peer-to-peer host without `--p2p-host`: its two nodes talk on loopback.
pub(crate) const DEVNET_P2P_HOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

option_group! {
    /// Peers (libp2p: gossip of blocks and transactions, block sync).
    #[command(next_help_heading = "Peer-to-peer")]
    pub(crate) struct P2pArgs {
        /// Connect to peers over libp2p (devnet needs it: its follower syncs over it).
        #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
              default_value_t = true, value_name = "BOOL")]
        pub p2p_enabled: bool,
        /// Peer-to-peer listen host [default: 0.0.0.0; devnet: 127.0.0.1].
        #[arg(long, value_name = "IP")]
        pub p2p_host: Option<IpAddr>,
        /// Peer-to-peer listen port (TCP; 0 picks a free one). devnet: the sequencer's; the
        /// follower takes the next one (or a free one with 0).
        #[arg(long, value_name = "PORT", default_value_t = c::DEFAULT_P2P_PORT)]
        pub p2p_port: u16,
        /// Peers to connect to and keep connected, as libp2p multiaddrs
        /// (`/ip4/127.0.0.1/tcp/30303/p2p/<peer id>`, printed by a node at start),
        /// comma-separated. devnet: dialled by both nodes (the follower also dials its sequencer).
        #[arg(long, value_name = "MULTIADDR", value_delimiter = ',')]
        pub bootnodes: Vec<Multiaddr>,
        /// Most connected peers.
        #[arg(long, value_name = "N", default_value_t = c::DEFAULT_MAX_PEERS)]
        pub max_peers: u32,
        /// How a new follower catches up: `full` executes every block since genesis; `snap`
        /// takes the state of a recent block from its peers (each chunk checked against that
        /// block's state root), then executes the blocks after it. A node joined by snapshot
        /// holds no blocks or state before its snapshot's block.
        #[arg(long, value_enum, value_name = "MODE", default_value_t = SyncMode::Full)]
        pub syncmode: SyncMode,
    }
}

/// `--syncmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SyncMode {
    /// Execute every block since genesis.
    Full,
    /// Join from a state snapshot of the peers (a database holding only genesis).
    Snap,
}

/// As `--syncmode` parses it (case-insensitive), for `syncmode` in `--config-file`.
impl std::str::FromStr for SyncMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        <Self as clap::ValueEnum>::from_str(s, true)
    }
}

impl P2pArgs {
    /// The peer-to-peer configuration of a node whose data is in `data_dir` (the node key lives
    /// there); `None` with `--p2p-enabled false`.
    pub(crate) fn config(
        &self,
        default_host: IpAddr,
        data_dir: &Path,
        sequencer: bool,
    ) -> Option<P2pConfig> {
        self.p2p_enabled.then(|| P2pConfig {
            host: self.p2p_host.unwrap_or(default_host),
            port: self.p2p_port,
            bootnodes: self.bootnodes.clone(),
            max_peers: self.max_peers,
            key_path: l2node_launch::p2p_key_path(data_dir),
            role: if sequencer {
                P2pRole::Sequencer
            } else {
                P2pRole::Follower
            },
            snap_sync: self.syncmode == SyncMode::Snap,
        })
    }
}

//! The node commands: `run`, `devnet` and `import`, the groups each flattens, and the one
//! conversion of those groups into a [`NodeConfig`].

use std::{
    net::IpAddr,
    path::{Path, PathBuf},
    sync::Arc,
};

use alloy_signer_local::PrivateKeySigner;
use anyhow::Context;
use clap::Args;
use l2node_launch::NodeConfig;
use l2node_node::chainspec::ChainSpec;
use l2node_node::dev;
use l2node_node::p2p::Multiaddr;
use l2node_rpc::RpcConfig;

use super::config_file::ConfigFile;
use super::{
    chain::ChainSetup, p2p::DEVNET_P2P_HOST, p2p::RUN_P2P_HOST, ChainArgs, KarmaArgs, Merge,
    MetricsArgs, MinerArgs, P2pArgs, PoolArgs, RpcArgs, StorageArgs,
};

/// The option groups of a node, shared by `run` and `devnet` (which applies them to both its
/// nodes).
#[derive(Debug, Clone, PartialEq, Args)]
pub(crate) struct NodeArgs {
    /// Block production.
    #[command(flatten)]
    pub miner: MinerArgs,
    /// JSON-RPC.
    #[command(flatten)]
    pub rpc: RpcArgs,
    /// Peer-to-peer.
    #[command(flatten)]
    pub p2p: P2pArgs,
    /// Transaction pool.
    #[command(flatten)]
    pub pool: PoolArgs,
    /// Karma.
    #[command(flatten)]
    pub karma: KarmaArgs,
    /// Metrics.
    #[command(flatten)]
    pub metrics: MetricsArgs,
    /// Storage.
    #[command(flatten)]
    pub storage: StorageArgs,
}

/// What the command decides for one node, not the option groups: the chain, the role, where the
/// data goes.
#[derive(Debug, Clone)]
pub(crate) struct Role {
    /// The chain.
    pub spec: Arc<ChainSpec>,
    /// The sealing key (a sequencer); `None` for a follower.
    pub signer: Option<PrivateKeySigner>,
    /// The dev chain (the dev sequencer key is then the default slasher).
    pub dev: bool,
    /// The node's data directory.
    pub data_dir: PathBuf,
    /// Peer-to-peer host when `--p2p-host` is not given.
    pub default_p2p_host: IpAddr,
}

impl NodeArgs {
    /// Merges the file's groups under the command line's.
    pub(crate) fn merge(self, file: &ConfigFile, given: &dyn Fn(&str) -> bool) -> Self {
        Self {
            miner: self.miner.merge(file.miner.clone(), given),
            rpc: self.rpc.merge(file.rpc.clone(), given),
            p2p: self.p2p.merge(file.p2p.clone(), given),
            pool: self.pool.merge(file.pool.clone(), given),
            karma: self.karma.merge(file.karma.clone(), given),
            metrics: self.metrics.merge(file.metrics.clone(), given),
            storage: self.storage.merge(file.storage.clone(), given),
        }
    }

    /// The runtime configuration of one node: each group converts once, here.
    pub(crate) fn to_config(&self, role: Role) -> anyhow::Result<NodeConfig> {
        Ok(NodeConfig {
            p2p: self
                .p2p
                .config(role.default_p2p_host, &role.data_dir, role.signer.is_some()),
            db_cache_bytes: self.storage.db_cache_size,
            history_window: self.storage.window()?,
            group: self.miner.group(self.p2p.p2p_port)?,
            block_time: self.miner.block_period()?,
            create_empty_blocks: self.miner.create_empty_blocks,
            rpc_server: self.rpc.server_config_for(role.dev)?,
            rpc: RpcConfig {
                // A dev node unlocks its dev accounts, as anvil and geth --dev.
                unlocked: if role.dev {
                    dev::dev_accounts()
                } else {
                    Vec::new()
                },
                ..self.rpc.rpc_config()
            },
            pool: self.pool.config(),
            metrics: self.metrics.config()?,
            karma: self.karma.config(role.dev)?,
            spec: role.spec,
            signer: role.signer,
            data_dir: role.data_dir,
        })
    }
}

/// `l2node run`.
#[derive(Debug, Clone, PartialEq, Args)]
pub(crate) struct RunArgs {
    /// The chain and the role.
    #[command(flatten)]
    pub chain: ChainArgs,
    /// Everything else.
    #[command(flatten)]
    pub node: NodeArgs,
}

impl RunArgs {
    /// Merges the file under the command line.
    pub(crate) fn merge(self, file: &ConfigFile, given: &dyn Fn(&str) -> bool) -> Self {
        Self {
            chain: self.chain.merge(file.chain.clone(), given),
            node: self.node.merge(file, given),
        }
    }

    /// The runtime configuration these arguments describe.
    pub(crate) fn into_config(self) -> anyhow::Result<NodeConfig> {
        let ChainSetup {
            spec,
            signer,
            dev,
            default_dir,
        } = self.chain.resolve(self.node.miner.block_time)?;
        self.node.to_config(Role {
            spec,
            signer,
            dev,
            data_dir: self.node.storage.data_dir(&default_dir),
            default_p2p_host: RUN_P2P_HOST,
        })
    }
}

/// Two ports, HTTP then WebSocket: `8545,8546` on the command line, `"8545,8546"` or
/// `[8545, 8546]` in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PortPair {
    /// HTTP JSON-RPC port.
    pub http: u16,
    /// WebSocket JSON-RPC port.
    pub ws: u16,
}

impl std::str::FromStr for PortPair {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parse = |p: &str| p.trim().parse::<u16>().ok();
        match s.split_once(',') {
            Some((http, ws)) => match (parse(http), parse(ws)) {
                (Some(http), Some(ws)) => Ok(Self { http, ws }),
                _ => Err(format!("{s:?}: two ports 0-65535 expected, HTTP,WS")),
            },
            None => Err(format!(
                "{s:?}: two ports expected, HTTP,WS (e.g. 8545,8546)"
            )),
        }
    }
}

impl std::fmt::Display for PortPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{},{}", self.http, self.ws)
    }
}

/// devnet's follower ports without `--follower-ports`: below the sequencer's 8545/8546, so the
/// pair is easy to remember.
pub(crate) const DEVNET_FOLLOWER_PORTS: PortPair = PortPair {
    http: 8445,
    ws: 8446,
};
/// devnet's data directory without `--data-path`.
pub(crate) const DEVNET_DATA_PATH: &str = "l2node-data/devnet";

option_group! {
    /// What differs between devnet's two nodes: their JSON-RPC ports.
    #[command(next_help_heading = "Devnet")]
    pub(crate) struct DevnetPortsArgs {
        /// The sequencer's HTTP and WebSocket ports [default: --rpc-http-port,--rpc-ws-port,
        /// i.e. 8545,8546]; wins over those two.
        #[arg(long, value_name = "HTTP,WS")]
        pub sequencer_ports: Option<PortPair>,
        /// The follower's HTTP and WebSocket ports.
        #[arg(long, value_name = "HTTP,WS", default_value_t = DEVNET_FOLLOWER_PORTS)]
        pub follower_ports: PortPair,
    }
}

/// `l2node devnet`: every node group of `run`, applied to both nodes; the nodes differ only in
/// role (sequencer / follower), data directory, JSON-RPC ports and peer-to-peer port.
#[derive(Debug, Clone, PartialEq, Args)]
pub(crate) struct DevnetArgs {
    /// The groups both nodes take.
    #[command(flatten)]
    pub node: NodeArgs,
    /// The follower's (and optionally the sequencer's) ports.
    #[command(flatten)]
    pub ports: DevnetPortsArgs,
}

impl DevnetArgs {
    /// Merges the file under the command line.
    pub(crate) fn merge(self, file: &ConfigFile, given: &dyn Fn(&str) -> bool) -> Self {
        Self {
            node: self.node.merge(file, given),
            ports: self.ports.merge(file.devnet.clone(), given),
        }
    }

    /// Warnings for keys of the file that devnet does not use although `run` does: devnet always
    /// runs the dev chain with a dev sequencer and a follower.
    pub(crate) fn ignored_keys(file: &ConfigFile) -> Vec<String> {
        ["genesis-file", "signer-key", "follower"]
            .into_iter()
            .filter(|key| file.has(key))
            .map(|key| {
                format!(
                    "{}: `{key}` is ignored by devnet, which runs the dev chain with a dev \
                     sequencer and a follower",
                    file.name()
                )
            })
            .collect()
    }

    /// The base data directory (the nodes' are `sequencer` and `follower` inside it).
    pub(crate) fn data_dir(&self) -> PathBuf {
        self.node.storage.data_dir(Path::new(DEVNET_DATA_PATH))
    }

    /// The role of one node: the dev chain (period `--block-time`), its key and directory.
    fn role(&self, name: &str, signer: Option<PrivateKeySigner>) -> anyhow::Result<Role> {
        anyhow::ensure!(
            self.node.p2p.p2p_enabled,
            "devnet's follower syncs from its sequencer over peer-to-peer: p2p-enabled cannot be \
             false"
        );
        anyhow::ensure!(
            self.node.miner.sequencer_group.is_empty(),
            "sequencer-group: devnet runs one sequencer and one follower; start the group's \
             members with `l2node run` (docs/high-availability.md)"
        );
        let spec = ChainSpec::from_genesis(dev::dev_genesis(self.node.miner.block_time))?;
        Ok(Role {
            spec: Arc::new(spec),
            signer,
            dev: true,
            data_dir: self.data_dir().join(name),
            default_p2p_host: DEVNET_P2P_HOST,
        })
    }

    /// The sequencer: the groups as given, sealing with the dev key, on `--sequencer-ports`
    /// (else `--rpc-http-port` / `--rpc-ws-port`) and `--p2p-port`.
    pub(crate) fn sequencer(&self) -> anyhow::Result<NodeConfig> {
        let mut cfg = self
            .node
            .to_config(self.role("sequencer", Some(dev::dev_sequencer()))?)?;
        let ports = self.ports.sequencer_ports.unwrap_or(PortPair {
            http: self.node.rpc.rpc_http_port,
            ws: self.node.rpc.rpc_ws_port,
        });
        cfg.rpc_server.http_addr.set_port(ports.http);
        cfg.rpc_server.ws_addr.set_port(ports.ws);
        Ok(cfg)
    }

    /// The follower: the same groups, no key, on `--follower-ports` and the next peer-to-peer
    /// port, dialling `sequencer` (the sequencer's address with its peer id) besides
    /// `--bootnodes`. Without metrics: the exporter is per process and started with the
    /// sequencer.
    pub(crate) fn follower(&self, sequencer: &Multiaddr) -> anyhow::Result<NodeConfig> {
        let mut cfg = self.node.to_config(self.role("follower", None)?)?;
        cfg.rpc_server
            .http_addr
            .set_port(self.ports.follower_ports.http);
        cfg.rpc_server
            .ws_addr
            .set_port(self.ports.follower_ports.ws);
        let p2p = cfg.p2p.as_mut().context("devnet runs peer-to-peer")?;
        p2p.port = match self.node.p2p.p2p_port {
            0 => 0,
            port => port
                .checked_add(1)
                .context("--p2p-port: the follower takes the next port; 65535 has none")?,
        };
        p2p.bootnodes.push(sequencer.clone());
        cfg.metrics = None;
        Ok(cfg)
    }
}

/// `l2node import`.
#[derive(Debug, Clone, PartialEq, Args)]
pub(crate) struct ImportArgs {
    /// geth-format genesis.json of the chain (required: here or as `genesis-file` in
    /// --config-file).
    #[arg(long, value_name = "FILE")]
    pub genesis_file: Option<PathBuf>,
    /// Data directory and database cache.
    #[command(flatten)]
    pub storage: StorageArgs,
    /// The exported blocks.
    pub file: PathBuf,
}

impl ImportArgs {
    /// Merges the file under the command line: `genesis-file` and the storage group.
    pub(crate) fn merge(self, file: &ConfigFile, given: &dyn Fn(&str) -> bool) -> Self {
        Self {
            genesis_file: if given("genesis_file") {
                self.genesis_file
            } else {
                file.chain.genesis_file.clone()
            },
            storage: self.storage.merge(file.storage.clone(), given),
            file: self.file,
        }
    }

    /// The genesis file.
    pub(crate) fn genesis(&self) -> anyhow::Result<&Path> {
        self.genesis_file
            .as_deref()
            .context("--genesis-file is required (or `genesis-file` in --config-file)")
    }

    /// The data directory.
    pub(crate) fn data_dir(&self) -> PathBuf {
        self.storage
            .data_dir(Path::new(super::chain::RUN_DATA_PATH))
    }
}

//! The libp2p side of a node: the protocols it speaks (bans, connection limits, identify, ping,
//! gossipsub, block sync) with their configuration, the swarm over TCP with Noise and Yamux,
//! and the gossip topics.

use std::time::Duration;

use alloy_primitives::keccak256;
use libp2p::{
    allow_block_list, connection_limits, gossipsub, identify, identity, noise, ping,
    request_response::{self, cbor, ProtocolSupport},
    swarm::NetworkBehaviour,
    tcp, yamux, StreamProtocol, Swarm,
};

use crate::chain::Chain;
use crate::constants::{GOSSIP_MAX_MESSAGE_BYTES, SYNC_REQUEST_TIMEOUT};
use crate::p2p::P2pError;
use crate::sync::{self, SyncRequest, SyncResponse};

/// Every protocol of the node; the derive makes the swarm's event type, `BehaviourEvent`.
#[derive(NetworkBehaviour)]
pub(super) struct Behaviour {
    /// Banned peers (see `Peers::tick` for when a ban ends).
    pub(super) blocked: allow_block_list::Behaviour<allow_block_list::BlockedPeers>,
    /// `--max-peers`.
    pub(super) limits: connection_limits::Behaviour,
    /// Agent and protocols, for `admin_peers`.
    pub(super) identify: identify::Behaviour,
    /// Keeps idle connections checked.
    pub(super) ping: ping::Behaviour,
    /// New blocks and transactions.
    pub(super) gossipsub: gossipsub::Behaviour,
    /// Block sync (`crate::sync`).
    pub(super) sync: cbor::Behaviour<SyncRequest, SyncResponse>,
}

fn behaviour(key: &identity::Keypair, max_peers: u32) -> Result<Behaviour, P2pError> {
    let gossip_cfg = gossipsub::ConfigBuilder::default()
        .max_transmit_size(GOSSIP_MAX_MESSAGE_BYTES)
        .validation_mode(gossipsub::ValidationMode::Strict)
        // A message is relayed only after we validated it (imported the block, pooled the
        // transaction).
        .validate_messages()
        // The same bytes are the same message, whoever publishes them.
        .message_id_fn(|m| gossipsub::MessageId::from(&keccak256(&m.data)[..20]))
        .build()
        .map_err(|e| P2pError::Setup(e.to_string()))?;
    let gossipsub = gossipsub::Behaviour::new(
        gossipsub::MessageAuthenticity::Signed(key.clone()),
        gossip_cfg,
    )
    .map_err(|e| P2pError::Setup(e.to_string()))?;
    Ok(Behaviour {
        blocked: Default::default(),
        limits: connection_limits::Behaviour::new(
            connection_limits::ConnectionLimits::default()
                .with_max_established(Some(max_peers))
                .with_max_established_per_peer(Some(2)),
        ),
        identify: identify::Behaviour::new(
            identify::Config::new("/l2node/1.0.0".into(), key.public())
                .with_agent_version(format!("l2node/{}", env!("CARGO_PKG_VERSION"))),
        ),
        ping: ping::Behaviour::new(ping::Config::new()),
        gossipsub,
        sync: cbor::Behaviour::new(
            [(StreamProtocol::new(sync::PROTOCOL), ProtocolSupport::Full)],
            request_response::Config::default().with_request_timeout(SYNC_REQUEST_TIMEOUT),
        ),
    })
}

/// The swarm of node `key`, not listening yet.
pub(super) fn build_swarm(
    key: identity::Keypair,
    max_peers: u32,
) -> Result<Swarm<Behaviour>, P2pError> {
    let behaviour = behaviour(&key, max_peers)?;
    Ok(libp2p::SwarmBuilder::with_existing_identity(key)
        .with_tokio()
        .with_tcp(
            tcp::Config::default().nodelay(true),
            noise::Config::new,
            yamux::Config::default,
        )
        .map_err(|e| P2pError::Setup(e.to_string()))?
        .with_behaviour(|_| behaviour)
        .map_err(|e| P2pError::Setup(e.to_string()))?
        // Connections stay up between blocks (gossip keeps no stream open while idle).
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(3600)))
        .build())
}

/// The blocks, transactions and exclusions topics of `chain`: named after its chain id and
/// genesis, so nodes of another chain never share a topic with it.
pub(super) fn topics(
    chain: &Chain,
) -> (
    gossipsub::IdentTopic,
    gossipsub::IdentTopic,
    gossipsub::IdentTopic,
) {
    let genesis = chain.genesis_hash();
    let topic = |kind: &str| {
        gossipsub::IdentTopic::new(format!(
            "/l2node/{}/{}/{kind}/1",
            chain.spec().chain_id,
            &genesis.to_string()[2..10]
        ))
    };
    (topic("blocks"), topic("txs"), topic("exclusions"))
}

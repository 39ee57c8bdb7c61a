//! What the sequencer's miner asks of a sequencer group (implemented by `l2node-group` on
//! etcd): may this member seal now, and record each sealed block in the group's log before the
//! block is stored, answered or announced. Without a group the miner seals on every turn.

use std::sync::Arc;

use alloy_primitives::B256;
pub use l2node_api::types::{GroupLeader, GroupMember};

/// A sequencer group as the miner sees it.
pub trait SequencerGroup: Send + Sync + std::fmt::Debug {
    /// `Ok` when this member holds the group's leadership, is not paused and its lease has
    /// time left; otherwise why not (a standby, paused, the lease running out).
    fn may_seal(&self) -> Result<(), String>;

    /// Records the sealed block `number` (hash `hash`, `rlp` its RLP encoding) in the group's
    /// log, committed by the engine's quorum, fenced by this member's leadership: it fails
    /// when another member leads now or a block of that height is already in the log. Called
    /// on a blocking thread, before the block is stored: a failure keeps the block unpublished.
    fn append(&self, number: u64, hash: B256, rlp: &[u8]) -> Result<(), String>;

    /// Notified each time this member takes the leadership: the miner then seals as soon as
    /// the block period after the head allows, rather than on its own period's next tick (the
    /// former leader's silence already took a lease).
    fn leadership_taken(&self) -> Arc<tokio::sync::Notify>;
}

/// A member's part in the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupRole {
    /// Holds the leadership and seals.
    Leader,
    /// Follows the leader's blocks and campaigns when the leadership is free.
    Standby,
    /// Neither seals nor campaigns (`conductor_pause`).
    Paused,
}

impl GroupRole {
    /// The name `/readiness` and `l2node health` show.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Leader => "leader",
            Self::Standby => "standby",
            Self::Paused => "paused",
        }
    }
}

/// A member's view of its group (the CONDUCTOR namespace and `/readiness` show it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GroupStatus {
    /// This member's name.
    pub name: String,
    /// This member's part.
    pub role: GroupRole,
    /// The leader as last seen (this member when it leads), if any.
    pub leader: Option<GroupLeader>,
    /// The members that wrote their entry within their lease.
    pub members: Vec<GroupMember>,
}

/// What operators can do with a member (the CONDUCTOR namespace).
pub trait GroupControl: Send + Sync + std::fmt::Debug {
    /// The member's view of the group.
    fn status(&self) -> GroupStatus;
    /// Stops campaigning and sealing; a leader gives up its leadership.
    fn pause(&self);
    /// Campaigns again.
    fn resume(&self);
    /// A leader gives up its leadership and lets another member take it (it does not campaign
    /// for two leases); refused on a member that does not lead.
    fn transfer_leadership(&self) -> Result<(), String>;
}

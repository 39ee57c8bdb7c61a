//! A sequencer group: several sequencers of one chain, exactly one of which seals at a time,
//! on etcd (docs/high-availability.md says why etcd and how to run it).
//!
//! - **Leadership** is an etcd key (`<prefix>/leader`) attached to the member's lease
//!   (`--sequencer-group-lease`, renewed every third of it). A member takes it with a
//!   transaction that succeeds only while the key does not exist; the revision that created
//!   the key is the leadership's *term*. When the leader stops renewing (killed, paused,
//!   partitioned), etcd deletes the key when the lease runs out and a standby takes it.
//! - **The block log.** Each sealed block goes into `<prefix>/blocks/<number>` before it is
//!   stored, answered or gossiped, by a transaction that succeeds only if the leader key still
//!   has this member's term *and* no block of that height exists: a member that lost its
//!   leadership (even one that was frozen and does not know yet) cannot publish, and no height
//!   ever holds two blocks. etcd commits the write on a quorum of its members, so every block
//!   anyone has seen is in the log; a new leader imports the log past its head before it seals.
//!   The log keeps the last [`LOG_RETAINED_BLOCKS`] blocks.
//! - **Signing.** The members share the sealing key (one signer on the chain), so followers
//!   check every block's seal as before whichever member sealed it; the fence above, not the
//!   key, keeps two members from sealing at one height.
//! - **Transactions.** Members gossip the transactions their pools take, so every standby
//!   holds what the leader acknowledged and includes it once it leads.

mod etcd;
#[cfg(feature = "test-utils")]
pub mod test_utils;

use std::{
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use alloy_consensus::{Block, TxEnvelope};
use alloy_primitives::B256;
use alloy_rlp::Decodable;
use parking_lot::Mutex;

use etcd::{Compare, Op};
pub use etcd::{Etcd, EtcdError};
use l2node_node::chain::Chain;
use l2node_node::group::{
    GroupControl, GroupLeader, GroupMember, GroupRole, GroupStatus, SequencerGroup,
};

/// Blocks the log keeps: a standby further behind than this syncs from its peers before it can
/// lead. About 17 minutes of 1 s blocks; each block is deleted from the log when the block this
/// many heights later is appended, so etcd's space stays bounded (with its compaction on).
pub const LOG_RETAINED_BLOCKS: u64 = 1024;

/// How often a member refreshes its entry in the member list.
const MEMBER_REFRESH: Duration = Duration::from_secs(1);

/// Blocks read from the log per request while catching up.
const CATCH_UP_BATCH: u64 = 64;

/// How a node joins a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupConfig {
    /// The etcd client URLs (`--sequencer-group`).
    pub endpoints: Vec<String>,
    /// This member's name (`--sequencer-group-name`), unique in the group.
    pub name: String,
    /// The leadership lease (`--sequencer-group-lease`): how long a silent leader keeps the
    /// leadership, so about how long blocks pause when it dies.
    pub lease: Duration,
}

/// Errors starting a member.
#[derive(Debug, thiserror::Error)]
pub enum GroupError {
    /// etcd could not be used.
    #[error("sequencer group: {0}")]
    Etcd(#[from] EtcdError),
}

/// The etcd keys of one chain's group.
#[derive(Debug)]
struct Keys {
    leader: Vec<u8>,
    blocks: String,
    members: String,
}

impl Keys {
    /// The keys under `/l2node/<chain id>-<genesis hash>/`: groups of different chains can
    /// share one etcd.
    fn new(chain_id: u64, genesis: B256) -> Self {
        let prefix = format!("/l2node/{chain_id}-{genesis:x}/");
        Self {
            leader: format!("{prefix}leader").into_bytes(),
            blocks: format!("{prefix}blocks/"),
            members: format!("{prefix}members/"),
        }
    }

    /// Block `n`'s key; zero-padded so that key order is block order.
    fn block(&self, n: u64) -> Vec<u8> {
        format!("{}{n:020}", self.blocks).into_bytes()
    }

    /// The block number of a block key.
    fn block_number(&self, key: &[u8]) -> Option<u64> {
        std::str::from_utf8(key)
            .ok()?
            .strip_prefix(&self.blocks)?
            .parse()
            .ok()
    }
}

/// The end of the range of keys starting with `prefix`.
fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    *end.last_mut().expect("a non-empty prefix") += 1;
    end
}

/// This member's lease with etcd.
#[derive(Debug, Clone, Copy)]
struct Session {
    lease: i64,
    /// When the lease was last renewed (the request's start: the lease lasts at least until
    /// `renewed + ttl`).
    renewed: Instant,
}

#[derive(Debug, Default)]
struct State {
    session: Option<Session>,
    /// The term this member leads with.
    term: Option<i64>,
    /// The leader as last seen.
    leader: Option<GroupLeader>,
    paused: bool,
    /// A resigning leader stays out of the next elections until then.
    cooldown_until: Option<Instant>,
    /// Asked to give up the leadership.
    resign: bool,
    /// An append failed: the log may hold a block this node has not stored (its own, when
    /// the answer was lost); import it before sealing again.
    catch_up: bool,
    members: Vec<GroupMember>,
}

/// A member of a sequencer group: the control loop ([`Member::run`]), the miner's gate
/// ([`SequencerGroup`]) and the operators' handle ([`GroupControl`]).
#[derive(Debug)]
pub struct Member {
    etcd: Etcd,
    cfg: GroupConfig,
    keys: Keys,
    chain: Arc<Chain>,
    runtime: tokio::runtime::Handle,
    state: Mutex<State>,
    /// Set while this member leads: the peer-to-peer layer then publishes its blocks.
    active: Arc<AtomicBool>,
    /// Notified when this member takes the leadership (the miner seals at once).
    leadership: Arc<tokio::sync::Notify>,
}

impl Member {
    /// A member of the group of `chain`; call [`Member::run`] to take part. Must be called
    /// within the tokio runtime that will run it.
    pub fn new(cfg: GroupConfig, chain: Arc<Chain>) -> Result<Arc<Self>, GroupError> {
        // A request that takes longer than a third of the lease is as good as lost.
        let etcd = Etcd::new(cfg.endpoints.clone(), cfg.lease / 3)?;
        let keys = Keys::new(chain.spec().chain_id, chain.genesis_hash());
        Ok(Arc::new(Self {
            etcd,
            cfg,
            keys,
            chain,
            runtime: tokio::runtime::Handle::current(),
            state: Mutex::default(),
            active: Arc::default(),
            leadership: Arc::default(),
        }))
    }

    /// The flag set while this member leads (for the peer-to-peer layer).
    pub fn active_flag(&self) -> Arc<AtomicBool> {
        self.active.clone()
    }

    /// Leaves the group (the node stops; the control loop must be stopped first): ends this
    /// member's lease, which gives up its leadership at once and removes its entry.
    pub async fn leave(&self) {
        self.step_down("the node stopped");
        let session = self.state.lock().session.take();
        if let Some(s) = session {
            if let Err(e) = self.etcd.revoke(s.lease).await {
                tracing::warn!(target: "l2node::group", error = %e, "cannot end the lease: the leadership ends when it runs out");
            }
        }
    }

    /// The control loop: renews the lease, campaigns when the leadership is free, gives it up
    /// when asked, refreshes the member list. Runs until the task is aborted; a leader whose
    /// task stops loses the leadership when its lease runs out.
    pub async fn run(self: Arc<Self>) {
        let tick = (self.cfg.lease / 5).max(Duration::from_millis(50));
        let mut members_at = Instant::now() - MEMBER_REFRESH;
        loop {
            if let Err(e) = self.turn(&mut members_at).await {
                tracing::warn!(target: "l2node::group", error = %e, "sequencer group: an etcd request failed; trying again next turn (check that --sequencer-group names reachable etcd members)");
            }
            tokio::time::sleep(tick).await;
        }
    }

    async fn turn(&self, members_at: &mut Instant) -> Result<(), EtcdError> {
        let session = self.session().await?;
        let (term, paused, resign, cooling) = {
            let s = self.state.lock();
            let cooling = s.cooldown_until.is_some_and(|t| Instant::now() < t);
            (s.term, s.paused, s.resign, cooling)
        };
        match term {
            Some(term) if paused || resign => self.resign(term).await?,
            Some(term) if self.state.lock().catch_up => {
                if let Err(why) = self.catch_up(session.lease).await {
                    tracing::warn!(target: "l2node::group", term, reason = %why, "cannot continue the group's log: giving up the leadership");
                    self.resign(term).await?;
                }
                self.state.lock().catch_up = false;
            }
            Some(_) => {}
            None if paused || cooling => {}
            None => self.campaign(session).await?,
        }
        if members_at.elapsed() >= MEMBER_REFRESH {
            *members_at = Instant::now();
            self.refresh_members(session).await?;
        }
        Ok(())
    }

    /// This member's lease, renewed when a third of it has passed (granted anew once expired:
    /// a leader whose lease expired has lost the leadership).
    async fn session(&self) -> Result<Session, EtcdError> {
        let ttl = self.cfg.lease;
        let current = self.state.lock().session;
        if let Some(s) = current {
            if s.renewed.elapsed() < ttl / 3 {
                return Ok(s);
            }
            let sent = Instant::now();
            match self.etcd.keep_alive(s.lease).await {
                Ok(Some(_)) => {
                    let renewed = Session {
                        lease: s.lease,
                        renewed: sent,
                    };
                    self.state.lock().session = Some(renewed);
                    return Ok(renewed);
                }
                Ok(None) | Err(EtcdError::Refused { code: 5, .. }) => {
                    self.step_down("its lease expired");
                }
                Err(e) => {
                    if s.renewed.elapsed() >= ttl {
                        self.step_down("its lease could not be renewed in time");
                    }
                    return Err(e);
                }
            }
        }
        let sent = Instant::now();
        let lease = self.etcd.grant(ttl.as_secs().max(1)).await?;
        let s = Session {
            lease,
            renewed: sent,
        };
        self.state.lock().session = Some(s);
        Ok(s)
    }

    /// Tries to take the leadership; on success imports the log past the head first.
    async fn campaign(&self, session: Session) -> Result<(), EtcdError> {
        let name = self.cfg.name.as_bytes();
        let r = self
            .etcd
            .txn(
                &[Compare::Created(&self.keys.leader, 0)],
                &[Op::Put(&self.keys.leader, name, session.lease)],
                &[Op::Get(&self.keys.leader)],
            )
            .await?;
        if !r.succeeded {
            let leader = r
                .responses
                .first()
                .and_then(|r| r.response_range.as_ref())
                .and_then(|r| r.kvs.first())
                .map(|kv| GroupLeader {
                    name: String::from_utf8_lossy(&kv.value).into_owned(),
                    term: kv.create_revision,
                });
            self.state.lock().leader = leader;
            return Ok(());
        }
        let term = r.header.revision;
        if let Err(why) = self.catch_up(session.lease).await {
            tracing::warn!(target: "l2node::group", term, reason = %why, "took the leadership but cannot continue the chain: giving it up");
            self.state.lock().term = Some(term);
            self.resign(term).await?;
            return Ok(());
        }
        {
            let mut s = self.state.lock();
            s.term = Some(term);
            s.resign = false;
            s.leader = Some(GroupLeader {
                name: self.cfg.name.clone(),
                term,
            });
        }
        self.active.store(true, Ordering::SeqCst);
        self.leadership.notify_one();
        metrics::gauge!(TERM).set(term as f64);
        metrics::gauge!(IS_LEADER).set(1.0);
        metrics::counter!(LEADER_CHANGES).increment(1);
        tracing::info!(target: "l2node::group", name = %self.cfg.name, term, head = self.chain.head().header.number, "became the sequencer group's leader");
        Ok(())
    }

    /// Imports the log's blocks past the head (blocks a former leader published that gossip
    /// has not brought yet), renewing `lease` (the one the leadership was taken with) as it
    /// goes: a long catch-up must not outlive it.
    async fn catch_up(&self, lease: i64) -> Result<(), String> {
        let end = prefix_end(&self.keys.blocks);
        let renew = || async {
            match self.session().await {
                Ok(s) if s.lease == lease => Ok(()),
                Ok(_) => Err("its lease expired while it caught up".to_owned()),
                Err(e) => Err(format!("its lease could not be renewed: {e}")),
            }
        };
        loop {
            renew().await?;
            let next = self.chain.head().header.number + 1;
            let kvs = self
                .etcd
                .range(&self.keys.block(next), &end, CATCH_UP_BATCH)
                .await
                .map_err(|e| e.to_string())?;
            let Some(first) = kvs.first() else {
                return Ok(());
            };
            if self.keys.block_number(&first.key) != Some(next) {
                return Err(format!(
                    "the group's log continues after block {next}, beyond this node's head: it \
                     must sync from its peers first"
                ));
            }
            for kv in kvs {
                let block = Block::<TxEnvelope>::decode(&mut kv.value.as_slice())
                    .map_err(|e| format!("a block in the group's log does not decode: {e}"))?;
                let chain = self.chain.clone();
                let number = block.header.number;
                tokio::task::spawn_blocking(move || chain.import(block))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| format!("block {number} of the group's log: {e}"))?;
                // Only asks etcd once a third of the lease has passed.
                renew().await?;
            }
        }
    }

    /// Gives up the leadership of `term` (deletes the leader key if it is still ours) and
    /// stays out of elections for two leases.
    async fn resign(&self, term: i64) -> Result<(), EtcdError> {
        self.step_down("it resigned");
        self.state.lock().cooldown_until = Some(Instant::now() + 2 * self.cfg.lease);
        self.etcd
            .txn(
                &[Compare::Created(&self.keys.leader, term)],
                &[Op::Delete(&self.keys.leader)],
                &[],
            )
            .await?;
        Ok(())
    }

    /// Stops leading at once (the miner's next turn does not seal).
    fn step_down(&self, why: &str) {
        let mut s = self.state.lock();
        s.resign = false;
        if let Some(term) = s.term.take() {
            s.leader = None;
            self.active.store(false, Ordering::SeqCst);
            metrics::gauge!(IS_LEADER).set(0.0);
            tracing::warn!(target: "l2node::group", name = %self.cfg.name, term, reason = why, "lost the sequencer group's leadership");
        }
    }

    /// Writes this member's entry (attached to its lease) and reads everyone's.
    async fn refresh_members(&self, session: Session) -> Result<(), EtcdError> {
        let me = {
            let s = self.state.lock();
            GroupMember {
                name: self.cfg.name.clone(),
                head: self.chain.head().header.number,
                paused: s.paused,
                leader: s.term.is_some(),
            }
        };
        let key = format!("{}{}", self.keys.members, self.cfg.name).into_bytes();
        let value = serde_json::to_vec(&me).expect("a member entry serializes");
        let leader = self.keys.leader.as_slice();
        let r = self
            .etcd
            .txn(
                &[],
                &[Op::Put(&key, &value, session.lease), Op::Get(leader)],
                &[],
            )
            .await?;
        let leader = r
            .responses
            .get(1)
            .and_then(|r| r.response_range.as_ref())
            .and_then(|r| r.kvs.first())
            .map(|kv| GroupLeader {
                name: String::from_utf8_lossy(&kv.value).into_owned(),
                term: kv.create_revision,
            });
        let mut members: Vec<GroupMember> = self
            .etcd
            .range(
                self.keys.members.as_bytes(),
                &prefix_end(&self.keys.members),
                64,
            )
            .await?
            .iter()
            .filter_map(|kv| serde_json::from_slice(&kv.value).ok())
            .collect();
        for m in &mut members {
            m.leader = leader.as_ref().is_some_and(|l| l.name == m.name);
        }
        let mut s = self.state.lock();
        s.members = members;
        if s.term.is_none() {
            s.leader = leader;
        }
        Ok(())
    }

    async fn append_async(&self, number: u64, rlp: &[u8]) -> Result<(), String> {
        let Some(term) = self.state.lock().term else {
            return Err("this member no longer leads the group".into());
        };
        let block_key = self.keys.block(number);
        let old = number
            .checked_sub(LOG_RETAINED_BLOCKS)
            .map(|n| self.keys.block(n));
        let mut success = vec![Op::Put(&block_key, rlp, 0)];
        if let Some(old) = &old {
            success.push(Op::Delete(old));
        }
        let started = Instant::now();
        let r = self
            .etcd
            .txn(
                &[
                    Compare::Created(&self.keys.leader, term),
                    Compare::Created(&block_key, 0),
                ],
                &success,
                &[Op::Get(&self.keys.leader)],
            )
            .await
            .map_err(|e| e.to_string())?;
        if r.succeeded {
            metrics::histogram!(COMMIT_TIME).record(started.elapsed().as_secs_f64());
            return Ok(());
        }
        let leads = r
            .responses
            .first()
            .and_then(|r| r.response_range.as_ref())
            .and_then(|r| r.kvs.first())
            .is_some_and(|kv| kv.create_revision == term);
        if leads {
            Err(format!(
                "block {number} is already in the group's log (this member catches up first)"
            ))
        } else {
            self.step_down("another member took the leadership");
            Err("another member leads the group now".into())
        }
    }
}

impl SequencerGroup for Member {
    fn may_seal(&self) -> Result<(), String> {
        let s = self.state.lock();
        if s.paused {
            return Err("this member is paused (conductor_resume)".into());
        }
        if s.catch_up {
            return Err("this member is catching up with the group's log".into());
        }
        if s.term.is_none() {
            return Err(match &s.leader {
                Some(l) => format!("this member is a standby; {} leads the group", l.name),
                None => "this member is a standby; the group has no leader yet".into(),
            });
        }
        match s.session {
            Some(session) if session.renewed.elapsed() < self.cfg.lease => Ok(()),
            _ => Err("this member's lease is running out".into()),
        }
    }

    fn append(&self, number: u64, _hash: B256, rlp: &[u8]) -> Result<(), String> {
        let result = self.runtime.block_on(self.append_async(number, rlp));
        if result.is_err() {
            // A block of this height may be in the log (ours, if the answer was lost): the
            // control loop imports it before this member seals again. (Not here: the chain's
            // write lock is held while a block is appended.)
            self.state.lock().catch_up = true;
        }
        result
    }

    fn leadership_taken(&self) -> Arc<tokio::sync::Notify> {
        self.leadership.clone()
    }
}

impl GroupControl for Member {
    fn status(&self) -> GroupStatus {
        let s = self.state.lock();
        GroupStatus {
            name: self.cfg.name.clone(),
            role: if s.paused {
                GroupRole::Paused
            } else if s.term.is_some() {
                GroupRole::Leader
            } else {
                GroupRole::Standby
            },
            leader: s.leader.clone(),
            members: s.members.clone(),
        }
    }

    fn pause(&self) {
        self.state.lock().paused = true;
    }

    fn resume(&self) {
        self.state.lock().paused = false;
    }

    fn transfer_leadership(&self) -> Result<(), String> {
        let mut s = self.state.lock();
        if s.term.is_none() {
            return Err("this member does not lead the group: ask the leader \
                        (conductor_leaderWithID names it)"
                .into());
        }
        s.resign = true;
        Ok(())
    }
}

/// The leadership's current term.
pub const TERM: &str = "l2node_group_term";
/// 1 while this member leads.
pub const IS_LEADER: &str = "l2node_group_leader";
/// Times this member took the leadership.
pub const LEADER_CHANGES: &str = "l2node_group_leader_changes_total";
/// Time to commit a block to the group's log.
pub const COMMIT_TIME: &str = "l2node_group_commit_duration_seconds";

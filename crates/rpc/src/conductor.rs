//! `conductor_`: a sequencer group member's controls (off by default, loopback only).

use std::sync::Arc;

use jsonrpsee::core::RpcResult;
use l2node_api::{
    types::{GroupLeader, GroupMember},
    ConductorApiServer,
};
use l2node_node::group::{GroupControl, GroupRole};

use crate::error::RpcError;

/// The member's handle, `None` on a node outside any group.
#[derive(Debug, Clone)]
pub(crate) struct ConductorRpc {
    pub group: Option<Arc<dyn GroupControl>>,
}

impl ConductorRpc {
    fn group(&self) -> Result<&dyn GroupControl, RpcError> {
        self.group.as_deref().ok_or_else(|| {
            RpcError::Refused(
                "this node is not a member of a sequencer group: start it with \
                 --sequencer-group (the etcd endpoints) and --sequencer-group-name"
                    .into(),
            )
        })
    }
}

impl ConductorApiServer for ConductorRpc {
    fn leader(&self) -> RpcResult<bool> {
        let status = self.group()?.status();
        Ok(status.leader.is_some_and(|l| l.name == status.name))
    }

    fn active(&self) -> RpcResult<bool> {
        // A paused member does not seal (and gives its leadership up within a moment).
        Ok(self.group()?.status().role == GroupRole::Leader)
    }

    fn leader_with_id(&self) -> RpcResult<Option<GroupLeader>> {
        Ok(self.group()?.status().leader)
    }

    fn members(&self) -> RpcResult<Vec<GroupMember>> {
        Ok(self.group()?.status().members)
    }

    fn pause(&self) -> RpcResult<()> {
        self.group()?.pause();
        Ok(())
    }

    fn resume(&self) -> RpcResult<()> {
        self.group()?.resume();
        Ok(())
    }

    fn transfer_leader(&self) -> RpcResult<()> {
        Ok(self
            .group()?
            .transfer_leadership()
            .map_err(RpcError::Refused)?)
    }
}

//! The Karma ledger's derivation: what one block changes, computed from the block alone (its
//! transactions, their receipts' `AccountSlashed` events) and the state and ledger before it.
//! Every node that imports the same blocks computes the same ledger; the chain commits each
//! block's [`KarmaDelta`] in the block's own storage transaction.

use std::collections::{btree_map, BTreeMap};

use alloy_consensus::{Header, ReceiptEnvelope, Transaction, TxEnvelope};
use alloy_primitives::{Address, U256};

use super::{
    config::{check_tiers, KarmaConfig},
    contracts,
    policy::{self, Epochs, SenderState},
};
use l2node_storage::{LedgerAt, StateReader, StorageError};
use l2node_trie::state::{DenyEntry, DenyReason, KarmaDelta, KarmaTier};

/// The ledger rules of one chain (from its `karma` config).
#[derive(Debug, Clone)]
pub struct Ledger {
    cfg: KarmaConfig,
    epochs: Epochs,
}

/// The tiers in force for a block, and whether that block starts them.
#[derive(Debug, Clone)]
pub struct TiersInForce {
    /// The epoch of the block.
    pub epoch: u64,
    /// The tiers.
    pub tiers: Vec<KarmaTier>,
    /// The block is the first of its epoch: these tiers are recorded with it.
    pub new_epoch: bool,
}

impl Ledger {
    /// The ledger rules of `cfg`.
    pub fn new(cfg: KarmaConfig) -> Self {
        let epochs = Epochs {
            length: cfg.epoch_length,
            origin: cfg.epoch_origin,
        };
        Self { cfg, epochs }
    }

    /// The configuration.
    pub fn config(&self) -> &KarmaConfig {
        &self.cfg
    }

    /// Epoch arithmetic.
    pub fn epochs(&self) -> Epochs {
        self.epochs
    }

    /// The genesis block's ledger: the configured tiers, in force from the genesis epoch.
    pub fn genesis_delta(&self, timestamp: u64) -> KarmaDelta {
        KarmaDelta {
            tiers: Some((self.epochs.of(timestamp), self.cfg.tiers.clone())),
            ..Default::default()
        }
    }

    /// The tiers in force for a block at `timestamp` built on the state and ledger of its
    /// parent. In the parent's epoch they are the recorded ones; a new epoch takes the
    /// `KarmaTiers` contract's list as of the parent (a `TiersUpdated` applies from the next
    /// epoch), or keeps the recorded tiers if the contract holds an invalid list.
    pub fn tiers_for(
        &self,
        ledger: &LedgerAt,
        state: &dyn StateReader,
        timestamp: u64,
    ) -> Result<TiersInForce, StorageError> {
        let epoch = self.epochs.of(timestamp);
        let (recorded_epoch, recorded) = ledger
            .tiers()?
            .unwrap_or_else(|| (0, self.cfg.tiers.clone()));
        if recorded_epoch >= epoch {
            return Ok(TiersInForce {
                epoch,
                tiers: recorded,
                new_epoch: false,
            });
        }
        let on_chain = contracts::read_tiers(state, self.cfg.tiers_contract)?;
        let tiers = match check_tiers(&on_chain) {
            Ok(()) => on_chain,
            Err((i, reason)) => {
                tracing::warn!(target: "l2node::karma", tier = i, %reason, "KarmaTiers holds an invalid tier list; keeping the previous tiers");
                recorded
            }
        };
        Ok(TiersInForce {
            epoch,
            tiers,
            new_epoch: true,
        })
    }

    /// The state of a sender holding `balance` Karma for a block of `epoch` with `tiers` in
    /// force, from the ledger before that block.
    pub fn sender_state(
        &self,
        ledger: &LedgerAt,
        tiers: &[KarmaTier],
        epoch: u64,
        sender: Address,
        balance: U256,
    ) -> Result<SenderState, StorageError> {
        let tier_quota =
            policy::tier_of(balance, tiers).map_or(0, |(_, t)| u64::from(t.tx_per_epoch));
        Ok(SenderState {
            epoch,
            tier_quota,
            usage: ledger.usage(&sender, epoch)?,
            deny: ledger.deny(&sender)?.filter(|d| d.until_epoch >= epoch),
        })
    }

    /// A sender's Karma balance.
    pub fn balance(&self, state: &dyn StateReader, sender: Address) -> Result<U256, StorageError> {
        contracts::read_balance(state, self.cfg.karma_contract, sender)
    }

    /// Whether a transaction is premium at `base_fee`, and the quota units its gas limit
    /// reserves if not (what admission counts; the ledger charges the gas used).
    pub fn classify(&self, tx: &TxEnvelope, base_fee: u64) -> (bool, u64) {
        let premium = policy::is_premium(
            tx.effective_gas_price(Some(base_fee)),
            self.cfg.premium_threshold,
        );
        (
            premium,
            policy::quota_units(tx.gas_limit(), self.cfg.quota_unit_gas),
        )
    }

    /// What block `header` (with its transactions, senders and receipts) changes in the
    /// ledger, given the ledger and state of its parent.
    pub fn block_delta(
        &self,
        ledger: &LedgerAt,
        state: &dyn StateReader,
        header: &Header,
        transactions: &[TxEnvelope],
        senders: &[Address],
        receipts: &[ReceiptEnvelope],
    ) -> Result<KarmaDelta, StorageError> {
        let in_force = self.tiers_for(ledger, state, header.timestamp)?;
        let epoch = in_force.epoch;
        let base_fee = header.base_fee_per_gas.unwrap_or_default();
        // Sender -> (state before the block, state now).
        let mut touched: BTreeMap<Address, (SenderState, SenderState)> = BTreeMap::new();
        let entry = |touched: &mut BTreeMap<Address, (SenderState, SenderState)>,
                     sender: Address|
         -> Result<(), StorageError> {
            if let btree_map::Entry::Vacant(v) = touched.entry(sender) {
                let balance = self.balance(state, sender)?;
                let st = self.sender_state(ledger, &in_force.tiers, epoch, sender, balance)?;
                v.insert((st.clone(), st));
            }
            Ok(())
        };
        let mut gas_before = 0;
        for (i, (tx, sender)) in transactions.iter().zip(senders).enumerate() {
            // Admission reserved units by the gas limit (it decides before execution); the
            // ledger charges the gas the transaction used, with the same rounding, so a padded
            // gas limit costs nothing more and the rest of the reservation is back in the
            // sender's quota after this block. Receipts are part of the block: every node
            // charges the same.
            let gas_used = receipts.get(i).map_or(tx.gas_limit(), |r| {
                let used = r.cumulative_gas_used().saturating_sub(gas_before);
                gas_before = r.cumulative_gas_used();
                used
            });
            let (premium, _) = self.classify(tx, base_fee);
            let units = policy::quota_units(gas_used, self.cfg.quota_unit_gas);
            entry(&mut touched, *sender)?;
            let st = &mut touched.get_mut(sender).expect("loaded").1;
            let effect = policy::record(st, premium, units);
            st.apply(&effect);
            for log in receipts.get(i).into_iter().flat_map(|r| r.logs()) {
                if let Some(account) = contracts::slashed_account(self.cfg.karma_contract, log) {
                    entry(&mut touched, account)?;
                    touched.get_mut(&account).expect("loaded").1.deny = Some(DenyEntry {
                        reason: DenyReason::RlnViolation,
                        until_epoch: epoch,
                    });
                }
            }
        }
        let mut delta = KarmaDelta {
            tiers: in_force.new_epoch.then_some((epoch, in_force.tiers)),
            ..Default::default()
        };
        for (sender, (before, after)) in touched {
            if after.usage != before.usage {
                delta.usage.push((sender, epoch, after.usage));
            }
            if after.deny != before.deny {
                delta.deny.push((sender, after.deny));
            }
        }
        Ok(delta)
    }
}

//! The predeployed Karma contracts (`contracts/`): their committed runtime bytecode, call and
//! event bindings, and their storage layout, which the node reads directly (a balance or the
//! tier table costs storage lookups, not an EVM run) and writes into a genesis.
//!
//! Layouts (fixed by the order of the state variables; the artifacts carry solc's own
//! `storageLayout` for reference): `Karma`: slot 0 balances, 1 total supply, 2 owner,
//! 3 operators, 4 slashers. `KarmaTiers`: slot 0 owner, slot 1 the tier array, 4 slots per
//! tier from `keccak256(1)`: minKarma, maxKarma, name (Solidity string), txPerEpoch.

use std::{collections::BTreeMap, sync::LazyLock};

use alloy_genesis::GenesisAccount;
use alloy_primitives::{keccak256, Address, Bytes, Log, B256, U256};
use alloy_sol_types::SolEvent;

use l2node_storage::{StateReader, StorageError};
use l2node_trie::state::KarmaTier;

// The bindings are generated from the committed artifacts' ABI (`crates/node/contracts/`,
// written by `contracts/build.mjs` from `contracts/src`), so they cannot drift from the contracts.
alloy_sol_types::sol!(
    /// The `Karma` token (contracts/src/Karma.sol).
    #[derive(Debug, PartialEq, Eq)]
    IKarma,
    "contracts/Karma.json"
);
alloy_sol_types::sol!(
    /// The `KarmaTiers` table (contracts/src/KarmaTiers.sol).
    #[derive(Debug, PartialEq, Eq)]
    IKarmaTiers,
    "contracts/KarmaTiers.json"
);

/// A committed artifact (`crates/node/contracts/*.json`, written by `contracts/build.mjs`).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Artifact {
    deployed_bytecode: Bytes,
    #[cfg_attr(not(test), allow(dead_code))]
    source_hash: String,
}

fn artifact(json: &str) -> Artifact {
    serde_json::from_str(json).expect("committed artifact is valid JSON")
}

static KARMA: LazyLock<Artifact> =
    LazyLock::new(|| artifact(include_str!("../../contracts/Karma.json")));
static TIERS: LazyLock<Artifact> =
    LazyLock::new(|| artifact(include_str!("../../contracts/KarmaTiers.json")));

/// Runtime bytecode of `Karma`.
pub fn karma_runtime_code() -> Bytes {
    KARMA.deployed_bytecode.clone()
}

/// Runtime bytecode of `KarmaTiers`.
pub fn tiers_runtime_code() -> Bytes {
    TIERS.deployed_bytecode.clone()
}

const KARMA_BALANCES_SLOT: u64 = 0;
const KARMA_TOTAL_SUPPLY_SLOT: u64 = 1;
const KARMA_OWNER_SLOT: u64 = 2;
const KARMA_OPERATORS_SLOT: u64 = 3;
const KARMA_SLASHERS_SLOT: u64 = 4;
const TIERS_OWNER_SLOT: u64 = 0;
const TIERS_ARRAY_SLOT: u64 = 1;
/// Storage slots of one `Tier`.
const TIER_SLOTS: u64 = 4;

/// The slot of `mapping(address => _)` at `slot` for `key`: `keccak256(pad32(key) ++ pad32(slot))`.
fn mapping_slot(key: Address, slot: u64) -> U256 {
    let mut buf = [0u8; 64];
    buf[12..32].copy_from_slice(key.as_slice());
    buf[56..64].copy_from_slice(&slot.to_be_bytes());
    U256::from_be_bytes(keccak256(buf).0)
}

/// The storage slot of `account`'s Karma balance.
pub fn balance_slot(account: Address) -> U256 {
    mapping_slot(account, KARMA_BALANCES_SLOT)
}

/// `account`'s Karma balance in the `Karma` contract at `karma`.
pub fn read_balance(
    state: &dyn StateReader,
    karma: Address,
    account: Address,
) -> Result<U256, StorageError> {
    state.storage(karma, balance_slot(account))
}

fn tiers_data_slot() -> U256 {
    U256::from_be_bytes(keccak256(U256::from(TIERS_ARRAY_SLOT).to_be_bytes::<32>()).0)
}

/// The tier table held by the `KarmaTiers` contract at `contract` (empty if it holds none).
pub fn read_tiers(
    state: &dyn StateReader,
    contract: Address,
) -> Result<Vec<KarmaTier>, StorageError> {
    let len = state.storage(contract, U256::from(TIERS_ARRAY_SLOT))?;
    // More than the contract allows (255) means the storage is not a tier table.
    let len = u64::try_from(len).unwrap_or(u64::MAX).min(255);
    let base = tiers_data_slot();
    (0..len)
        .map(|i| {
            let at = base + U256::from(i * TIER_SLOTS);
            Ok(KarmaTier {
                min_karma: state.storage(contract, at)?,
                max_karma: state.storage(contract, at + U256::from(1))?,
                name: read_string(state, contract, at + U256::from(2))?,
                tx_per_epoch: state
                    .storage(contract, at + U256::from(3))?
                    .saturating_to::<u32>(),
            })
        })
        .collect()
}

/// A Solidity `string` in storage: up to 31 bytes inline (data left-aligned, `2 x len` in the
/// last byte), longer as `2 x len + 1` with the data from `keccak256(slot)`.
fn read_string(
    state: &dyn StateReader,
    contract: Address,
    slot: U256,
) -> Result<String, StorageError> {
    let word = state.storage(contract, slot)?.to_be_bytes::<32>();
    let bytes = if word[31] & 1 == 0 {
        let len = usize::from(word[31] / 2).min(31);
        word[..len].to_vec()
    } else {
        // Names are at most 32 bytes; a longer length is not a tier name, read what is sane.
        let len = (U256::from_be_bytes(word) >> 1usize)
            .saturating_to::<usize>()
            .min(1024);
        let data = U256::from_be_bytes(keccak256(slot.to_be_bytes::<32>()).0);
        let mut out = Vec::with_capacity(len);
        for i in 0..len.div_ceil(32) {
            out.extend_from_slice(
                &state
                    .storage(contract, data + U256::from(i))?
                    .to_be_bytes::<32>(),
            );
        }
        out.truncate(len);
        out
    };
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The storage words of a Solidity `string` at `slot`.
fn string_words(slot: U256, s: &str) -> Vec<(U256, U256)> {
    let b = s.as_bytes();
    if b.len() < 32 {
        let mut word = [0u8; 32];
        word[..b.len()].copy_from_slice(b);
        word[31] = (b.len() * 2) as u8;
        vec![(slot, U256::from_be_bytes(word))]
    } else {
        let data = U256::from_be_bytes(keccak256(slot.to_be_bytes::<32>()).0);
        let mut words = vec![(slot, U256::from(b.len() * 2 + 1))];
        for (i, chunk) in b.chunks(32).enumerate() {
            let mut word = [0u8; 32];
            word[..chunk.len()].copy_from_slice(chunk);
            words.push((data + U256::from(i), U256::from_be_bytes(word)));
        }
        words
    }
}

/// The account of an `AccountSlashed` event of the `Karma` contract at `karma`.
pub fn slashed_account(karma: Address, log: &Log) -> Option<Address> {
    let topics = log.topics();
    (log.address == karma && topics.first() == Some(&IKarma::AccountSlashed::SIGNATURE_HASH))
        .then(|| topics.get(1).map(|t| Address::from_word(*t)))
        .flatten()
}

/// Both Karma contracts as genesis accounts, with their state written straight into storage
/// (what the constructor, `setOperator`, `setSlasher`, `mint` and `updateTiers` would leave).
#[derive(Debug, Clone)]
pub struct KarmaPredeploy {
    /// Address of `Karma`.
    pub karma: Address,
    /// Address of `KarmaTiers`.
    pub tiers_contract: Address,
    /// Owner of both.
    pub owner: Address,
    /// The `Karma` operator (may mint).
    pub operator: Address,
    /// The `Karma` slasher.
    pub slasher: Address,
    /// The tier table.
    pub tiers: Vec<KarmaTier>,
    /// Initial Karma balances.
    pub balances: Vec<(Address, U256)>,
}

impl KarmaPredeploy {
    /// The two genesis accounts.
    pub fn alloc(&self) -> Vec<(Address, GenesisAccount)> {
        let word = |a: Address| U256::from_be_slice(a.as_slice());
        let mut karma = vec![
            (U256::from(KARMA_OWNER_SLOT), word(self.owner)),
            (
                mapping_slot(self.operator, KARMA_OPERATORS_SLOT),
                U256::from(1),
            ),
            (
                mapping_slot(self.slasher, KARMA_SLASHERS_SLOT),
                U256::from(1),
            ),
        ];
        let mut supply = U256::ZERO;
        for (account, balance) in &self.balances {
            supply = supply.saturating_add(*balance);
            karma.push((balance_slot(*account), *balance));
        }
        karma.push((U256::from(KARMA_TOTAL_SUPPLY_SLOT), supply));

        let mut tiers = vec![
            (U256::from(TIERS_OWNER_SLOT), word(self.owner)),
            (U256::from(TIERS_ARRAY_SLOT), U256::from(self.tiers.len())),
        ];
        let base = tiers_data_slot();
        for (i, t) in self.tiers.iter().enumerate() {
            let at = base + U256::from(i as u64 * TIER_SLOTS);
            tiers.push((at, t.min_karma));
            tiers.push((at + U256::from(1), t.max_karma));
            tiers.extend(string_words(at + U256::from(2), &t.name));
            tiers.push((at + U256::from(3), U256::from(t.tx_per_epoch)));
        }
        let account = |code: Bytes, slots: Vec<(U256, U256)>| {
            let storage: BTreeMap<B256, B256> = slots
                .into_iter()
                .filter(|(_, v)| !v.is_zero())
                .map(|(k, v)| (B256::from(k), B256::from(v)))
                .collect();
            GenesisAccount::default()
                .with_nonce(Some(1))
                .with_code(Some(code))
                .with_storage(Some(storage))
        };
        vec![
            (self.karma, account(karma_runtime_code(), karma)),
            (self.tiers_contract, account(tiers_runtime_code(), tiers)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use alloy_consensus::{transaction::Recovered, Header, ReceiptEnvelope, TxEip1559, TxEnvelope};
    use alloy_primitives::TxKind;
    use alloy_rpc_types_eth::TransactionRequest;
    use alloy_sol_types::{SolCall, SolInterface};

    use super::*;
    use crate::chainspec::ChainSpec;
    use crate::executor::{build_block, call, BuildAttributes, CallEnv, CallRequest};
    use crate::karma::config::{default_tier_table, ONE_KARMA};
    use crate::test_utils::{dev_spec, key, sign, MemState, ALICE, BOB};

    fn predeploy(tiers: Vec<KarmaTier>) -> KarmaPredeploy {
        KarmaPredeploy {
            karma: Address::repeat_byte(0xaa),
            tiers_contract: Address::repeat_byte(0xbb),
            owner: key(0).address(),
            operator: key(0).address(),
            slasher: key(1).address(),
            tiers,
            balances: vec![(BOB, U256::from(7)), (ALICE, ONE_KARMA * U256::from(2))],
        }
    }

    /// The default table with names of 32, 31 and 1 bytes (Solidity's long and short strings).
    fn odd_names() -> Vec<KarmaTier> {
        let mut tiers = default_tier_table();
        tiers[1].name = "a name of exactly thirty-two b!!".into();
        tiers[2].name = "thirty-one bytes of tier name!!".into();
        tiers[3].name = "b".into();
        assert_eq!(
            (tiers[1].name.len(), tiers[2].name.len()),
            (32, 31),
            "test names"
        );
        tiers
    }

    fn state_of(p: &KarmaPredeploy) -> MemState {
        let mut genesis = alloy_genesis::Genesis::default();
        genesis.alloc.extend(p.alloc());
        MemState::from_genesis(&genesis)
    }

    /// A Cancun chain (keys 0 and 1 funded) whose genesis also holds `p`: spec, state, genesis
    /// header.
    fn chain_with(p: &KarmaPredeploy) -> (ChainSpec, MemState, Header) {
        let spec = dev_spec();
        let mut genesis = spec.genesis.clone();
        genesis.alloc.extend(p.alloc());
        let state = MemState::from_genesis(&genesis);
        let header = spec.genesis_header(state.state_root());
        (spec, state, header)
    }

    /// `c` on `to` through the node's `eth_call`: the decoded return, or the revert data.
    fn view<C: SolCall>(
        (spec, state, header): (&ChainSpec, &MemState, &Header),
        to: Address,
        c: C,
    ) -> Result<C::Return, Bytes> {
        let tx = TransactionRequest::default()
            .to(to)
            .input(Bytes::from(c.abi_encode()).into());
        let out = call(CallEnv::new(spec, state, header), &CallRequest::new(tx, 0)).unwrap();
        if out.reverted {
            Err(out.output)
        } else {
            Ok(C::abi_decode_returns(&out.output).unwrap())
        }
    }

    /// `c` to `to`, signed by test key `from`.
    fn tx<C: SolCall>(
        spec: &ChainSpec,
        from: u8,
        nonce: u64,
        to: Address,
        c: C,
    ) -> Recovered<TxEnvelope> {
        sign(
            &key(from),
            TxEip1559 {
                chain_id: spec.genesis.config.chain_id,
                nonce,
                gas_limit: 2_000_000,
                max_fee_per_gas: 10_000_000_000,
                max_priority_fee_per_gas: 0,
                to: TxKind::Call(to),
                value: U256::ZERO,
                input: c.abi_encode().into(),
                access_list: Default::default(),
            },
        )
    }

    /// Mines `txs` on `parent` through the node's block builder and applies the block to
    /// `state`: the block's changes and receipts.
    fn mine(
        spec: &ChainSpec,
        state: &mut MemState,
        parent: &mut Header,
        txs: Vec<Recovered<TxEnvelope>>,
    ) -> (l2node_trie::state::StateChanges, Vec<ReceiptEnvelope>) {
        let n = txs.len();
        let attrs = BuildAttributes {
            timestamp: parent.timestamp + 1,
            gas_limit: parent.gas_limit,
            ..Default::default()
        };
        let built = build_block(spec, state, parent, attrs, txs.into_iter()).unwrap();
        assert!(built.invalid.is_empty(), "{:?}", built.invalid);
        assert_eq!(built.transactions.len(), n);
        state.apply(&built.changes);
        let mut header = built.header;
        header.state_root = state.state_root();
        *parent = header;
        (built.changes, built.receipts)
    }

    fn tier_arg(t: &KarmaTier) -> KarmaTiers::Tier {
        KarmaTiers::Tier {
            minKarma: t.min_karma,
            maxKarma: t.max_karma,
            name: t.name.clone(),
            txPerEpoch: t.tx_per_epoch,
        }
    }

    #[test]
    fn balance_slot_is_soliditys_mapping_slot() {
        // keccak256(pad32(0x00..01) ++ pad32(0)), as solc lays out `mapping(address => uint)` at 0.
        let mut buf = [0u8; 64];
        buf[31] = 1;
        let expected = U256::from_be_bytes(keccak256(buf).0);
        assert_eq!(balance_slot(Address::with_last_byte(1)), expected);
        // BOB's slot, as solc's `mint` wrote it (see `solc_writes_what_the_readers_read`).
        assert_eq!(
            B256::from(balance_slot(BOB)),
            alloy_primitives::b256!(
                "0xda717bf587957992edaa0d686e6c9cdb6bf72d01a464fca441ee1b7a21add6ef"
            ),
        );
    }

    #[test]
    fn tiers_round_trip_through_storage() {
        let tiers = odd_names();
        let p = predeploy(tiers.clone());
        let state = state_of(&p);
        assert_eq!(read_tiers(&state, p.tiers_contract).unwrap(), tiers);
        assert_eq!(read_balance(&state, p.karma, BOB).unwrap(), U256::from(7));
        assert_eq!(
            state
                .storage(p.karma, U256::from(KARMA_TOTAL_SUPPLY_SLOT))
                .unwrap(),
            ONE_KARMA * U256::from(2) + U256::from(7)
        );
        assert!(read_tiers(&state, Address::ZERO).unwrap().is_empty());
        assert_eq!(
            read_balance(&state, Address::ZERO, BOB).unwrap(),
            U256::ZERO
        );
    }

    /// The predeployed storage read by the compiled contracts themselves: what `alloc` writes
    /// is what solc's code expects.
    #[test]
    fn solc_reads_the_predeployed_storage() {
        let tiers = odd_names();
        let p = predeploy(tiers.clone());
        let (spec, state, header) = chain_with(&p);
        let at = (&spec, &state, &header);
        let (k, t) = (p.karma, p.tiers_contract);
        assert_eq!(
            view(at, k, IKarma::balanceOfCall { account: BOB }).unwrap(),
            U256::from(7)
        );
        assert_eq!(
            view(at, k, IKarma::balanceOfCall { account: ALICE }).unwrap(),
            ONE_KARMA * U256::from(2)
        );
        assert_eq!(
            view(at, k, IKarma::totalSupplyCall {}).unwrap(),
            ONE_KARMA * U256::from(2) + U256::from(7)
        );
        assert_eq!(view(at, k, IKarma::ownerCall {}).unwrap(), p.owner);
        assert!(view(at, k, IKarma::isOperatorCall(p.operator)).unwrap());
        assert!(!view(at, k, IKarma::isOperatorCall(p.slasher)).unwrap());
        assert!(view(at, k, IKarma::isSlasherCall(p.slasher)).unwrap());
        assert!(!view(at, k, IKarma::isSlasherCall(p.owner)).unwrap());
        assert_eq!(view(at, t, IKarmaTiers::ownerCall {}).unwrap(), p.owner);
        assert_eq!(
            usize::from(view(at, t, IKarmaTiers::getTierCountCall {}).unwrap()),
            tiers.len()
        );
        for (i, tier) in tiers.iter().enumerate() {
            let id = i as u8;
            let got = view(at, t, IKarmaTiers::getTierByIdCall { id }).unwrap();
            assert_eq!(
                (got.minKarma, got.maxKarma, got.name, got.txPerEpoch),
                (
                    tier.min_karma,
                    tier.max_karma,
                    tier.name.clone(),
                    tier.tx_per_epoch
                ),
                "tier {i}"
            );
            for balance in [tier.min_karma, tier.max_karma] {
                let call = IKarmaTiers::getTierIdByKarmaBalanceCall { balance };
                assert_eq!(view(at, t, call).unwrap(), id, "balance {balance}");
            }
        }
        let id = tiers.len() as u8;
        let err = view(at, t, IKarmaTiers::getTierByIdCall { id }).unwrap_err();
        assert_eq!(
            IKarmaTiers::IKarmaTiersErrors::abi_decode(&err).unwrap(),
            IKarmaTiers::IKarmaTiersErrors::TierNotFound(IKarmaTiers::TierNotFound { id })
        );
    }

    /// State written by the compiled contracts (mint, slash, updateTiers in real blocks) is
    /// what the readers read: the slots are solc's, not our idea of them.
    #[test]
    fn solc_writes_what_the_readers_read() {
        let p = KarmaPredeploy {
            balances: vec![],
            ..predeploy(default_tier_table())
        };
        let (spec, mut state, mut head) = chain_with(&p);
        let (k, t) = (p.karma, p.tiers_contract);
        let new_tiers = vec![
            KarmaTier {
                min_karma: U256::ZERO,
                max_karma: ONE_KARMA - U256::from(1),
                name: "z".into(),
                tx_per_epoch: 0,
            },
            KarmaTier {
                min_karma: ONE_KARMA,
                max_karma: ONE_KARMA * U256::from(5),
                name: "thirty-one bytes of tier name!!".into(),
                tx_per_epoch: 7,
            },
            KarmaTier {
                min_karma: ONE_KARMA * U256::from(5) + U256::from(1),
                max_karma: U256::MAX,
                name: "a name of exactly thirty-two b!!".into(),
                tx_per_epoch: u32::MAX,
            },
        ];
        let amount = ONE_KARMA * U256::from(3);
        let (changes, receipts) = mine(
            &spec,
            &mut state,
            &mut head,
            vec![
                tx(&spec, 0, 0, k, IKarma::mintCall { to: BOB, amount }),
                tx(
                    &spec,
                    0,
                    1,
                    t,
                    IKarmaTiers::updateTiersCall {
                        tiers: new_tiers.iter().map(tier_arg).collect(),
                    },
                ),
            ],
        );
        assert!(receipts.iter().all(|r| r.status()));
        // mint wrote exactly two slots: the total supply and BOB's balance.
        let mut written: Vec<_> = changes
            .iter()
            .find(|c| c.address == k)
            .unwrap()
            .storage
            .clone();
        written.sort();
        let mut expected = vec![
            (U256::from(KARMA_TOTAL_SUPPLY_SLOT), amount),
            (balance_slot(BOB), amount),
        ];
        expected.sort();
        assert_eq!(written, expected);
        assert_eq!(read_balance(&state, k, BOB).unwrap(), amount);
        assert_eq!(read_tiers(&state, t).unwrap(), new_tiers);

        // Slash: 3 -> 1.5 KARMA, reported by an AccountSlashed event the node recognizes.
        let (_, receipts) = mine(
            &spec,
            &mut state,
            &mut head,
            vec![tx(&spec, 1, 0, k, IKarma::slashCall { account: BOB })],
        );
        assert!(receipts[0].status());
        let logs = receipts[0].logs();
        let slashed: Vec<_> = logs.iter().filter_map(|l| slashed_account(k, l)).collect();
        assert_eq!(slashed, vec![BOB]);
        let event = logs
            .iter()
            .find_map(|l| IKarma::AccountSlashed::decode_log(l).ok())
            .unwrap();
        assert_eq!(event.amount, amount / U256::from(2));
        assert_eq!(
            slashed_account(Address::ZERO, &logs[1]),
            None,
            "other contract"
        );
        assert_eq!(
            read_balance(&state, k, BOB).unwrap(),
            amount / U256::from(2)
        );

        // A shorter table replaces the longer one; the long name's data slot is cleared.
        let one = vec![KarmaTier {
            min_karma: U256::ZERO,
            max_karma: U256::MAX,
            name: "all".into(),
            tx_per_epoch: 1,
        }];
        let (_, receipts) = mine(
            &spec,
            &mut state,
            &mut head,
            vec![tx(
                &spec,
                0,
                2,
                t,
                IKarmaTiers::updateTiersCall {
                    tiers: one.iter().map(tier_arg).collect(),
                },
            )],
        );
        assert!(receipts[0].status());
        assert_eq!(read_tiers(&state, t).unwrap(), one);
        let long_name = tiers_data_slot() + U256::from(2 * TIER_SLOTS + 2);
        let data = U256::from_be_bytes(keccak256(long_name.to_be_bytes::<32>()).0);
        assert_eq!(state.storage(t, long_name).unwrap(), U256::ZERO);
        assert_eq!(state.storage(t, data).unwrap(), U256::ZERO);
    }

    #[test]
    fn committed_bytecode_is_built_from_the_committed_sources() {
        use sha2::{Digest, Sha256};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contracts/src");
        for (name, artifact) in [("Karma", &*KARMA), ("KarmaTiers", &*TIERS)] {
            let source = std::fs::read(dir.join(format!("{name}.sol"))).unwrap();
            let hash = alloy_primitives::hex::encode(Sha256::digest(&source));
            assert_eq!(
                hash, artifact.source_hash,
                "contracts/src/{name}.sol changed since crates/node/contracts/{name}.json was built: run `node contracts/build.mjs` (npm install in contracts/ first) and commit the artifacts"
            );
        }
    }
}

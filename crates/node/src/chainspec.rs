//! The chain specification: genesis, chain id, hardfork schedule and base-fee rule.
//!
//! Built from a geth-style `genesis.json`. Hardforks up to London activate by block number,
//! Paris by `mergeNetsplitBlock` / `terminalTotalDifficultyPassed`, Shanghai and later by
//! timestamp. Besu's `zeroBaseFee: true` (in `config`) keeps every block's base fee at 0.

use std::{collections::BTreeMap, path::Path};

use alloy_consensus::{
    constants::{EMPTY_OMMER_ROOT_HASH, EMPTY_ROOT_HASH},
    Header,
};
use alloy_eips::{
    eip1559::{calc_next_block_base_fee, BaseFeeParams, INITIAL_BASE_FEE},
    eip7685::EMPTY_REQUESTS_HASH,
    eip7840::BlobParams,
    eip7892::BlobScheduleBlobParams,
    eip7910::{EthConfig, EthForkConfig, SystemContract},
};
use alloy_evm::eth::spec::EthExecutorSpec;
use alloy_genesis::{CliqueConfig, Genesis};
use alloy_hardforks::{
    EthereumChainHardforks, EthereumHardfork, EthereumHardforks, ForkCondition, ForkHash,
};
use alloy_primitives::{Address, Bytes, B256, B64, U256};
use revm::{
    precompile::{PrecompileSpecId, Precompiles},
    primitives::hardfork::SpecId,
};

use crate::constants::DEFAULT_GENESIS_GAS_LIMIT;
use crate::karma::{KarmaConfig, KarmaConfigError};

/// Errors building a [`ChainSpec`].
#[derive(Debug, thiserror::Error)]
pub enum ChainSpecError {
    /// The genesis file could not be read.
    #[error("cannot read genesis file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The genesis file is not valid genesis JSON.
    #[error("invalid genesis JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A field has a value l2node cannot use.
    #[error("invalid genesis config: {0}")]
    Invalid(String),
    /// The `karma` section is malformed.
    #[error("invalid genesis config: {0}")]
    Karma(#[from] KarmaConfigError),
}

/// Chain parameters derived from the genesis.
#[derive(Debug, Clone)]
pub struct ChainSpec {
    /// The genesis this spec was built from.
    pub genesis: Genesis,
    /// EIP-155 chain id.
    pub chain_id: u64,
    hardforks: EthereumChainHardforks,
    blob_schedule: BlobScheduleBlobParams,
    /// Besu's `config.zeroBaseFee`: the base fee stays 0 in every block.
    pub zero_base_fee: bool,
    /// Clique parameters (`config.clique`), if any. A Clique chain pays no block rewards (the
    /// executor treats it as post-merge for rewards only).
    pub clique: Option<CliqueConfig>,
    /// The `config.karma` section; `None` for a plain EVM chain (no gasless path).
    pub karma: Option<KarmaConfig>,
    /// The merge block of a chain whose config gives only a terminal total difficulty (no
    /// `mergeNetsplitBlock`): the first block whose parent reached it, found by the chain,
    /// which then builds a new spec with [`ChainSpec::with_merge_block`].
    merge_block: Option<u64>,
}

impl ChainSpec {
    /// Builds the spec from a parsed genesis.
    pub fn from_genesis(genesis: Genesis) -> Result<Self, ChainSpecError> {
        let config = &genesis.config;
        let zero_base_fee = match config.extra_fields.get("zeroBaseFee") {
            None | Some(serde_json::Value::Null) => false,
            Some(serde_json::Value::Bool(b)) => *b,
            Some(other) => {
                return Err(ChainSpecError::Invalid(format!(
                    "zeroBaseFee must be a boolean, got {other}"
                )))
            }
        };
        let karma = config
            .extra_fields
            .get("karma")
            .filter(|v| !v.is_null())
            .map(KarmaConfig::from_json)
            .transpose()?;

        let mut forks = Vec::new();
        let by_block = [
            (EthereumHardfork::Frontier, Some(0)),
            (EthereumHardfork::Homestead, config.homestead_block),
            (EthereumHardfork::Tangerine, config.eip150_block),
            (EthereumHardfork::SpuriousDragon, config.eip158_block),
            (EthereumHardfork::Byzantium, config.byzantium_block),
            (
                EthereumHardfork::Constantinople,
                config.constantinople_block,
            ),
            (EthereumHardfork::Petersburg, config.petersburg_block),
            (EthereumHardfork::Istanbul, config.istanbul_block),
            (EthereumHardfork::MuirGlacier, config.muir_glacier_block),
            (EthereumHardfork::Berlin, config.berlin_block),
            (EthereumHardfork::London, config.london_block),
            (EthereumHardfork::ArrowGlacier, config.arrow_glacier_block),
            (EthereumHardfork::GrayGlacier, config.gray_glacier_block),
        ];
        for (fork, block) in by_block {
            if let Some(block) = block {
                forks.push((fork, ForkCondition::Block(block)));
            }
        }
        if config.dao_fork_support {
            if let Some(block) = config.dao_fork_block {
                forks.push((EthereumHardfork::Dao, ForkCondition::Block(block)));
            }
        }
        // Paris: the netsplit block when given; otherwise a chain that says the terminal total
        // difficulty is passed (or sets it to 0) is post-merge from genesis.
        let ttd = config.terminal_total_difficulty;
        let paris_block = match config.merge_netsplit_block {
            Some(block) => Some(block),
            None if config.terminal_total_difficulty_passed || ttd == Some(U256::ZERO) => Some(0),
            None => None,
        };
        if let Some(block) = paris_block {
            forks.push((
                EthereumHardfork::Paris,
                ForkCondition::TTD {
                    activation_block_number: block,
                    fork_block: config.merge_netsplit_block,
                    total_difficulty: ttd.unwrap_or_default(),
                },
            ));
        }
        for (fork, time) in fork_times(config) {
            if let Some(time) = time {
                forks.push((fork, ForkCondition::Timestamp(time)));
            }
        }
        if config.cancun_time.is_some() && config.shanghai_time.is_none() {
            return Err(ChainSpecError::Invalid(
                "cancunTime set without shanghaiTime".into(),
            ));
        }

        Ok(Self {
            chain_id: config.chain_id,
            hardforks: EthereumChainHardforks::new(forks),
            blob_schedule: config.blob_schedule_blob_params(),
            zero_base_fee,
            clique: config.clique,
            karma,
            genesis,
            merge_block: None,
        })
    }

    /// Reads and parses a geth-style `genesis.json`.
    pub fn from_genesis_file(path: impl AsRef<Path>) -> Result<Self, ChainSpecError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ChainSpecError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_genesis(serde_json::from_str(&text)?)
    }

    /// The hardfork schedule.
    pub const fn hardforks(&self) -> &EthereumChainHardforks {
        &self.hardforks
    }

    /// The terminal total difficulty while the merge block is not known yet: the config gives
    /// a non-zero `terminalTotalDifficulty`, neither `mergeNetsplitBlock` nor
    /// `terminalTotalDifficultyPassed`, and the chain has not reached it.
    pub fn awaits_merge(&self) -> Option<U256> {
        let c = &self.genesis.config;
        let ttd = c.terminal_total_difficulty.filter(|t| !t.is_zero())?;
        let scheduled = c.merge_netsplit_block.is_some() || c.terminal_total_difficulty_passed;
        (!scheduled && self.merge_block.is_none()).then_some(ttd)
    }

    /// This spec with the merge at block `number` (the first block whose parent's total
    /// difficulty reached the terminal total difficulty): Paris is active from there. A spec
    /// never changes once built; the chain replaces its spec with this one.
    pub fn with_merge_block(&self, number: u64) -> Self {
        Self {
            merge_block: Some(number),
            ..self.clone()
        }
    }

    /// The revm spec in force for a block.
    pub fn spec_id_at(&self, number: u64, timestamp: u64) -> SpecId {
        alloy_evm::spec_by_timestamp_and_block_number(self, timestamp, number)
    }

    /// Whether Shanghai (withdrawals, PUSH0) is active at `timestamp`.
    pub fn is_shanghai_active_at(&self, timestamp: u64) -> bool {
        self.is_shanghai_active_at_timestamp(timestamp)
    }

    /// Whether Cancun (blobs, EIP-4788) is active at `timestamp`.
    pub fn is_cancun_active_at(&self, timestamp: u64) -> bool {
        self.is_cancun_active_at_timestamp(timestamp)
    }

    /// Whether Prague (EIP-7702, requests, EIP-2935) is active at `timestamp`.
    pub fn is_prague_active_at(&self, timestamp: u64) -> bool {
        self.is_prague_active_at_timestamp(timestamp)
    }

    /// Whether London (EIP-1559) is active at block `number`.
    pub fn is_london_active_at(&self, number: u64) -> bool {
        self.is_london_active_at_block(number)
    }

    /// Base fee of the child of `parent`: 0 forever with `zeroBaseFee`, 0 before London,
    /// [`INITIAL_BASE_FEE`] in London's activation block, EIP-1559 otherwise.
    pub fn next_base_fee(&self, parent: &Header) -> u64 {
        let number = parent.number + 1;
        if self.zero_base_fee || !self.is_london_active_at_block(number) {
            return 0;
        }
        match parent.base_fee_per_gas {
            Some(base_fee) if self.is_london_active_at_block(parent.number) => {
                calc_next_block_base_fee(
                    parent.gas_used,
                    parent.gas_limit,
                    base_fee,
                    BaseFeeParams::ethereum(),
                )
            }
            _ => INITIAL_BASE_FEE,
        }
    }

    /// Blob parameters in force at `timestamp`, `None` before Cancun.
    pub fn blob_params_at(&self, timestamp: u64) -> Option<BlobParams> {
        if let Some(params) = self
            .blob_schedule
            .active_scheduled_params_at_timestamp(timestamp)
        {
            Some(*params)
        } else if self.is_osaka_active_at_timestamp(timestamp) {
            Some(self.blob_schedule.osaka)
        } else if self.is_prague_active_at_timestamp(timestamp) {
            Some(self.blob_schedule.prague)
        } else if self.is_cancun_active_at_timestamp(timestamp) {
            Some(self.blob_schedule.cancun)
        } else {
            None
        }
    }

    /// The EIP-7910 `eth_config` answer for a head at `head_timestamp`: the fork in force, the
    /// next scheduled one and the last scheduled one (both `None` when nothing is scheduled).
    /// `None` when the head is before Cancun, which the EIP does not describe.
    pub fn eth_config(&self, genesis_hash: B256, head_timestamp: u64) -> Option<EthConfig> {
        // Forks sharing an activation time are one configuration (the later fork's).
        let mut times: Vec<u64> = fork_times(&self.genesis.config)
            .into_iter()
            .filter(|(fork, _)| *fork >= EthereumHardfork::Cancun)
            .filter_map(|(_, time)| time)
            .collect();
        times.sort_unstable();
        times.dedup();
        let current = times.iter().rposition(|&t| t <= head_timestamp)?;
        let next = times
            .get(current + 1)
            .map(|&t| self.fork_config(genesis_hash, t));
        let last = next
            .as_ref()
            .map(|_| self.fork_config(genesis_hash, times[times.len() - 1]));
        Some(EthConfig {
            current: self.fork_config(genesis_hash, times[current]),
            next,
            last,
        })
    }

    /// The EIP-7910 configuration of the (Cancun or later) fork activating at `time`.
    fn fork_config(&self, genesis_hash: B256, time: u64) -> EthForkConfig {
        let spec = self.spec_id_at(u64::MAX, time);
        let precompiles = Precompiles::new(PrecompileSpecId::from_spec_id(spec));
        let mut system_contracts: BTreeMap<SystemContract, Address> =
            SystemContract::cancun().into_iter().collect();
        if self.is_prague_active_at_timestamp(time) {
            system_contracts.extend(SystemContract::prague(
                self.genesis.config.deposit_contract_address,
            ));
        }
        if self.is_amsterdam_active_at_timestamp(time) {
            system_contracts.extend(SystemContract::amsterdam());
        }
        EthForkConfig {
            activation_time: if time <= self.genesis.timestamp {
                0
            } else {
                time
            },
            blob_schedule: self
                .blob_params_at(time)
                .expect("every eth_config fork is Cancun or later"),
            chain_id: self.chain_id,
            fork_id: Bytes::copy_from_slice(&self.fork_hash(genesis_hash, time).0),
            precompiles: precompiles
                .inner()
                .values()
                .map(|p| (p.id().name().to_string(), *p.address()))
                .collect(),
            system_contracts,
        }
    }

    /// The EIP-2124 fork hash once every fork up to `time` is active. Fork points are gathered as
    /// geth gathers them: every `*Block` field of the config that is not 0 (the DAO block and
    /// `mergeNetsplitBlock` included) and every `*Time` field after the genesis timestamp, each
    /// distinct value once, in order.
    fn fork_hash(&self, genesis_hash: B256, time: u64) -> ForkHash {
        let c = &self.genesis.config;
        let mut blocks: Vec<u64> = [
            c.homestead_block,
            c.dao_fork_block,
            c.eip150_block,
            c.eip155_block,
            c.eip158_block,
            c.byzantium_block,
            c.constantinople_block,
            c.petersburg_block,
            c.istanbul_block,
            c.muir_glacier_block,
            c.berlin_block,
            c.london_block,
            c.arrow_glacier_block,
            c.gray_glacier_block,
            c.merge_netsplit_block,
        ]
        .into_iter()
        .flatten()
        .filter(|&b| b != 0)
        .collect();
        blocks.sort_unstable();
        blocks.dedup();
        let mut times: Vec<u64> = fork_times(c)
            .into_iter()
            .filter_map(|(_, t)| t)
            .filter(|&t| t > self.genesis.timestamp && t <= time)
            .collect();
        times.sort_unstable();
        times.dedup();
        let mut hash = ForkHash::from(genesis_hash);
        for point in blocks.into_iter().chain(times) {
            hash += point;
        }
        hash
    }

    /// Base fee of the genesis block when London is active at 0: the genesis `baseFeePerGas`,
    /// else [`INITIAL_BASE_FEE`] (0 with `zeroBaseFee`).
    fn genesis_base_fee(&self) -> Option<u64> {
        if !self.is_london_active_at_block(self.genesis.number.unwrap_or_default()) {
            return None;
        }
        let default = if self.zero_base_fee {
            0
        } else {
            INITIAL_BASE_FEE
        };
        Some(
            self.genesis
                .base_fee_per_gas
                .map(|f| f as u64)
                .unwrap_or(default),
        )
    }

    /// The genesis header as geth builds it, with the given state root.
    pub fn genesis_header(&self, state_root: B256) -> Header {
        let g = &self.genesis;
        let ts = g.timestamp;
        let cancun = self.is_cancun_active_at_timestamp(ts);
        Header {
            parent_hash: g.parent_hash.unwrap_or_default(),
            ommers_hash: EMPTY_OMMER_ROOT_HASH,
            beneficiary: g.coinbase,
            state_root,
            transactions_root: EMPTY_ROOT_HASH,
            receipts_root: EMPTY_ROOT_HASH,
            difficulty: g.difficulty,
            number: g.number.unwrap_or_default(),
            gas_limit: if g.gas_limit == 0 {
                DEFAULT_GENESIS_GAS_LIMIT
            } else {
                g.gas_limit
            },
            gas_used: 0,
            timestamp: ts,
            extra_data: g.extra_data.clone(),
            mix_hash: g.mix_hash,
            nonce: B64::from(g.nonce),
            base_fee_per_gas: self.genesis_base_fee(),
            withdrawals_root: self
                .is_shanghai_active_at_timestamp(ts)
                .then_some(EMPTY_ROOT_HASH),
            blob_gas_used: cancun.then(|| g.blob_gas_used.unwrap_or_default()),
            excess_blob_gas: cancun.then(|| g.excess_blob_gas.unwrap_or_default()),
            parent_beacon_block_root: cancun.then_some(B256::ZERO),
            requests_hash: self
                .is_prague_active_at_timestamp(ts)
                .then_some(EMPTY_REQUESTS_HASH),
            ..Default::default()
        }
    }
}

/// The forks a geth config schedules by timestamp, in order, with their times.
fn fork_times(c: &alloy_genesis::ChainConfig) -> [(EthereumHardfork, Option<u64>); 10] {
    [
        (EthereumHardfork::Shanghai, c.shanghai_time),
        (EthereumHardfork::Cancun, c.cancun_time),
        (EthereumHardfork::Prague, c.prague_time),
        (EthereumHardfork::Osaka, c.osaka_time),
        (EthereumHardfork::Bpo1, c.bpo1_time),
        (EthereumHardfork::Bpo2, c.bpo2_time),
        (EthereumHardfork::Bpo3, c.bpo3_time),
        (EthereumHardfork::Bpo4, c.bpo4_time),
        (EthereumHardfork::Bpo5, c.bpo5_time),
        (EthereumHardfork::Amsterdam, c.amsterdam_time),
    ]
}

impl EthereumHardforks for ChainSpec {
    fn ethereum_fork_activation(&self, fork: EthereumHardfork) -> ForkCondition {
        match (fork, self.merge_block) {
            (EthereumHardfork::Paris, Some(block)) => ForkCondition::TTD {
                activation_block_number: block,
                fork_block: None,
                total_difficulty: self
                    .genesis
                    .config
                    .terminal_total_difficulty
                    .unwrap_or_default(),
            },
            _ => self.hardforks.ethereum_fork_activation(fork),
        }
    }
}

impl EthExecutorSpec for ChainSpec {
    fn deposit_contract_address(&self) -> Option<Address> {
        self.genesis.config.deposit_contract_address
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_from(config: serde_json::Value) -> ChainSpec {
        let genesis = serde_json::json!({
            "config": config,
            "gasLimit": "0x1c9c380",
            "difficulty": "0x0",
            "alloc": {}
        });
        ChainSpec::from_genesis(serde_json::from_value(genesis).unwrap()).unwrap()
    }

    #[test]
    fn reads_forks_by_block_and_time() {
        let spec = spec_from(serde_json::json!({
            "chainId": 7, "homesteadBlock": 0, "eip150Block": 0, "eip155Block": 0,
            "eip158Block": 0, "byzantiumBlock": 0, "constantinopleBlock": 0,
            "petersburgBlock": 0, "istanbulBlock": 0, "berlinBlock": 0, "londonBlock": 5,
            "mergeNetsplitBlock": 10, "terminalTotalDifficulty": 0,
            "shanghaiTime": 100, "cancunTime": 200
        }));
        assert_eq!(spec.chain_id, 7);
        assert_eq!(spec.spec_id_at(0, 0), SpecId::BERLIN);
        assert_eq!(spec.spec_id_at(5, 0), SpecId::LONDON);
        assert_eq!(spec.spec_id_at(10, 0), SpecId::MERGE);
        assert_eq!(spec.spec_id_at(11, 150), SpecId::SHANGHAI);
        assert_eq!(spec.spec_id_at(12, 200), SpecId::CANCUN);
        assert!(spec.is_london_active_at(5) && !spec.is_london_active_at(4));
        assert!(spec.blob_params_at(199).is_none());
        assert!(spec.blob_params_at(200).is_some());
        assert!(!spec.zero_base_fee && spec.karma.is_none());
    }

    #[test]
    fn london_activation_block_gets_initial_base_fee_then_eip1559() {
        let spec = spec_from(serde_json::json!({"chainId": 1, "londonBlock": 2}));
        let mut parent = Header {
            number: 1,
            gas_limit: 30_000_000,
            ..Default::default()
        };
        assert_eq!(
            spec.next_base_fee(&Header {
                number: 0,
                ..Default::default()
            }),
            0
        );
        assert_eq!(spec.next_base_fee(&parent), INITIAL_BASE_FEE);
        parent.number = 2;
        parent.base_fee_per_gas = Some(INITIAL_BASE_FEE);
        parent.gas_used = 30_000_000;
        assert_eq!(
            spec.next_base_fee(&parent),
            INITIAL_BASE_FEE + INITIAL_BASE_FEE / 8
        );
        parent.gas_used = 15_000_000;
        assert_eq!(spec.next_base_fee(&parent), INITIAL_BASE_FEE);
    }

    #[test]
    fn karma_section_is_typed_and_a_bad_field_is_named() {
        let karma = |extra: serde_json::Value| {
            let mut k = serde_json::json!({
                "karmaContract": "0x0000000000000000000000000000000000006b61",
                "tiersContract": "0x0000000000000000000000000000000000006b74",
            });
            k.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            let genesis: Genesis = serde_json::from_value(serde_json::json!({
                "config": {"chainId": 1, "karma": k}, "alloc": {}
            }))
            .unwrap();
            ChainSpec::from_genesis(genesis)
        };
        let spec = karma(serde_json::json!({})).unwrap();
        let k = spec.karma.unwrap();
        assert_eq!((k.epoch_length, k.quota_unit_gas), (86_400, 100_000));
        assert_eq!(k.tiers.len(), 11);
        for (extra, field) in [
            (serde_json::json!({"epochLength": "day"}), "epochLength"),
            (serde_json::json!({"epochLength": 0}), "epochLength"),
            (serde_json::json!({"fees": {"marginPercent": -1}}), "fees"),
            (serde_json::json!({"epoch": 5}), "epoch"),
            (
                serde_json::json!({"tiers": [{"minKarma": "0x1", "maxKarma": "0x2", "name": "a", "txPerEpoch": 1}]}),
                "tiers[0]",
            ),
        ] {
            let err = karma(extra.clone()).unwrap_err().to_string();
            assert!(
                err.contains("config.karma") && err.contains(field),
                "{extra}: {err}"
            );
        }
    }

    #[test]
    fn zero_base_fee_keeps_base_fee_at_zero() {
        let spec = spec_from(serde_json::json!({
            "chainId": 1, "londonBlock": 0, "zeroBaseFee": true
        }));
        assert!(spec.zero_base_fee);
        let header = spec.genesis_header(B256::ZERO);
        assert_eq!(header.base_fee_per_gas, Some(0));
        let parent = Header {
            gas_used: 30_000_000,
            gas_limit: 30_000_000,
            ..header
        };
        assert_eq!(spec.next_base_fee(&parent), 0);
    }

    #[test]
    fn genesis_header_has_fork_fields() {
        let spec = spec_from(serde_json::json!({
            "chainId": 1, "londonBlock": 0, "terminalTotalDifficultyPassed": true,
            "shanghaiTime": 0, "cancunTime": 0, "pragueTime": 0
        }));
        let h = spec.genesis_header(B256::repeat_byte(1));
        assert_eq!(h.base_fee_per_gas, Some(INITIAL_BASE_FEE));
        assert_eq!(h.withdrawals_root, Some(EMPTY_ROOT_HASH));
        assert_eq!(h.blob_gas_used, Some(0));
        assert_eq!(h.excess_blob_gas, Some(0));
        assert_eq!(h.parent_beacon_block_root, Some(B256::ZERO));
        assert_eq!(h.requests_hash, Some(EMPTY_REQUESTS_HASH));
        assert_eq!(spec.spec_id_at(0, 0), SpecId::PRAGUE);
    }

    #[test]
    fn usable_by_eth_block_executor_factory() {
        use alloy_evm::{
            block::BlockExecutorFactory,
            eth::{receipt_builder::AlloyReceiptBuilder, EthBlockExecutorFactory},
            EthEvmFactory,
        };
        fn assert_factory<F: BlockExecutorFactory>(_: &F) {}
        let spec = spec_from(serde_json::json!({"chainId": 5, "londonBlock": 0}));
        let factory = EthBlockExecutorFactory::new(
            AlloyReceiptBuilder::default(),
            spec,
            EthEvmFactory::default(),
        );
        assert_factory(&factory);
        assert_eq!(factory.spec().chain_id, 5);
        assert_eq!(factory.spec().deposit_contract_address(), None);
    }

    #[test]
    fn rejects_non_boolean_zero_base_fee() {
        let genesis = serde_json::json!({
            "config": {"chainId": 1, "zeroBaseFee": "yes"}, "gasLimit": "0x1", "alloc": {}
        });
        let err = ChainSpec::from_genesis(serde_json::from_value(genesis).unwrap()).unwrap_err();
        assert!(err.to_string().contains("zeroBaseFee"));
    }

    /// Hoodi before Prague, the EIP-7910 sample: current is Cancun (at genesis), next and last
    /// are Prague, every member as the EIP prints it (fork ids as geth computes them).
    #[test]
    fn eth_config_matches_the_eip_7910_hoodi_sample() {
        let genesis = serde_json::json!({
            "config": {
                "chainId": 560048, "homesteadBlock": 0, "eip150Block": 0, "eip155Block": 0,
                "eip158Block": 0, "byzantiumBlock": 0, "constantinopleBlock": 0,
                "petersburgBlock": 0, "istanbulBlock": 0, "berlinBlock": 0, "londonBlock": 0,
                "mergeNetsplitBlock": 0, "terminalTotalDifficulty": 0,
                "shanghaiTime": 0, "cancunTime": 0, "pragueTime": 1742999832,
                "depositContractAddress": "0x00000000219ab540356cBB839Cbe05303d7705Fa"
            },
            "timestamp": "0x67d80ec0",
            "gasLimit": "0x2255100",
            "difficulty": "0x1",
            "alloc": {}
        });
        let spec = ChainSpec::from_genesis(serde_json::from_value(genesis).unwrap()).unwrap();
        let hoodi_genesis: B256 =
            "0xbbe312868b376a3001692a646dd2d7d1e4406380dfd86b98aa8a34d1557c971b"
                .parse()
                .unwrap();
        let cancun = serde_json::json!({
            "activationTime": 0,
            "blobSchedule": {"baseFeeUpdateFraction": 3338477, "max": 6, "target": 3},
            "chainId": "0x88bb0",
            "forkId": "0xbef71d30",
            "precompiles": {
                "BLAKE2F": "0x0000000000000000000000000000000000000009",
                "BN254_ADD": "0x0000000000000000000000000000000000000006",
                "BN254_MUL": "0x0000000000000000000000000000000000000007",
                "BN254_PAIRING": "0x0000000000000000000000000000000000000008",
                "ECREC": "0x0000000000000000000000000000000000000001",
                "ID": "0x0000000000000000000000000000000000000004",
                "KZG_POINT_EVALUATION": "0x000000000000000000000000000000000000000a",
                "MODEXP": "0x0000000000000000000000000000000000000005",
                "RIPEMD160": "0x0000000000000000000000000000000000000003",
                "SHA256": "0x0000000000000000000000000000000000000002"
            },
            "systemContracts": {
                "BEACON_ROOTS_ADDRESS": "0x000f3df6d732807ef1319fb7b8bb8522d0beac02"
            }
        });
        let prague = serde_json::json!({
            "activationTime": 1742999832,
            "blobSchedule": {"baseFeeUpdateFraction": 5007716, "max": 9, "target": 6},
            "chainId": "0x88bb0",
            "forkId": "0x0929e24e",
            "precompiles": {
                "BLAKE2F": "0x0000000000000000000000000000000000000009",
                "BLS12_G1ADD": "0x000000000000000000000000000000000000000b",
                "BLS12_G1MSM": "0x000000000000000000000000000000000000000c",
                "BLS12_G2ADD": "0x000000000000000000000000000000000000000d",
                "BLS12_G2MSM": "0x000000000000000000000000000000000000000e",
                "BLS12_MAP_FP2_TO_G2": "0x0000000000000000000000000000000000000011",
                "BLS12_MAP_FP_TO_G1": "0x0000000000000000000000000000000000000010",
                "BLS12_PAIRING_CHECK": "0x000000000000000000000000000000000000000f",
                "BN254_ADD": "0x0000000000000000000000000000000000000006",
                "BN254_MUL": "0x0000000000000000000000000000000000000007",
                "BN254_PAIRING": "0x0000000000000000000000000000000000000008",
                "ECREC": "0x0000000000000000000000000000000000000001",
                "ID": "0x0000000000000000000000000000000000000004",
                "KZG_POINT_EVALUATION": "0x000000000000000000000000000000000000000a",
                "MODEXP": "0x0000000000000000000000000000000000000005",
                "RIPEMD160": "0x0000000000000000000000000000000000000003",
                "SHA256": "0x0000000000000000000000000000000000000002"
            },
            "systemContracts": {
                "BEACON_ROOTS_ADDRESS": "0x000f3df6d732807ef1319fb7b8bb8522d0beac02",
                "CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS": "0x0000bbddc7ce488642fb579f8b00f3a590007251",
                "DEPOSIT_CONTRACT_ADDRESS": "0x00000000219ab540356cbb839cbe05303d7705fa",
                "HISTORY_STORAGE_ADDRESS": "0x0000f90827f1c53a10cb7a02335b175320002935",
                "WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS": "0x00000961ef480eb55e80d19ad83579a64c007002"
            }
        });
        let before = spec.eth_config(hoodi_genesis, 1742999831).unwrap();
        assert_eq!(
            serde_json::to_value(&before).unwrap(),
            serde_json::json!({"current": cancun, "next": prague, "last": prague})
        );
        // At the activation second Prague is current and nothing is scheduled.
        let after = spec.eth_config(hoodi_genesis, 1742999832).unwrap();
        assert_eq!(
            serde_json::to_value(&after).unwrap(),
            serde_json::json!({"current": prague, "next": null, "last": null})
        );
    }

    #[test]
    fn eth_config_is_none_before_cancun_and_last_is_the_final_fork() {
        let spec = spec_from(serde_json::json!({
            "chainId": 7, "londonBlock": 0, "mergeNetsplitBlock": 0, "terminalTotalDifficulty": 0,
            "shanghaiTime": 0, "cancunTime": 10, "pragueTime": 20, "osakaTime": 30,
            "bpo1Time": 40,
            "blobSchedule": {"bpo1": {"target": 10, "max": 15, "baseFeeUpdateFraction": 8346193}}
        }));
        assert!(spec.eth_config(B256::ZERO, 9).is_none());
        let config = spec.eth_config(B256::ZERO, 25).unwrap();
        assert_eq!(config.current.activation_time, 20);
        assert_eq!(config.next.as_ref().unwrap().activation_time, 30);
        assert!(config.next.unwrap().precompiles.contains_key("P256VERIFY"));
        let last = config.last.unwrap();
        assert_eq!(
            (last.activation_time, last.blob_schedule.max_blob_count),
            (40, 15)
        );
        assert_ne!(last.fork_id, config.current.fork_id);
    }
}

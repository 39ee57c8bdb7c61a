//! The header rules an imported block must follow, checked against its parent and the fork
//! schedule of the spec (as geth's `consensus/misc/eip1559`, `eip4844` and Clique/beacon
//! `verifyHeader`, and reth's `validate_header_standalone` / `validate_against_parent_*`).
//!
//! One function per rule, each refusing with [`ChainError::InvalidHeader`], which names the
//! block, the field, the header's value and the expected one. [`before_execution`] runs the rules
//! that need only the header, its parent and the body; [`requests_hash`] needs the execution's
//! output. Every block [`crate::executor::build_block`] builds passes them all.

use alloy_consensus::{
    constants::MAXIMUM_EXTRA_DATA_SIZE,
    proofs::{calculate_ommers_root, calculate_withdrawals_root},
    Block, BlockHeader as _, Header, Transaction as _, TxEnvelope,
};
use alloy_eips::{
    eip1559::{DEFAULT_ELASTICITY_MULTIPLIER, GAS_LIMIT_BOUND_DIVISOR},
    eip4895::Withdrawals,
    eip7685::Requests,
};

use alloy_hardforks::EthereumHardforks as _;

use super::ChainError;
use crate::chainspec::ChainSpec;
use crate::constants::{MAX_BLOCK_GAS_LIMIT, MAX_RLP_BLOCK_SIZE, MIN_BLOCK_GAS_LIMIT};

/// Every rule that needs no execution, in order.
pub(super) fn before_execution(
    spec: &ChainSpec,
    parent: &Header,
    block: &Block<TxEnvelope>,
) -> Result<(), ChainError> {
    let header = &block.header;
    timestamp(header, parent)?;
    block_size(spec, block)?;
    extra_data(spec, header)?;
    proof_of_stake(spec, header)?;
    gas_limit(spec, header, parent)?;
    gas_used(header)?;
    base_fee(spec, header, parent)?;
    ommers(spec, header, &block.body.ommers)?;
    withdrawals(spec, header, block.body.withdrawals.as_ref())?;
    blob_gas_used(spec, header, &block.body.transactions)?;
    excess_blob_gas(spec, header, parent)?;
    parent_beacon_block_root(spec, header)?;
    requests_hash_present(spec, header)
}

fn invalid(
    header: &Header,
    field: &'static str,
    has: impl std::fmt::Display,
    expected: impl std::fmt::Display,
) -> ChainError {
    ChainError::InvalidHeader {
        number: header.number,
        field,
        has: has.to_string(),
        expected: expected.to_string(),
    }
}

/// An optional header field as a message shows it.
fn shown<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "none".to_string(), |v| v.to_string())
}

/// A field that a fork adds: present iff the fork is active (`fork` names it for the message).
fn presence<T: std::fmt::Display>(
    header: &Header,
    field: &'static str,
    value: Option<T>,
    active: bool,
    fork: &str,
) -> Result<(), ChainError> {
    match (value.is_some(), active) {
        (true, true) | (false, false) => Ok(()),
        (false, true) => Err(invalid(
            header,
            field,
            "none",
            format!(
                "a value ({fork} is active at timestamp {})",
                header.timestamp
            ),
        )),
        (true, false) => Err(invalid(
            header,
            field,
            shown(value),
            format!(
                "none ({fork} is not active at timestamp {})",
                header.timestamp
            ),
        )),
    }
}

/// The timestamp is strictly after the parent's. (Clique's "at least parent + period" is not
/// required: with `--block-time 0` the sequencer seals several blocks a second, each one second
/// after its parent. Nor is a bound on the future: those blocks run ahead of the wall clock.)
pub(super) fn timestamp(header: &Header, parent: &Header) -> Result<(), ChainError> {
    if header.timestamp > parent.timestamp {
        return Ok(());
    }
    Err(invalid(
        header,
        "timestamp",
        header.timestamp,
        format!("more than the parent's {}", parent.timestamp),
    ))
}

/// From Osaka, the RLP-encoded block is at most [`MAX_RLP_BLOCK_SIZE`] bytes (EIP-7934, geth's
/// `ErrBlockOversized`).
pub(super) fn block_size(spec: &ChainSpec, block: &Block<TxEnvelope>) -> Result<(), ChainError> {
    if !spec.is_osaka_active_at_timestamp(block.header.timestamp) {
        return Ok(());
    }
    let size = alloy_rlp::Encodable::length(block);
    if size <= MAX_RLP_BLOCK_SIZE {
        return Ok(());
    }
    Err(invalid(
        &block.header,
        "size",
        format!("{size} bytes"),
        format!("at most {MAX_RLP_BLOCK_SIZE} bytes (EIP-7934)"),
    ))
}

/// Outside Clique (whose extraData carries the signer list and the seal, checked by
/// `clique::signer`), extraData is at most [`MAXIMUM_EXTRA_DATA_SIZE`] bytes (the yellow paper's
/// rule, geth's `errExtraDataTooLong`).
pub(super) fn extra_data(spec: &ChainSpec, header: &Header) -> Result<(), ChainError> {
    let len = header.extra_data.len();
    if spec.clique.is_some() || len <= MAXIMUM_EXTRA_DATA_SIZE {
        return Ok(());
    }
    Err(invalid(
        header,
        "extra data",
        format!("{len} bytes"),
        format!("at most {MAXIMUM_EXTRA_DATA_SIZE} bytes"),
    ))
}

/// After the merge (outside Clique, whose difficulty and nonce carry its votes and turns),
/// difficulty and nonce are 0 (EIP-3675, geth's beacon `verifyHeader`). Before it, a
/// proof-of-work difficulty and nonce are taken as given, not re-mined.
pub(super) fn proof_of_stake(spec: &ChainSpec, header: &Header) -> Result<(), ChainError> {
    if spec.clique.is_some() || !spec.is_paris_active_at_block(header.number) {
        return Ok(());
    }
    if !header.difficulty.is_zero() {
        return Err(invalid(
            header,
            "difficulty",
            header.difficulty,
            "0 (after the merge)",
        ));
    }
    if !header.nonce.is_zero() {
        return Err(invalid(
            header,
            "nonce",
            header.nonce,
            "0 (after the merge)",
        ));
    }
    Ok(())
}

/// The gas limit the child of `parent` is bounded by: the parent's, doubled (the EIP-1559
/// elasticity) in London's activation block so that the gas target stays the old limit.
pub(super) fn parent_gas_limit(spec: &ChainSpec, parent: &Header) -> u64 {
    let london_starts =
        spec.is_london_active_at(parent.number + 1) && !spec.is_london_active_at(parent.number);
    if london_starts {
        parent
            .gas_limit
            .saturating_mul(DEFAULT_ELASTICITY_MULTIPLIER)
    } else {
        parent.gas_limit
    }
}

/// The gas limit moves by less than 1/1024 of the parent's (see [`parent_gas_limit`]) and stays
/// within [`MIN_BLOCK_GAS_LIMIT`]..=[`MAX_BLOCK_GAS_LIMIT`] (geth's `VerifyGaslimit`).
pub(super) fn gas_limit(
    spec: &ChainSpec,
    header: &Header,
    parent: &Header,
) -> Result<(), ChainError> {
    let base = parent_gas_limit(spec, parent);
    // |delta| < base / 1024, i.e. at most base / 1024 - 1 either way.
    let step = (base / GAS_LIMIT_BOUND_DIVISOR).saturating_sub(1);
    let low = base.saturating_sub(step).max(MIN_BLOCK_GAS_LIMIT);
    let high = base.saturating_add(step).min(MAX_BLOCK_GAS_LIMIT);
    let delta = header.gas_limit.abs_diff(base);
    if delta < base / GAS_LIMIT_BOUND_DIVISOR && (low..=high).contains(&header.gas_limit) {
        return Ok(());
    }
    let basis = if base == parent.gas_limit {
        format!("the parent's {base}")
    } else {
        format!(
            "twice the parent's {} at London's activation",
            parent.gas_limit
        )
    };
    Err(invalid(
        header,
        "gas limit",
        header.gas_limit,
        format!("between {low} and {high} ({basis}, changed by less than 1/{GAS_LIMIT_BOUND_DIVISOR}, at least {MIN_BLOCK_GAS_LIMIT})"),
    ))
}

/// The header's gas used is within its gas limit (it is compared with execution afterwards).
pub(super) fn gas_used(header: &Header) -> Result<(), ChainError> {
    if header.gas_used <= header.gas_limit {
        return Ok(());
    }
    Err(invalid(
        header,
        "gas used",
        header.gas_used,
        format!("at most the gas limit {}", header.gas_limit),
    ))
}

/// The base fee is the spec's rule applied to the parent ([`ChainSpec::next_base_fee`]: EIP-1559,
/// or 0 with `zeroBaseFee`) from London on, and absent before.
pub(super) fn base_fee(
    spec: &ChainSpec,
    header: &Header,
    parent: &Header,
) -> Result<(), ChainError> {
    let expected = spec
        .is_london_active_at(header.number)
        .then(|| spec.next_base_fee(parent));
    if header.base_fee_per_gas == expected {
        return Ok(());
    }
    let expected = match expected {
        Some(fee) if spec.zero_base_fee => format!("{fee} (zeroBaseFee)"),
        Some(fee) => fee.to_string(),
        None => format!("none (London is not active at block {})", header.number),
    };
    Err(invalid(
        header,
        "base fee",
        shown(header.base_fee_per_gas),
        expected,
    ))
}

/// No ommers after the merge or on a Clique chain; in any case the ommers hash is the hash of
/// the body's ommers.
pub(super) fn ommers(
    spec: &ChainSpec,
    header: &Header,
    ommers: &[Header],
) -> Result<(), ChainError> {
    let no_ommers = spec.clique.is_some() || spec.is_paris_active_at_block(header.number);
    if no_ommers && !ommers.is_empty() {
        let why = if spec.clique.is_some() {
            "on a Clique chain"
        } else {
            "after the merge"
        };
        return Err(invalid(
            header,
            "ommers",
            format!("{} ommers in the body", ommers.len()),
            format!("none ({why})"),
        ));
    }
    let computed = calculate_ommers_root(ommers);
    if header.ommers_hash == computed {
        return Ok(());
    }
    Err(invalid(
        header,
        "ommers hash",
        header.ommers_hash,
        format!("{computed} (the hash of the body's ommers)"),
    ))
}

/// From Shanghai on the header has a withdrawals root and the body withdrawals, and the root is
/// theirs; before Shanghai neither exists.
pub(super) fn withdrawals(
    spec: &ChainSpec,
    header: &Header,
    withdrawals: Option<&Withdrawals>,
) -> Result<(), ChainError> {
    let shanghai = spec.is_shanghai_active_at(header.timestamp);
    presence(
        header,
        "withdrawals root",
        header.withdrawals_root,
        shanghai,
        "Shanghai",
    )?;
    match (header.withdrawals_root, withdrawals) {
        (None, None) => Ok(()),
        (Some(_), None) => Err(invalid(
            header,
            "withdrawals",
            "no withdrawals list in the body",
            "a list, possibly empty (Shanghai is active)",
        )),
        (None, Some(list)) => Err(invalid(
            header,
            "withdrawals",
            format!("a list of {} in the body", list.0.len()),
            "none (Shanghai is not active)",
        )),
        (Some(root), Some(list)) => {
            let computed = calculate_withdrawals_root(&list.0);
            if root == computed {
                Ok(())
            } else {
                Err(invalid(
                    header,
                    "withdrawals root",
                    root,
                    format!(
                        "{computed} (the root of the body's {} withdrawals)",
                        list.0.len()
                    ),
                ))
            }
        }
    }
}

/// From Cancun on, blob gas used is the blob gas of the body's blob transactions and within the
/// block's maximum; before Cancun it is absent.
pub(super) fn blob_gas_used(
    spec: &ChainSpec,
    header: &Header,
    transactions: &[TxEnvelope],
) -> Result<(), ChainError> {
    let cancun = spec.is_cancun_active_at(header.timestamp);
    presence(
        header,
        "blob gas used",
        header.blob_gas_used,
        cancun,
        "Cancun",
    )?;
    let Some(used) = header.blob_gas_used else {
        return Ok(());
    };
    let computed = transactions
        .iter()
        .filter_map(|tx| tx.blob_gas_used())
        .fold(0u64, u64::saturating_add);
    if used != computed {
        return Err(invalid(
            header,
            "blob gas used",
            used,
            format!("{computed} (the blob gas of the body's blob transactions)"),
        ));
    }
    let max = spec
        .blob_params_at(header.timestamp)
        .map_or(0, |p| p.max_blob_gas_per_block());
    if used > max {
        return Err(invalid(
            header,
            "blob gas used",
            used,
            format!("at most {max} (the most blob gas of a block)"),
        ));
    }
    Ok(())
}

/// The excess blob gas the child of `parent` at `timestamp` has (0 in Cancun's first block).
pub(super) fn next_excess_blob_gas(spec: &ChainSpec, parent: &Header, timestamp: u64) -> u64 {
    parent
        .maybe_next_block_excess_blob_gas(spec.blob_params_at(timestamp))
        .unwrap_or(0)
}

/// From Cancun on, the excess blob gas is what the parent implies under the blob parameters in
/// force (EIP-4844, EIP-7918); before Cancun it is absent.
pub(super) fn excess_blob_gas(
    spec: &ChainSpec,
    header: &Header,
    parent: &Header,
) -> Result<(), ChainError> {
    let cancun = spec.is_cancun_active_at(header.timestamp);
    presence(
        header,
        "excess blob gas",
        header.excess_blob_gas,
        cancun,
        "Cancun",
    )?;
    let Some(excess) = header.excess_blob_gas else {
        return Ok(());
    };
    let expected = next_excess_blob_gas(spec, parent, header.timestamp);
    if excess == expected {
        return Ok(());
    }
    Err(invalid(
        header,
        "excess blob gas",
        excess,
        format!(
            "{expected} (from the parent's excess {} and blob gas used {})",
            shown(parent.excess_blob_gas),
            shown(parent.blob_gas_used)
        ),
    ))
}

/// The parent beacon block root (EIP-4788) is present iff Cancun is active.
pub(super) fn parent_beacon_block_root(
    spec: &ChainSpec,
    header: &Header,
) -> Result<(), ChainError> {
    presence(
        header,
        "parent beacon block root",
        header.parent_beacon_block_root,
        spec.is_cancun_active_at(header.timestamp),
        "Cancun",
    )
}

/// The requests hash (EIP-7685) is present iff Prague is active.
pub(super) fn requests_hash_present(spec: &ChainSpec, header: &Header) -> Result<(), ChainError> {
    presence(
        header,
        "requests hash",
        header.requests_hash,
        spec.is_prague_active_at(header.timestamp),
        "Prague",
    )
}

/// After execution: a present requests hash is the hash of the requests execution produced.
pub(super) fn requests_hash(header: &Header, requests: &Requests) -> Result<(), ChainError> {
    let Some(hash) = header.requests_hash else {
        return Ok(());
    };
    let computed = requests.requests_hash();
    if hash == computed {
        return Ok(());
    }
    Err(invalid(
        header,
        "requests hash",
        hash,
        format!(
            "{computed} (the hash of the {} requests execution produced)",
            requests.iter().count()
        ),
    ))
}

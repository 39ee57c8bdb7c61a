//! Admission checks, in geth's order (`txpool.ValidateTransaction` then
//! `ValidateTransactionWithState`), with geth's error messages.

use alloy_consensus::{transaction::Recovered, Transaction, TxEip4844Variant, TxEnvelope};
use alloy_eips::eip2718::{Decodable2718, Eip2718Error};
use alloy_eips::eip4844::env_settings::EnvKzgSettings;
use alloy_eips::eip7594::{BlobTransactionSidecarVariant, MAX_BLOBS_PER_TX_FUSAKA};
use alloy_primitives::U256;
use revm::{primitives::eip7825::TX_GAS_LIMIT_CAP, state::AccountInfo};

use super::PoolError;
use crate::chain::NextBlock;
use crate::constants::BLOB_TX_MAX_SIZE;

/// EIP-3860 initcode size limit (twice the EIP-170 code size limit).
pub const MAX_INITCODE_SIZE: usize = 2 * 24_576;

const TX_GAS: u64 = 21_000;
const TX_GAS_CONTRACT_CREATION: u64 = 53_000;
const TX_DATA_ZERO_GAS: u64 = 4;
const TX_DATA_NON_ZERO_GAS: u64 = 16;
const INIT_CODE_WORD_GAS: u64 = 2;
const ACCESS_LIST_ADDRESS_GAS: u64 = 2_400;
const ACCESS_LIST_STORAGE_KEY_GAS: u64 = 1_900;
const PER_AUTH_BASE_COST: u64 = 25_000;
const TX_COST_FLOOR_PER_TOKEN: u64 = 10;
const TX_TOKEN_PER_NON_ZERO_BYTE: u64 = 4;

/// Decodes one EIP-2718 transaction that must span all of `raw`.
pub fn decode_raw(raw: &[u8]) -> Result<TxEnvelope, PoolError> {
    if raw.is_empty() {
        return Err(PoolError::Decode("typed transaction too short".into()));
    }
    // Bytes from 0x80 on start an RLP list: a legacy transaction (geth's rule).
    let typed = raw[0] < 0x80;
    // Known typed envelopes: EIP-2930 (1), EIP-1559 (2), EIP-4844 (3), EIP-7702 (4).
    if typed && !(1..=4).contains(&raw[0]) {
        return Err(PoolError::TxTypeNotSupported);
    }
    TxEnvelope::decode_2718_exact(raw).map_err(|e| match e {
        Eip2718Error::UnexpectedType(_) if typed => PoolError::TxTypeNotSupported,
        Eip2718Error::RlpError(e) => PoolError::Decode(format!("rlp: {e}")),
        // alloy's own words ("Unexpected type flag") would leak here: say what is expected.
        _ => PoolError::Decode(
            "invalid transaction encoding: expected a signed EIP-2718 transaction (an RLP list, \
             or a type byte 1 to 4 followed by its RLP payload)"
                .into(),
        ),
    })
}

/// Zero and non-zero byte counts of `data`.
fn byte_counts(data: &[u8]) -> (u64, u64) {
    let zero = data.iter().filter(|b| **b == 0).count() as u64;
    (zero, data.len() as u64 - zero)
}

/// geth's `core.IntrinsicGas` (Homestead, EIP-2028 and Berlin always on; EIP-3860 with
/// Shanghai). Saturates instead of overflowing: a saturated value is never below a gas limit.
pub fn intrinsic_gas(tx: &TxEnvelope, shanghai: bool) -> u64 {
    let create = tx.kind().is_create();
    let data = tx.input();
    let mut gas = if create {
        TX_GAS_CONTRACT_CREATION
    } else {
        TX_GAS
    };
    let (zero, non_zero) = byte_counts(data);
    gas = gas
        .saturating_add(zero.saturating_mul(TX_DATA_ZERO_GAS))
        .saturating_add(non_zero.saturating_mul(TX_DATA_NON_ZERO_GAS));
    if create && shanghai {
        let words = (data.len() as u64).div_ceil(32);
        gas = gas.saturating_add(words.saturating_mul(INIT_CODE_WORD_GAS));
    }
    if let Some(list) = tx.access_list() {
        let keys: u64 = list.iter().map(|item| item.storage_keys.len() as u64).sum();
        gas = gas
            .saturating_add((list.len() as u64).saturating_mul(ACCESS_LIST_ADDRESS_GAS))
            .saturating_add(keys.saturating_mul(ACCESS_LIST_STORAGE_KEY_GAS));
    }
    if let Some(auths) = tx.authorization_list() {
        gas = gas.saturating_add((auths.len() as u64).saturating_mul(PER_AUTH_BASE_COST));
    }
    gas
}

/// geth's `core.FloorDataGas` (EIP-7623): `21000 + 10 * tokens`, a token per zero byte and four
/// per non-zero byte.
pub fn floor_data_gas(data: &[u8]) -> u64 {
    let (zero, non_zero) = byte_counts(data);
    let tokens = zero.saturating_add(non_zero.saturating_mul(TX_TOKEN_PER_NON_ZERO_BYTE));
    TX_GAS.saturating_add(tokens.saturating_mul(TX_COST_FLOOR_PER_TOKEN))
}

/// The tip cap: max priority fee, or the gas price of legacy and EIP-2930 transactions.
pub fn tip_cap(tx: &TxEnvelope) -> u128 {
    tx.max_priority_fee_per_gas()
        .unwrap_or_else(|| tx.max_fee_per_gas())
}

/// A blob transaction's blobs (geth's blob pool checks): its sidecar is there, in the format of
/// the fork (EIP-7594 cell proofs from Osaka, EIP-4844 proofs before), with 1 to the fork's
/// per-transaction maximum of blobs whose proofs verify against the versioned hashes, and a
/// max fee per blob gas that covers the next block's blob base fee.
fn validate_blobs(
    sender: alloy_primitives::Address,
    tx: &TxEip4844Variant,
    ctx: &NextBlock,
) -> Result<(), PoolError> {
    let Some((params, blob_base_fee)) = ctx.blobs else {
        return Err(PoolError::TxTypeNotSupported);
    };
    let TxEip4844Variant::TxEip4844WithSidecar(with) = tx else {
        return Err(PoolError::BlobSidecarMissing);
    };
    let hashes = &with.tx.blob_versioned_hashes;
    if hashes.is_empty() {
        return Err(PoolError::BlobInvalid(
            "blobless blob transaction: a blob transaction carries at least one blob".into(),
        ));
    }
    // Osaka (EIP-7594) caps a transaction at 6 blobs whatever the block may hold.
    let max = if ctx.osaka {
        params.max_blobs_per_tx.min(MAX_BLOBS_PER_TX_FUSAKA)
    } else {
        params.max_blobs_per_tx
    };
    if hashes.len() as u64 > max {
        return Err(PoolError::BlobInvalid(format!(
            "too many blobs in transaction: have {}, permitted {max}",
            hashes.len()
        )));
    }
    match (&with.sidecar, ctx.osaka) {
        (BlobTransactionSidecarVariant::Eip4844(_), true) => {
            return Err(PoolError::BlobInvalid(
                "blob sidecar with EIP-4844 proofs: from Osaka a blob transaction carries \
                 EIP-7594 cell proofs (version 1)"
                    .into(),
            ))
        }
        (BlobTransactionSidecarVariant::Eip7594(_), false) => {
            return Err(PoolError::BlobInvalid(
                "blob sidecar with EIP-7594 cell proofs before Osaka: send EIP-4844 proofs \
                 (version 0)"
                    .into(),
            ))
        }
        _ => {}
    }
    with.sidecar
        .validate(hashes, EnvKzgSettings::Default.get())
        .map_err(|e| PoolError::BlobInvalid(format!("invalid blob sidecar: {e}")))?;
    if with.tx.max_fee_per_blob_gas < blob_base_fee {
        return Err(PoolError::BlobFeeCapTooLow {
            address: sender,
            cap: with.tx.max_fee_per_blob_gas,
            fee: blob_base_fee,
        });
    }
    Ok(())
}

/// The transaction as blocks carry it: a blob transaction without its sidecar (same hash).
pub fn without_sidecar(tx: Recovered<TxEnvelope>) -> Recovered<TxEnvelope> {
    let (env, signer) = tx.into_parts();
    let env = match env {
        TxEnvelope::Eip4844(signed) if signed.tx().as_with_sidecar().is_some() => {
            let (variant, signature, hash) = signed.into_parts();
            TxEnvelope::Eip4844(alloy_consensus::Signed::new_unchecked(
                TxEip4844Variant::TxEip4844(variant.into()),
                signature,
                hash,
            ))
        }
        other => other,
    };
    Recovered::new_unchecked(env, signer)
}

/// Maximum cost: `gas_limit * max_fee + value` (geth's `tx.Cost()` without blob gas).
pub fn max_cost(tx: &TxEnvelope) -> U256 {
    U256::from(tx.gas_limit())
        .saturating_mul(U256::from(tx.max_fee_per_gas()))
        .saturating_add(tx.value())
}

/// The checks that need no state: type, size, gas, fees, chain id.
pub fn validate_stateless(
    tx: &Recovered<TxEnvelope>,
    encoded_len: usize,
    max_size: usize,
    ctx: &NextBlock,
) -> Result<(), PoolError> {
    let env = tx.inner();
    let mut limit = max_size;
    match env {
        TxEnvelope::Eip4844(blob) => {
            validate_blobs(tx.signer(), blob.tx(), ctx)?;
            limit = BLOB_TX_MAX_SIZE;
        }
        TxEnvelope::Eip7702(_) if !ctx.prague => return Err(PoolError::TxTypeNotSupported),
        _ => {}
    }
    if encoded_len > limit {
        return Err(PoolError::OversizedData {
            size: encoded_len,
            limit,
        });
    }
    if ctx.shanghai && env.kind().is_create() && env.input().len() > MAX_INITCODE_SIZE {
        return Err(PoolError::MaxInitCodeSizeExceeded {
            size: env.input().len(),
            limit: MAX_INITCODE_SIZE,
        });
    }
    if env.gas_limit() > ctx.gas_limit {
        return Err(PoolError::GasLimit);
    }
    if ctx.osaka && env.gas_limit() > TX_GAS_LIMIT_CAP {
        return Err(PoolError::GasLimitTooHigh {
            cap: TX_GAS_LIMIT_CAP,
            gas: env.gas_limit(),
        });
    }
    if tip_cap(env) > env.max_fee_per_gas() {
        return Err(PoolError::TipAboveFeeCap);
    }
    // Pre-EIP-155 legacy transactions carry no chain id and are valid on every chain.
    if let Some(have) = env.chain_id() {
        if have != ctx.chain_id {
            return Err(PoolError::InvalidChainId {
                have,
                want: ctx.chain_id,
            });
        }
    }
    let needed = intrinsic_gas(env, ctx.shanghai);
    if env.gas_limit() < needed {
        return Err(PoolError::IntrinsicGas {
            gas: env.gas_limit(),
            needed,
        });
    }
    if ctx.prague {
        let needed = floor_data_gas(env.input());
        if env.gas_limit() < needed {
            return Err(PoolError::FloorDataGas {
                gas: env.gas_limit(),
                needed,
            });
        }
    }
    if env.max_fee_per_gas() < u128::from(ctx.base_fee) {
        return Err(PoolError::FeeCapTooLow {
            address: tx.signer(),
            max_fee: env.max_fee_per_gas(),
            base_fee: ctx.base_fee,
        });
    }
    if env.nonce() == u64::MAX {
        return Err(PoolError::NonceMax {
            address: tx.signer(),
            nonce: env.nonce(),
        });
    }
    if let TxEnvelope::Eip7702(signed) = env {
        if signed.tx().authorization_list.is_empty() {
            return Err(PoolError::EmptyAuthList);
        }
    }
    Ok(())
}

/// The checks against the sender's account: nonce not used, balance covers the maximum cost.
pub fn validate_against_account(
    tx: &Recovered<TxEnvelope>,
    account: Option<&AccountInfo>,
) -> Result<(), PoolError> {
    let (next, balance) = account.map(|a| (a.nonce, a.balance)).unwrap_or_default();
    let env = tx.inner();
    if env.nonce() < next {
        return Err(PoolError::NonceTooLow {
            next,
            nonce: env.nonce(),
        });
    }
    let want = max_cost(env);
    if balance < want {
        return Err(PoolError::InsufficientFunds {
            address: tx.signer(),
            have: balance,
            want,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::test_utils::*;
    use alloy_eips::eip2930::{AccessList, AccessListItem};
    use alloy_primitives::{Address, Bytes, TxKind, B256};

    #[test]
    fn intrinsic_gas_counts_data_bytes_like_geth() {
        let tx = eip1559(&signer(1), 0, 100_000, 10, 1, Bytes::from(vec![0, 0, 1, 2]));
        assert_eq!(intrinsic_gas(tx.inner(), true), 21_000 + 2 * 4 + 2 * 16);
    }

    #[test]
    fn intrinsic_gas_of_create_includes_initcode_words_after_shanghai() {
        let mut t = eip1559_tx(0, 200_000, 10, 1, Bytes::from(vec![1u8; 33]));
        t.to = TxKind::Create;
        let tx = sign(&signer(1), t);
        assert_eq!(intrinsic_gas(tx.inner(), false), 53_000 + 33 * 16);
        assert_eq!(intrinsic_gas(tx.inner(), true), 53_000 + 33 * 16 + 2 * 2);
    }

    #[test]
    fn intrinsic_gas_includes_access_list() {
        let mut t = eip1559_tx(0, 100_000, 10, 1, Bytes::new());
        t.access_list = AccessList(vec![AccessListItem {
            address: Address::repeat_byte(9),
            storage_keys: vec![B256::ZERO, B256::repeat_byte(1)],
        }]);
        let tx = sign(&signer(1), t);
        assert_eq!(intrinsic_gas(tx.inner(), true), 21_000 + 2_400 + 2 * 1_900);
    }

    #[test]
    fn floor_data_gas_counts_tokens() {
        assert_eq!(floor_data_gas(&[0, 1]), 21_000 + 10 * (1 + 4));
    }

    #[test]
    fn decode_rejects_garbage_with_rlp_message() {
        let err = decode_raw(&[0xf8, 0x01]).unwrap_err();
        assert!(matches!(err, PoolError::Decode(_)), "{err}");
        let err = decode_raw(&[0x02, 0xc1]).unwrap_err();
        assert!(
            matches!(err, PoolError::Decode(ref m) if m.starts_with("rlp: ")),
            "{err}"
        );
        let err = decode_raw(&[0x7f, 0xc0]).unwrap_err();
        assert!(matches!(err, PoolError::TxTypeNotSupported), "{err:?}");
        assert!(matches!(decode_raw(&[]), Err(PoolError::Decode(_))));
    }

    #[test]
    fn decode_rejects_trailing_bytes() {
        let tx = eip1559(&signer(1), 0, 21_000, 10, 1, Bytes::new());
        let mut raw = encode(&tx).to_vec();
        raw.push(0);
        assert!(matches!(decode_raw(&raw), Err(PoolError::Decode(_))));
    }
}

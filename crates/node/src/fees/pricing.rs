//! The premium fee formula (modelled on Linea's `linea_estimateGas`): pure
//! functions from the sequencer's pricing inputs and a transaction's compressed size to the
//! priority fee a sender over its quota pays.
//!
//! ```text
//! l1GasPrice     = l2GasPrice x gasPriceRatio
//! variableCost   = l1GasPrice x verificationGasCost / verificationCapacity   (wei per byte)
//! compressedSize = ceil(8n / 254) x 32, n = |lz4(from ++ unsigned tx RLP)|
//! standard       = margin x (floor(variableCost x compressedSize / gasLimit) + fixedCost)
//! premium        = max(standard, premium threshold)
//! ```
//!
//! The sequencer publishes `fixedCost`, `variableCost` and `l2GasPrice` in the vanity of every
//! block it seals ([`PricingInputs::to_vanity`]); followers read them back from the head
//! ([`PricingInputs::from_extra_data`]) so every node quotes the same fee.

use std::cell::RefCell;

use alloy_consensus::{SignableTransaction, TxEip1559};
use alloy_primitives::{Address, TxKind};
use alloy_rpc_types_eth::TransactionRequest;

use crate::karma::FeeParams;

/// The version byte of the pricing vanity layout ([`PricingInputs::to_vanity`]).
pub const PRICING_VANITY_VERSION: u8 = 0x01;

/// Bytes of the pricing vanity that carry data: the version byte and three big-endian `u32`s.
pub const PRICING_VANITY_LEN: usize = 13;

/// Bits of data one field element carries when compressed bytes are packed for the prover.
const FIELD_ELEMENT_BITS: u64 = 254;

/// Bytes one field element occupies.
const FIELD_ELEMENT_BYTES: u64 = 32;

/// Wei per kwei.
const WEI_PER_KWEI: u128 = 1_000;

/// The thread-local buffers are dropped after an input larger than this.
const MAX_RETAINED_INPUT: usize = 64 * 1024;

/// The fee formula's inputs as the sequencer publishes them in each block's vanity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PricingInputs {
    /// Fixed cost per gas, kwei.
    pub fixed_cost_kwei: u32,
    /// Cost per compressed byte (`l1GasPrice x verificationGasCost / verificationCapacity`),
    /// kwei.
    pub variable_cost_kwei: u32,
    /// The L2 gas price, kwei.
    pub l2_gas_price_kwei: u32,
}

impl PricingInputs {
    /// The inputs derived from the configured fee parameters: `variableCost = l2GasPrice x
    /// gasPriceRatio x verificationGasCost / verificationCapacity` (floored), saturating to
    /// `u32::MAX` kwei on overflow or a zero capacity.
    pub fn from_params(params: &FeeParams) -> Self {
        let variable = u128::from(params.l2_gas_price_kwei)
            .checked_mul(u128::from(params.gas_price_ratio))
            .and_then(|l1_price| l1_price.checked_mul(u128::from(params.verification_gas_cost)))
            .and_then(|cost| cost.checked_div(u128::from(params.verification_capacity)))
            .map_or(u32::MAX, |v| u32::try_from(v).unwrap_or(u32::MAX));
        Self {
            fixed_cost_kwei: params.fixed_cost_kwei,
            variable_cost_kwei: variable,
            l2_gas_price_kwei: params.l2_gas_price_kwei,
        }
    }

    /// The 32-byte Clique vanity carrying these inputs: [`PRICING_VANITY_VERSION`], then
    /// `fixedCost`, `variableCost`, `l2GasPrice` as big-endian `u32` kwei, then zeros.
    pub fn to_vanity(&self) -> [u8; 32] {
        let mut vanity = [0u8; 32];
        vanity[0] = PRICING_VANITY_VERSION;
        vanity[1..5].copy_from_slice(&self.fixed_cost_kwei.to_be_bytes());
        vanity[5..9].copy_from_slice(&self.variable_cost_kwei.to_be_bytes());
        vanity[9..13].copy_from_slice(&self.l2_gas_price_kwei.to_be_bytes());
        vanity
    }

    /// The inputs published in a block's `extraData` (its vanity, see [`Self::to_vanity`]);
    /// `None` when it is shorter than [`PRICING_VANITY_LEN`] bytes or carries another version.
    pub fn from_extra_data(extra: &[u8]) -> Option<Self> {
        let data = extra.get(..PRICING_VANITY_LEN)?;
        if data[0] != PRICING_VANITY_VERSION {
            return None;
        }
        let word = |at: usize| -> Option<u32> {
            Some(u32::from_be_bytes(data.get(at..at + 4)?.try_into().ok()?))
        };
        Some(Self {
            fixed_cost_kwei: word(1)?,
            variable_cost_kwei: word(5)?,
            l2_gas_price_kwei: word(9)?,
        })
    }

    /// The fixed cost per gas in wei.
    pub fn fixed_cost_wei(&self) -> u128 {
        u128::from(self.fixed_cost_kwei) * WEI_PER_KWEI
    }

    /// The cost per compressed byte in wei.
    pub fn variable_cost_wei(&self) -> u128 {
        u128::from(self.variable_cost_kwei) * WEI_PER_KWEI
    }

    /// The L2 gas price in wei.
    pub fn l2_gas_price_wei(&self) -> u128 {
        u128::from(self.l2_gas_price_kwei) * WEI_PER_KWEI
    }
}

/// The size `n` compressed bytes take once packed into 254-bit field elements of 32 bytes:
/// `ceil(8n / 254) x 32`. Saturates at `u64::MAX` (unreachable for real inputs).
pub fn packed_size(compressed_len: u64) -> u64 {
    let bits = u128::from(compressed_len) * 8;
    let elements = bits.div_ceil(u128::from(FIELD_ELEMENT_BITS));
    u64::try_from(elements * u128::from(FIELD_ELEMENT_BYTES)).unwrap_or(u64::MAX)
}

/// The formula's `compressedSize` of a transaction: `from ++ unsigned_tx_rlp` compressed as
/// an LZ4 block ([`compressed_len`]), then packed into field elements ([`packed_size`]).
pub fn compressed_size(from: Address, unsigned_tx_rlp: &[u8]) -> u64 {
    packed_size(compressed_len(from, unsigned_tx_rlp))
}

thread_local! {
    /// Per-thread input and output buffers: this runs for every premium `l2_estimateGas`.
    static BUFFERS: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// The LZ4 block length of `from ++ rlp` (`lz4_flex`, deterministic: the same bytes give the same
/// length on every node). LZ4 over deflate: a deflate compressor zeroes its ~160 KB of tables on
/// every reset, which made a premium estimate a third slower than a gasless one; an LZ4 block
/// needs a 16 KB table and compresses a transaction in well under a microsecond.
pub fn compressed_len(from: Address, rlp: &[u8]) -> u64 {
    let run = |(input, output): &mut (Vec<u8>, Vec<u8>)| {
        input.clear();
        input.extend_from_slice(from.as_slice());
        input.extend_from_slice(rlp);
        output.resize(lz4_flex::block::get_maximum_output_size(input.len()), 0);
        let len = lz4_flex::block::compress_into(input, output).unwrap_or(input.len());
        if input.capacity() > MAX_RETAINED_INPUT {
            *input = Vec::new();
            *output = Vec::new();
        }
        len as u64
    };
    BUFFERS
        .try_with(|cell| match cell.try_borrow_mut() {
            Ok(mut buffers) => run(&mut buffers),
            Err(_) => run(&mut Default::default()),
        })
        .unwrap_or_else(|_| run(&mut Default::default()))
}

/// The unsigned EIP-1559 transaction `req` describes, RLP-encoded the way it is signed
/// (`0x02 ++ rlp([chainId, nonce, ...])`): `to` (absent = create), value, input and access
/// list from the request; `maxFeePerGas` / `maxPriorityFeePerGas` from the request, else its
/// `gasPrice`, else 0.
pub fn unsigned_tx_rlp(
    req: &TransactionRequest,
    chain_id: u64,
    nonce: u64,
    gas_limit: u64,
) -> Vec<u8> {
    let tx = TxEip1559 {
        chain_id,
        nonce,
        gas_limit,
        max_fee_per_gas: req.max_fee_per_gas.or(req.gas_price).unwrap_or(0),
        max_priority_fee_per_gas: req.max_priority_fee_per_gas.or(req.gas_price).unwrap_or(0),
        to: req.to.unwrap_or(TxKind::Create),
        value: req.value.unwrap_or_default(),
        access_list: req.access_list.clone().unwrap_or_default(),
        input: req.input.input().cloned().unwrap_or_default(),
    };
    tx.encoded_for_signing()
}

/// The standard fee in wei per gas: `margin x (floor(variableCost x compressedSize / gasLimit)
/// + fixedCost)` with `margin = margin_percent / 100` (multiplied, then floor-divided by 100).
/// A `gas_limit` of 0 counts as 1; saturates at `u128::MAX`, never panics.
pub fn standard_fee(
    inputs: &PricingInputs,
    compressed_size: u64,
    gas_limit: u64,
    margin_percent: u64,
) -> u128 {
    let gas_limit = u128::from(gas_limit.max(1));
    // < 2^42 x 2^64: cannot overflow, but stay checked.
    let per_gas = inputs
        .variable_cost_wei()
        .saturating_mul(u128::from(compressed_size))
        / gas_limit;
    let base = per_gas.saturating_add(inputs.fixed_cost_wei());
    apply_margin(base, margin_percent)
}

/// `floor(value x margin_percent / 100)`, exact whenever the result fits, else `u128::MAX`.
fn apply_margin(value: u128, margin_percent: u64) -> u128 {
    let margin = u128::from(margin_percent);
    if let Some(product) = value.checked_mul(margin) {
        return product / 100;
    }
    // value = 100q + r: value x m / 100 = q x m + floor(r x m / 100), and r x m < 100 x 2^64.
    let (q, r) = (value / 100, value % 100);
    q.checked_mul(margin)
        .and_then(|whole| whole.checked_add(r * margin / 100))
        .unwrap_or(u128::MAX)
}

/// The priority fee a premium transaction pays: the standard fee, but at least the premium
/// threshold.
pub fn premium_priority_fee(standard: u128, threshold: u128) -> u128 {
    standard.max(threshold)
}

#[cfg(test)]
mod tests {

    use alloy_primitives::{address, Bytes, U256};

    use super::*;

    fn inputs() -> PricingInputs {
        PricingInputs {
            fixed_cost_kwei: 30_000,
            variable_cost_kwei: 20_000_000,
            l2_gas_price_kwei: 100_000,
        }
    }

    fn transfer() -> TransactionRequest {
        TransactionRequest::default()
            .to(address!("0x2222222222222222222222222222222222222222"))
            .value(U256::from(1_000_000_000_000_000_000u128))
    }

    const FROM: Address = address!("0x1111111111111111111111111111111111111111");

    #[test]
    fn vanity_round_trip_and_layout() {
        let p = PricingInputs {
            fixed_cost_kwei: 0x0102_0304,
            variable_cost_kwei: 0x0506_0708,
            l2_gas_price_kwei: 0x090a_0b0c,
        };
        let v = p.to_vanity();
        let mut expected = [0u8; 32];
        expected[..13].copy_from_slice(&[1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        assert_eq!(v, expected);
        assert_eq!(PricingInputs::from_extra_data(&v), Some(p));
        // A sealed extraData: vanity ++ 65-byte seal.
        let mut sealed = v.to_vec();
        sealed.extend_from_slice(&[0xff; 65]);
        assert_eq!(PricingInputs::from_extra_data(&sealed), Some(p));
        // Exactly 13 bytes is enough.
        assert_eq!(PricingInputs::from_extra_data(&v[..13]), Some(p));
        let max = PricingInputs {
            fixed_cost_kwei: u32::MAX,
            variable_cost_kwei: u32::MAX,
            l2_gas_price_kwei: u32::MAX,
        };
        assert_eq!(PricingInputs::from_extra_data(&max.to_vanity()), Some(max));
    }

    #[test]
    fn from_extra_data_rejects_short_and_other_versions() {
        let v = inputs().to_vanity();
        assert_eq!(PricingInputs::from_extra_data(&[]), None);
        assert_eq!(PricingInputs::from_extra_data(&v[..12]), None);
        assert_eq!(PricingInputs::from_extra_data(&[0u8; 32]), None);
        for version in [0u8, 2, 0xff] {
            let mut other = v;
            other[0] = version;
            assert_eq!(PricingInputs::from_extra_data(&other), None);
        }
    }

    #[test]
    fn from_params_defaults_and_saturation() {
        let p = PricingInputs::from_params(&FeeParams::default());
        // 100_000 x 15 x 1_200_000 / 90_000.
        assert_eq!(
            p,
            PricingInputs {
                fixed_cost_kwei: 30_000,
                variable_cost_kwei: 20_000_000,
                l2_gas_price_kwei: 100_000,
            }
        );
        let floored = FeeParams {
            l2_gas_price_kwei: 10,
            gas_price_ratio: 1,
            verification_gas_cost: 1,
            verification_capacity: 3,
            ..FeeParams::default()
        };
        assert_eq!(PricingInputs::from_params(&floored).variable_cost_kwei, 3);
        let huge = FeeParams {
            l2_gas_price_kwei: u32::MAX,
            gas_price_ratio: u64::MAX,
            verification_gas_cost: u64::MAX,
            verification_capacity: 1,
            ..FeeParams::default()
        };
        assert_eq!(
            PricingInputs::from_params(&huge).variable_cost_kwei,
            u32::MAX
        );
        let big = FeeParams {
            l2_gas_price_kwei: u32::MAX,
            gas_price_ratio: 2,
            verification_gas_cost: 1,
            verification_capacity: 1,
            ..FeeParams::default()
        };
        assert_eq!(
            PricingInputs::from_params(&big).variable_cost_kwei,
            u32::MAX
        );
        let no_capacity = FeeParams {
            verification_capacity: 0,
            ..FeeParams::default()
        };
        assert_eq!(
            PricingInputs::from_params(&no_capacity).variable_cost_kwei,
            u32::MAX
        );
    }

    #[test]
    fn field_packing() {
        let ceil = |n: u64| (8 * n).div_ceil(254) * 32;
        for (n, size) in [
            (0, 0),
            (1, 32),
            (31, 32),
            (32, 64),
            (63, 64),
            (64, 96),
            (127, 128),
            (128, 160),
            (254, 256),
            (255, 288),
        ] {
            assert_eq!(packed_size(n), size, "n = {n}");
        }
        for n in (0..2_000).chain([u32::MAX as u64, 1 << 40]) {
            assert_eq!(packed_size(n), ceil(n), "n = {n}");
        }
        assert_eq!(packed_size(u64::MAX), u64::MAX);
    }

    #[test]
    fn standard_fee_by_hand() {
        // variable 20_000_000 kwei = 2e10 wei; fixed 30_000 kwei = 3e7 wei.
        // floor(2e10 x 96 / 21_000) = 91_428_571; + 3e7 = 121_428_571; x 120 / 100 = 145_714_285.
        assert_eq!(standard_fee(&inputs(), 96, 21_000, 120), 145_714_285);
        // Margin 100 leaves it unchanged.
        assert_eq!(standard_fee(&inputs(), 96, 21_000, 100), 121_428_571);
        // Margin 0 zeroes it; no compressed bytes leaves the fixed cost.
        assert_eq!(standard_fee(&inputs(), 96, 21_000, 0), 0);
        assert_eq!(standard_fee(&inputs(), 0, 21_000, 100), 30_000_000);
        // Gas limit 0 counts as 1.
        assert_eq!(
            standard_fee(&inputs(), 96, 0, 100),
            standard_fee(&inputs(), 96, 1, 100)
        );
        assert_eq!(
            standard_fee(&inputs(), 96, 1, 100),
            20_000_000_000 * 96 + 30_000_000
        );
        // Both the division and the margin floor.
        let one = PricingInputs {
            fixed_cost_kwei: 0,
            variable_cost_kwei: 1,
            l2_gas_price_kwei: 0,
        };
        assert_eq!(standard_fee(&one, 1, 3, 100), 333);
        assert_eq!(standard_fee(&one, 1, 3, 150), 499);
    }

    #[test]
    fn standard_fee_saturates() {
        let max = PricingInputs {
            fixed_cost_kwei: u32::MAX,
            variable_cost_kwei: u32::MAX,
            l2_gas_price_kwei: u32::MAX,
        };
        assert_eq!(standard_fee(&max, u64::MAX, 0, u64::MAX), u128::MAX);
        assert_eq!(standard_fee(&max, u64::MAX, 1, u64::MAX), u128::MAX);
        // Just below the overflow the margin is still exact.
        let unmargined = standard_fee(&max, u64::MAX, 1, 100);
        assert_eq!(
            unmargined,
            u128::from(u32::MAX) * 1_000 * u128::from(u64::MAX) + u128::from(u32::MAX) * 1_000
        );
        assert_eq!(apply_margin(u128::MAX, 100), u128::MAX);
        assert_eq!(apply_margin(u128::MAX, 50), u128::MAX / 2);
        assert_eq!(apply_margin(u128::MAX - 5, 1), (u128::MAX - 5) / 100);
        assert_eq!(apply_margin(u128::MAX, 101), u128::MAX);
        let exact = |v: u128, m: u64| {
            (U256::from(v) * U256::from(m) / U256::from(100u8)).saturating_to::<u128>()
        };
        for v in [
            u128::MAX,
            u128::MAX - 1,
            u128::MAX / 2,
            u128::MAX / 3 + 7,
            1 << 100,
        ] {
            for m in [0, 1, 99, 100, 101, 120, 199, 250, 10_000, u64::MAX] {
                assert_eq!(apply_margin(v, m), exact(v, m), "{v} x {m}");
            }
        }
    }

    #[test]
    fn premium_is_the_max() {
        assert_eq!(premium_priority_fee(5, 10), 10);
        assert_eq!(premium_priority_fee(10, 5), 10);
        assert_eq!(premium_priority_fee(7, 7), 7);
        assert_eq!(premium_priority_fee(u128::MAX, 0), u128::MAX);
    }

    #[test]
    fn unsigned_rlp_is_the_signing_encoding() {
        let req = transfer()
            .max_fee_per_gas(3)
            .max_priority_fee_per_gas(2)
            .input(Bytes::from_static(&[0xab, 0xcd]).into());
        let rlp = unsigned_tx_rlp(&req, 1337, 7, 21_000);
        let tx = TxEip1559 {
            chain_id: 1337,
            nonce: 7,
            gas_limit: 21_000,
            max_fee_per_gas: 3,
            max_priority_fee_per_gas: 2,
            to: TxKind::Call(address!("0x2222222222222222222222222222222222222222")),
            value: U256::from(1_000_000_000_000_000_000u128),
            access_list: Default::default(),
            input: Bytes::from_static(&[0xab, 0xcd]),
        };
        assert_eq!(rlp, tx.encoded_for_signing());
        assert_eq!(rlp[0], 0x02);
        // Fees default to the gas price, then to zero; no `to` is a create.
        let legacy = TransactionRequest {
            gas_price: Some(9),
            ..Default::default()
        };
        let expected = TxEip1559 {
            chain_id: 1,
            max_fee_per_gas: 9,
            max_priority_fee_per_gas: 9,
            to: TxKind::Create,
            ..Default::default()
        };
        assert_eq!(
            unsigned_tx_rlp(&legacy, 1, 0, 0),
            expected.encoded_for_signing()
        );
        let bare = TxEip1559 {
            chain_id: 1,
            to: TxKind::Create,
            ..Default::default()
        };
        assert_eq!(
            unsigned_tx_rlp(&TransactionRequest::default(), 1, 0, 0),
            bare.encoded_for_signing()
        );
    }

    #[test]
    fn compressed_transfer_is_smaller_and_deterministic() {
        let rlp = unsigned_tx_rlp(&transfer(), 7, 0, 21_000);
        let raw = (20 + rlp.len()) as u64;
        // Repeated-byte addresses compress.
        assert!(compressed_len(FROM, &rlp) < raw);
        assert_eq!(compressed_len(FROM, &rlp), compressed_len(FROM, &rlp));
        // High-entropy data stays about its size (LZ4 adds a few literal-length bytes).
        let real_from: Address = "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720"
            .parse()
            .unwrap();
        let mut req = transfer();
        req.to = Some(TxKind::Call(
            "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955"
                .parse()
                .unwrap(),
        ));
        let real = unsigned_tx_rlp(&req, 7, 12, 21_000);
        let n = compressed_len(real_from, &real);
        assert!(n <= (20 + real.len()) as u64 + 4, "{n}");
        assert_eq!(compressed_size(real_from, &real), packed_size(n));
        // Another thread, interleaved with a large input, gives the same lengths.
        let big = vec![0x5au8; 200 * 1024];
        let big_len = compressed_len(FROM, &big);
        assert!(big_len < 4096);
        let (rlp2, real2) = (rlp.clone(), real.clone());
        let other = std::thread::spawn(move || {
            (
                compressed_len(FROM, &rlp2),
                compressed_len(real_from, &real2),
            )
        })
        .join()
        .unwrap();
        assert_eq!(other, (compressed_len(FROM, &rlp), n));
    }
}

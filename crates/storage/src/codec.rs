//! Byte layouts of stored records.

use alloy_consensus::constants::KECCAK_EMPTY;
use alloy_consensus::{Eip658Value, Receipt, ReceiptEnvelope, TxReceipt as _, TxType};
use alloy_eips::eip2718::Decodable2718;
use alloy_primitives::{Address, Bytes, Log, B256, U256};
use alloy_rlp::{Decodable, Encodable, RlpDecodable, RlpEncodable};

use super::StorageError;
use l2node_trie::state::AccountState;

/// Length of an account in the first layout: nonce (8) ++ balance (32) ++ code hash (32). A
/// compact record is never this long, so both read back.
const ACCOUNT_LEN: usize = 72;

/// `flags` bit of a compact account: the code hash follows the balance (absent: no code).
const HAS_CODE: u8 = 1;
/// `flags` bit of a compact account: the number of the block that wrote the record follows the
/// nonce (absent in records written before it was kept, and in a snapshot's).
const HAS_WRITTEN: u8 = 2;

/// An account record as stored: the account and the block that wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StoredAccount {
    pub(crate) state: AccountState,
    pub(crate) written: Option<u64>,
}

impl StoredAccount {
    /// The account as of block `n`, for the record a read of `n` found: the first history entry
    /// after `n`, or the current record when there is none. A record written after `n` was
    /// written when the account was created: an account that existed before a block has a
    /// history entry at that block, which the read of `n` would have found first. So an
    /// account's creation needs no history entry of its own, which saves one of the few
    /// random inserts a transfer to a new address costs.
    pub(crate) fn at(self, n: u64) -> Option<AccountState> {
        match self.written {
            Some(written) if written > n => None,
            _ => Some(self.state),
        }
    }
}

/// An account, compact: `flags (1) ++ nonce length (1) ++ nonce ++ [written length (1) ++
/// written] ++ balance ++ [code hash]`, numbers big-endian without leading zeros, `written` the
/// block that wrote the record. A new account paid one transfer takes at most 7 bytes in the
/// first 16 million blocks where the first layout took 72; every `accounts` value and every
/// `account_history` entry is one of these.
pub(crate) fn encode_account(a: &AccountState, written: Option<u64>) -> Vec<u8> {
    let nonce = a.nonce.to_be_bytes();
    let nonce = &nonce[a.nonce.leading_zeros() as usize / 8..];
    let balance = a.balance.to_be_bytes::<32>();
    let balance = &balance[a.balance.leading_zeros() / 8..];
    let written = written.map(|w| (w, w.to_be_bytes()));
    let written = written
        .as_ref()
        .map(|(w, bytes)| &bytes[w.leading_zeros() as usize / 8..]);
    let has_code = a.code_hash != KECCAK_EMPTY;
    let code_len = if has_code { 32 } else { 0 };
    let written_len = written.map_or(0, |w| 1 + w.len());
    let mut out = Vec::with_capacity(3 + nonce.len() + written_len + balance.len() + code_len);
    out.push(if has_code { HAS_CODE } else { 0 } | if written.is_some() { HAS_WRITTEN } else { 0 });
    out.push(nonce.len() as u8);
    out.extend_from_slice(nonce);
    if let Some(written) = written {
        out.push(written.len() as u8);
        out.extend_from_slice(written);
    }
    if 2 + nonce.len() + written_len + balance.len() + code_len == ACCOUNT_LEN {
        // One leading zero keeps it apart from the first layout.
        out.push(0);
    }
    out.extend_from_slice(balance);
    if has_code {
        out.extend_from_slice(a.code_hash.as_slice());
    }
    out
}

pub(crate) fn decode_account(bytes: &[u8]) -> Result<StoredAccount, StorageError> {
    if bytes.len() == ACCOUNT_LEN {
        return Ok(StoredAccount {
            state: AccountState {
                nonce: u64::from_be_bytes(bytes[..8].try_into().expect("8 bytes")),
                balance: U256::from_be_slice(&bytes[8..40]),
                code_hash: B256::from_slice(&bytes[40..]),
            },
            written: None,
        });
    }
    let bad = || {
        corrupt(
            "accounts",
            format!("account record of {} bytes", bytes.len()),
        )
    };
    let [flags, nonce_len, rest @ ..] = bytes else {
        return Err(bad());
    };
    if flags & !(HAS_CODE | HAS_WRITTEN) != 0 {
        return Err(bad());
    }
    let (nonce, rest) = be_u64(rest, *nonce_len).ok_or_else(bad)?;
    let (written, rest) = match (flags & HAS_WRITTEN != 0, rest) {
        (true, [len, rest @ ..]) => {
            let (written, rest) = be_u64(rest, *len).ok_or_else(bad)?;
            (Some(written), rest)
        }
        (true, []) => return Err(bad()),
        (false, rest) => (None, rest),
    };
    let code_len = if flags & HAS_CODE != 0 { 32 } else { 0 };
    let balance_len = rest.len().checked_sub(code_len).ok_or_else(bad)?;
    let (balance, code) = rest.split_at(balance_len);
    // At most 32 bytes, after the one leading zero that may keep a record apart from the first
    // layout.
    let balance = match balance {
        [0, rest @ ..] if rest.len() == 32 => rest,
        _ if balance.len() > 32 => return Err(bad()),
        _ => balance,
    };
    Ok(StoredAccount {
        state: AccountState {
            nonce,
            balance: U256::from_be_slice(balance),
            code_hash: if code_len == 0 {
                KECCAK_EMPTY
            } else {
                B256::from_slice(code)
            },
        },
        written,
    })
}

/// A big-endian number of `len` bytes (at most 8) at the start of `bytes`, and the bytes after.
fn be_u64(bytes: &[u8], len: u8) -> Option<(u64, &[u8])> {
    let len = usize::from(len);
    if len > 8 || bytes.len() < len {
        return None;
    }
    let (number, rest) = bytes.split_at(len);
    let mut padded = [0u8; 8];
    padded[8 - len..].copy_from_slice(number);
    Some((u64::from_be_bytes(padded), rest))
}

/// First byte of a header stored with its hash: `0x01 ++ hash (32) ++ RLP header`. The earlier
/// form, the RLP alone, starts with a list prefix (0xc0 or above), so both read back. Keeping
/// the hash saves a keccak of the header on every read of a block or log (33 bytes a block).
const HASHED_HEADER: u8 = 0x01;

/// A header as stored: its hash, then its RLP.
pub(crate) fn encode_header(rlp: &[u8], hash: &B256) -> Vec<u8> {
    let mut out = Vec::with_capacity(33 + rlp.len());
    out.push(HASHED_HEADER);
    out.extend_from_slice(hash.as_slice());
    out.extend_from_slice(rlp);
    out
}

/// The hash and RLP of a stored header (the hash computed for the earlier form).
pub(crate) fn header_parts(stored: &[u8]) -> (B256, &[u8]) {
    match stored {
        [HASHED_HEADER, rest @ ..] if rest.len() >= 32 => {
            (B256::from_slice(&rest[..32]), &rest[32..])
        }
        rlp => (alloy_primitives::keccak256(rlp), rlp),
    }
}

/// Key of a storage slot: address ++ slot.
pub(crate) fn slot_key(address: &Address, slot: &U256) -> [u8; 52] {
    let mut k = [0u8; 52];
    k[..20].copy_from_slice(address.as_slice());
    k[20..].copy_from_slice(&slot.to_be_bytes::<32>());
    k
}

/// `prefix ++ number (BE)`: history and log index keys sort by prefix, then block.
pub(crate) fn with_block(prefix: &[u8], number: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(prefix.len() + 8);
    k.extend_from_slice(prefix);
    k.extend_from_slice(&number.to_be_bytes());
    k
}

pub(crate) fn block_suffix(key: &[u8]) -> u64 {
    u64::from_be_bytes(key[key.len() - 8..].try_into().expect("8-byte suffix"))
}

pub(crate) fn decode_rlp<T: Decodable>(
    table: &'static str,
    mut bytes: &[u8],
) -> Result<T, StorageError> {
    T::decode(&mut bytes).map_err(|e| corrupt(table, e.to_string()))
}

pub(crate) fn encode_rlp<T: Encodable>(value: &T) -> Vec<u8> {
    alloy_rlp::encode(value)
}

/// First byte of a block's receipts in the compact form. The earlier form, an RLP list of
/// EIP-2718 receipts, starts with a list prefix (0xc0 or above), so both read back.
const COMPACT_RECEIPTS: u8 = 0x01;

/// A receipt as stored: its transaction type, status, cumulative gas and logs. The 256-byte
/// logs bloom is left out (it was most of a transfer's receipt) and computed again from the
/// logs when read, as reth does.
#[derive(RlpEncodable, RlpDecodable)]
struct CompactReceipt {
    ty: u8,
    status: Eip658Value,
    cumulative_gas_used: u64,
    logs: Vec<Log>,
}

pub(crate) fn encode_receipts(receipts: &[ReceiptEnvelope]) -> Vec<u8> {
    let list: Vec<CompactReceipt> = receipts
        .iter()
        .map(|r| CompactReceipt {
            ty: r.tx_type() as u8,
            status: r.status_or_post_state(),
            cumulative_gas_used: r.cumulative_gas_used(),
            logs: r.logs().to_vec(),
        })
        .collect();
    let mut out = vec![COMPACT_RECEIPTS];
    list.encode(&mut out);
    out
}

pub(crate) fn decode_receipts(bytes: &[u8]) -> Result<Vec<ReceiptEnvelope>, StorageError> {
    let Some(compact) = bytes.strip_prefix(&[COMPACT_RECEIPTS]) else {
        let list: Vec<Bytes> = decode_rlp("receipts", bytes)?;
        return list
            .iter()
            .map(|b| {
                ReceiptEnvelope::decode_2718(&mut b.as_ref())
                    .map_err(|e| corrupt("receipts", e.to_string()))
            })
            .collect();
    };
    let list: Vec<CompactReceipt> = decode_rlp("receipts", compact)?;
    list.into_iter()
        .map(|r| {
            let ty = TxType::try_from(r.ty)
                .map_err(|e| corrupt("receipts", format!("transaction type: {e}")))?;
            let receipt = Receipt {
                status: r.status,
                cumulative_gas_used: r.cumulative_gas_used,
                logs: r.logs,
            };
            Ok(ReceiptEnvelope::from_typed(ty, receipt.with_bloom()))
        })
        .collect()
}

/// The logs of each receipt of a block's stored receipts, without computing blooms.
pub(crate) fn decode_receipt_logs(bytes: &[u8]) -> Result<Vec<Vec<Log>>, StorageError> {
    match bytes.strip_prefix(&[COMPACT_RECEIPTS]) {
        Some(compact) => Ok(decode_rlp::<Vec<CompactReceipt>>("receipts", compact)?
            .into_iter()
            .map(|r| r.logs)
            .collect()),
        None => Ok(decode_receipts(bytes)?
            .into_iter()
            .map(|r| r.logs().to_vec())
            .collect()),
    }
}

pub(crate) fn corrupt(table: &'static str, reason: String) -> StorageError {
    StorageError::Corrupt { table, reason }
}

#[cfg(test)]
mod tests {
    use alloy_eips::eip2718::Encodable2718;
    use alloy_primitives::{address, b256, LogData};

    use super::*;

    fn receipts() -> Vec<ReceiptEnvelope> {
        let log = Log {
            address: address!("0x00000000000000000000000000000000000000aa"),
            data: LogData::new_unchecked(
                vec![b256!(
                    "0x1111111111111111111111111111111111111111111111111111111111111111"
                )],
                Bytes::from_static(b"data"),
            ),
        };
        let receipt = |status: Eip658Value, gas, logs: Vec<Log>| {
            Receipt {
                status,
                cumulative_gas_used: gas,
                logs,
            }
            .with_bloom()
        };
        vec![
            // Before Byzantium a receipt carries the post-state root.
            ReceiptEnvelope::Legacy(receipt(
                Eip658Value::PostState(B256::repeat_byte(7)),
                21_000,
                vec![],
            )),
            ReceiptEnvelope::Eip1559(receipt(
                Eip658Value::Eip658(true),
                72_000,
                vec![log.clone()],
            )),
            ReceiptEnvelope::Eip4844(receipt(Eip658Value::Eip658(false), 90_000, vec![])),
            ReceiptEnvelope::Eip7702(receipt(
                Eip658Value::Eip658(true),
                120_000,
                vec![log.clone(), log],
            )),
        ]
    }

    #[test]
    fn accounts_round_trip_compact_and_the_first_layout_still_reads() {
        let accounts = [
            AccountState::default(),
            AccountState {
                nonce: 0,
                balance: U256::from(1),
                code_hash: KECCAK_EMPTY,
            },
            AccountState {
                nonce: u64::MAX,
                balance: U256::MAX,
                code_hash: B256::repeat_byte(3),
            },
            // 2 + 8 + 30 + 32 = 72 bytes: padded to 73.
            AccountState {
                nonce: u64::MAX,
                balance: U256::from(1) << 233,
                code_hash: B256::repeat_byte(4),
            },
            // 2 + 6 + 32 + 32 = 72 bytes: padded to 73, a balance of 33 bytes.
            AccountState {
                nonce: 0xffff_ffff_ffff,
                balance: U256::MAX,
                code_hash: B256::repeat_byte(5),
            },
        ];
        for a in accounts {
            for written in [None, Some(0), Some(300), Some(u64::MAX)] {
                let stored = encode_account(&a, written);
                assert_ne!(stored.len(), ACCOUNT_LEN);
                let read = decode_account(&stored).unwrap();
                assert_eq!(read, StoredAccount { state: a, written });
            }
            let mut first = [0u8; ACCOUNT_LEN];
            first[..8].copy_from_slice(&a.nonce.to_be_bytes());
            first[8..40].copy_from_slice(&a.balance.to_be_bytes::<32>());
            first[40..].copy_from_slice(a.code_hash.as_slice());
            let read = decode_account(&first).unwrap();
            assert_eq!((read.state, read.written), (a, None));
        }
        let transfer = AccountState {
            nonce: 0,
            balance: U256::from(1),
            code_hash: KECCAK_EMPTY,
        };
        assert_eq!(encode_account(&transfer, None).len(), 3);
        assert_eq!(encode_account(&transfer, Some(1_000_000)).len(), 7);
        assert!(decode_account(&[0, 9, 1]).is_err());
        assert!(decode_account(&[1, 0, 1]).is_err());
        // The block's length byte is missing, or says more than 8 bytes.
        assert!(decode_account(&[HAS_WRITTEN, 0]).is_err());
        assert!(decode_account(&[HAS_WRITTEN, 0, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1]).is_err());
        // An unknown flag.
        assert!(decode_account(&[4, 0, 1]).is_err());
    }

    #[test]
    fn a_record_written_after_the_block_read_is_an_account_created_later() {
        let state = AccountState {
            nonce: 1,
            balance: U256::from(5),
            code_hash: KECCAK_EMPTY,
        };
        let record = |written| StoredAccount { state, written };
        assert_eq!(record(Some(10)).at(9), None);
        assert_eq!(record(Some(10)).at(10), Some(state));
        assert_eq!(record(None).at(0), Some(state));
    }

    #[test]
    fn headers_keep_their_hash_and_the_earlier_form_still_reads() {
        let rlp = alloy_rlp::encode(alloy_consensus::Header::default());
        let hash = alloy_primitives::keccak256(&rlp);
        let stored = encode_header(&rlp, &hash);
        assert_eq!(header_parts(&stored), (hash, rlp.as_slice()));
        assert_eq!(header_parts(&rlp), (hash, rlp.as_slice()));
    }

    #[test]
    fn receipts_round_trip_without_their_blooms() {
        let receipts = receipts();
        let stored = encode_receipts(&receipts);
        assert_eq!(decode_receipts(&stored).unwrap(), receipts);
        let logs: Vec<Vec<Log>> = receipts.iter().map(|r| r.logs().to_vec()).collect();
        assert_eq!(decode_receipt_logs(&stored).unwrap(), logs);
        let full: usize = receipts.iter().map(|r| r.encode_2718_len()).sum();
        assert!(
            stored.len() + 4 * 256 <= full + 16,
            "{} vs {full}",
            stored.len()
        );
    }

    #[test]
    fn receipts_in_the_earlier_form_still_read() {
        let receipts = receipts();
        let list: Vec<Bytes> = receipts.iter().map(|r| r.encoded_2718().into()).collect();
        assert_eq!(
            decode_receipts(&alloy_rlp::encode(&list)).unwrap(),
            receipts
        );
        assert_eq!(
            decode_receipts(&alloy_rlp::encode(Vec::<Bytes>::new())).unwrap(),
            vec![]
        );
    }
}

//! Clique-style sealing: extraData = 32-byte vanity ++ 65-byte signature over the seal hash.

use alloy_consensus::Header;
use alloy_primitives::{keccak256, Address, Bytes, Signature, B256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;

/// Vanity bytes before the signers / signature (Clique).
pub const VANITY_LEN: usize = 32;
/// Length of the secp256k1 seal signature r ++ s ++ v.
pub const SEAL_LEN: usize = 65;

/// Errors of seal checks.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    /// extraData is shorter than vanity + seal.
    #[error("block {0}: extraData too short for a Clique seal")]
    MissingSeal(u64),
    /// The signature does not recover.
    #[error("block {0}: invalid seal signature")]
    BadSignature(u64),
    /// The signer is not an authorized sealer.
    #[error("block {number}: sealed by {signer}, which is not an authorized signer")]
    Unauthorized {
        /// Block number.
        number: u64,
        /// Recovered signer.
        signer: Address,
    },
}

/// keccak256 of the header RLP with the 65 seal bytes cut from extraData.
pub fn seal_hash(header: &Header) -> B256 {
    let mut unsealed = header.clone();
    let keep = header.extra_data.len().saturating_sub(SEAL_LEN);
    unsealed.extra_data = Bytes::copy_from_slice(&header.extra_data[..keep]);
    keccak256(alloy_rlp::encode(&unsealed))
}

/// Signs `header` in place: extraData becomes `vanity ++ signature`.
pub fn seal(header: &mut Header, vanity: [u8; VANITY_LEN], key: &PrivateKeySigner) {
    let mut extra = vanity.to_vec();
    extra.extend_from_slice(&[0u8; SEAL_LEN]);
    header.extra_data = extra.into();
    let sig = key
        .sign_hash_sync(&seal_hash(header))
        .expect("local signing cannot fail");
    let mut extra = vanity.to_vec();
    extra.extend_from_slice(&sig.as_bytes());
    // Clique encodes v as 0/1, not 27/28.
    extra[VANITY_LEN + 64] = sig.v() as u8;
    header.extra_data = extra.into();
}

/// Recovers the sealer of a header.
pub fn signer(header: &Header) -> Result<Address, SealError> {
    let extra = &header.extra_data;
    if extra.len() < VANITY_LEN + SEAL_LEN {
        return Err(SealError::MissingSeal(header.number));
    }
    let sig_bytes = &extra[extra.len() - SEAL_LEN..];
    let sig = Signature::from_raw(sig_bytes).map_err(|_| SealError::BadSignature(header.number))?;
    // libsecp256k1 (alloy-consensus' `secp256k1` backend), several times faster than k256 on
    // the follower's path; unchecked, like geth's ecrecover of a seal (no low-s rule).
    alloy_consensus::crypto::secp256k1::recover_signer_unchecked(&sig, seal_hash(header))
        .map_err(|_| SealError::BadSignature(header.number))
}

/// The authorized signers listed in a Clique genesis extraData (vanity ++ N*20 ++ 65 zero bytes).
pub fn genesis_signers(extra: &[u8]) -> Vec<Address> {
    if extra.len() < VANITY_LEN + SEAL_LEN {
        return Vec::new();
    }
    extra[VANITY_LEN..extra.len() - SEAL_LEN]
        .chunks_exact(20)
        .map(Address::from_slice)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_header_recovers_its_signer() {
        let key = PrivateKeySigner::random();
        let mut header = Header {
            number: 7,
            ..Default::default()
        };
        seal(&mut header, [1u8; 32], &key);
        assert_eq!(header.extra_data.len(), VANITY_LEN + SEAL_LEN);
        assert_eq!(signer(&header).unwrap(), key.address());
    }

    #[test]
    fn tampered_header_does_not_recover_the_signer() {
        let key = PrivateKeySigner::random();
        let mut header = Header {
            number: 7,
            ..Default::default()
        };
        seal(&mut header, [0u8; 32], &key);
        header.gas_used = 1;
        assert_ne!(signer(&header).ok(), Some(key.address()));
    }
}

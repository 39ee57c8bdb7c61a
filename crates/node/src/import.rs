//! `l2node import`: blocks as `geth export` writes them (concatenated RLP, no separators).

use std::io::Read;

use alloy_consensus::{Block, TxEnvelope};
use alloy_rlp::Decodable;

use crate::chain::{Chain, ChainError};

/// Errors of a chain import.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A block did not decode.
    #[error("block at byte offset {offset} does not decode: {reason}")]
    Decode {
        /// Offset in the file.
        offset: usize,
        /// The RLP error.
        reason: String,
    },
    /// A block was rejected.
    #[error(transparent)]
    Chain(#[from] ChainError),
}

/// Progress of an import, reported after each block.
#[derive(Debug, Clone, Copy)]
pub struct ImportProgress {
    /// Bytes consumed.
    pub offset: usize,
    /// Total bytes in the file.
    pub total: usize,
    /// Number of the block just imported.
    pub number: u64,
    /// Blocks imported so far.
    pub imported: u64,
    /// Blocks skipped because the chain already holds them.
    pub skipped: u64,
}

/// Imports every block of `path` into `chain`; blocks the chain already holds are skipped, so
/// an interrupted import can simply be run again.
pub fn import_file(
    chain: &Chain,
    path: &std::path::Path,
    mut on_progress: impl FnMut(ImportProgress),
) -> Result<ImportProgress, ImportError> {
    let io = |source| ImportError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(io)?;
    let total = bytes.len();
    let mut rest: &[u8] = &bytes;
    let mut progress = ImportProgress {
        offset: 0,
        total,
        number: 0,
        imported: 0,
        skipped: 0,
    };
    while !rest.is_empty() {
        let offset = total - rest.len();
        let block = Block::<TxEnvelope>::decode(&mut rest).map_err(|e| ImportError::Decode {
            offset,
            reason: e.to_string(),
        })?;
        let number = block.header.number;
        if number <= chain.head().header.number {
            progress.skipped += 1;
        } else {
            chain.import(block)?;
            progress.imported += 1;
        }
        progress.offset = total - rest.len();
        progress.number = number;
        on_progress(progress);
    }
    Ok(progress)
}

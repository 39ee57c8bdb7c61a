//! `l2node import`: blocks as `geth export` writes them (concatenated RLP, no separators).

use std::io::{BufReader, Read};

use alloy_consensus::{Block, TxEnvelope};
use alloy_primitives::B256;
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
    /// A block the chain already holds differs from the file's.
    #[error("block {number} in the file (hash {file}) differs from the stored block {number} (hash {stored}): the data directory holds another chain; import into another --data-path")]
    Conflict {
        /// Block number.
        number: u64,
        /// Hash of the file's block.
        file: B256,
        /// Hash of the stored block.
        stored: B256,
    },
    /// A block was rejected.
    #[error(transparent)]
    Chain(#[from] ChainError),
    /// Reading the stored chain failed.
    #[error(transparent)]
    Storage(#[from] l2node_storage::StorageError),
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

/// Imports every block of `path` into `chain`, reading one block at a time (a file of any size
/// needs memory for one block). Blocks the chain already holds are skipped after checking that
/// they are the same blocks, so an interrupted import can simply be run again.
pub fn import_file(
    chain: &Chain,
    path: &std::path::Path,
    mut on_progress: impl FnMut(ImportProgress),
) -> Result<ImportProgress, ImportError> {
    let io = |source| ImportError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let total = file.metadata().map_err(io)?.len() as usize;
    let mut reader = BufReader::with_capacity(READ_BUFFER, file);
    let mut progress = ImportProgress {
        offset: 0,
        total,
        number: 0,
        imported: 0,
        skipped: 0,
    };
    let mut bytes = Vec::new();
    while next_item(&mut reader, &mut bytes).map_err(|e| match e {
        ItemError::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => ImportError::Decode {
            offset: progress.offset,
            reason: "the file ends inside this block (a truncated export?)".into(),
        },
        ItemError::Io(e) => io(e),
        ItemError::NotAList => ImportError::Decode {
            offset: progress.offset,
            reason: "not an RLP list".into(),
        },
    })? {
        let offset = progress.offset;
        let decode_err = |reason: String| ImportError::Decode { offset, reason };
        let mut rest = &bytes[..];
        let block =
            Block::<TxEnvelope>::decode(&mut rest).map_err(|e| decode_err(e.to_string()))?;
        if !rest.is_empty() {
            return Err(decode_err(format!("{} bytes after the block", rest.len())));
        }
        let number = block.header.number;
        if number <= chain.head().header.number {
            let file = block.header.hash_slow();
            if chain.storage().block_number(&file)? != Some(number) {
                let stored = chain
                    .storage()
                    .header(number)?
                    .map(|h| h.hash_slow())
                    .unwrap_or_default();
                return Err(ImportError::Conflict {
                    number,
                    file,
                    stored,
                });
            }
            progress.skipped += 1;
        } else {
            chain.import(block)?;
            progress.imported += 1;
        }
        progress.offset += bytes.len();
        progress.number = number;
        on_progress(progress);
    }
    Ok(progress)
}

/// Read buffer of an import: large sequential reads, one block at a time decoded from them.
const READ_BUFFER: usize = 1 << 20;

enum ItemError {
    Io(std::io::Error),
    NotAList,
}

/// Reads the next RLP list (a block) into `out`; `false` at the end of the input.
fn next_item(reader: &mut impl Read, out: &mut Vec<u8>) -> Result<bool, ItemError> {
    let mut first = [0u8; 1];
    match reader.read(&mut first).map_err(ItemError::Io)? {
        0 => return Ok(false),
        _ if first[0] < 0xc0 => return Err(ItemError::NotAList),
        _ => {}
    }
    out.clear();
    out.push(first[0]);
    let payload = if first[0] <= 0xf7 {
        usize::from(first[0] - 0xc0)
    } else {
        let len_of_len = usize::from(first[0] - 0xf7);
        let mut len = [0u8; 8];
        reader
            .read_exact(&mut len[8 - len_of_len..])
            .map_err(ItemError::Io)?;
        out.extend_from_slice(&len[8 - len_of_len..]);
        usize::try_from(u64::from_be_bytes(len)).map_err(|_| ItemError::NotAList)?
    };
    let start = out.len();
    out.resize(start + payload, 0);
    reader
        .read_exact(&mut out[start..])
        .map_err(ItemError::Io)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use alloy_rlp::Encodable;

    use super::*;
    use crate::chain::open_chain;
    use crate::test_utils::fixture_chain;

    fn write(blocks: &[Block<TxEnvelope>], path: &std::path::Path) {
        let mut out = Vec::new();
        for b in blocks {
            b.encode(&mut out);
        }
        std::fs::write(path, out).unwrap();
    }

    #[test]
    fn reimport_skips_held_blocks_but_refuses_different_ones() {
        let (spec, blocks) = fixture_chain("cancun-20-blocks");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("chain.rlp");
        write(&blocks, &file);
        let chain = open_chain(&dir.path().join("db"), Arc::new(spec)).unwrap();
        let mut seen = 0;
        let done = import_file(&chain, &file, |_| seen += 1).unwrap();
        assert_eq!(
            (done.imported, seen, done.offset, done.total),
            (20, 20, done.total, done.total)
        );
        assert_eq!(import_file(&chain, &file, |_| {}).unwrap().skipped, 20);

        let mut other = blocks[0].clone();
        other.header.extra_data = vec![1, 2, 3].into();
        write(&[other], &file);
        let err = import_file(&chain, &file, |_| {}).unwrap_err();
        assert!(
            matches!(err, ImportError::Conflict { number: 1, .. }),
            "{err}"
        );
    }

    #[test]
    fn truncated_file_is_an_error_not_a_partial_block() {
        let (spec, blocks) = fixture_chain("cancun-20-blocks");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("chain.rlp");
        let mut out = Vec::new();
        blocks[0].encode(&mut out);
        blocks[1].encode(&mut out);
        out.truncate(out.len() - 10);
        std::fs::write(&file, out).unwrap();
        let chain = open_chain(&dir.path().join("db"), Arc::new(spec)).unwrap();
        let err = import_file(&chain, &file, |_| {}).unwrap_err();
        assert!(matches!(err, ImportError::Decode { .. }), "{err}");
        assert_eq!(chain.head().header.number, 1, "the whole first block is in");
    }
}

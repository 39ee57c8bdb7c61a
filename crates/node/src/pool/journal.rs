//! The pool journal: accepted transactions' EIP-2718 bytes, each as a record
//! `[u32 little-endian length][bytes]`, appended in acceptance order.
//!
//! Durability: each record is written with one `write_all` on an unbuffered file, so once
//! `append` returns the bytes are in the OS page cache and survive a crash of the node process.
//! We do not `sync_data` per record: an fsync costs milliseconds on most disks and would cap
//! admission at a few hundred transactions per second under the pool lock, while the only
//! extra risk it covers (power loss / kernel crash) loses pool contents that senders can
//! resubmit — a pool is a cache, not a ledger. Compaction does fsync (rarely, amortised), because
//! a torn rename there could lose the whole journal rather than the last few records.
//!
//! A crash mid-append leaves a truncated last record; reading stops there and the next
//! compaction rewrites the file without it.

use std::{
    fs::{self, File, OpenOptions},
    io::{self, Read, Write},
    path::{Path, PathBuf},
};

/// Largest record accepted when reading: anything longer is corruption (the pool never accepts
/// more than its `max_tx_size`, or 1 MiB for a blob transaction, both far below this).
const MAX_RECORD: usize = 16 * 1024 * 1024;

/// An append-only file of raw transactions.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
    /// Records in the file, live or not (replaced, included, evicted).
    records: usize,
}

impl Journal {
    /// Opens (creating if needed) the journal for appending. Does not read it; `records` starts
    /// at zero until [`Journal::read_all`] or a rewrite establishes the real count.
    pub fn open(path: &Path) -> io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            records: 0,
        })
    }

    /// Records currently in the file (an estimate before the journal was first read).
    pub fn records(&self) -> usize {
        self.records
    }

    /// Appends one transaction; written to the OS before returning (see the module docs).
    pub fn append(&mut self, raw: &[u8]) -> io::Result<()> {
        let len = u32::try_from(raw.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "record too large"))?;
        let mut record = Vec::with_capacity(4 + raw.len());
        record.extend_from_slice(&len.to_le_bytes());
        record.extend_from_slice(raw);
        self.file.write_all(&record)?;
        self.file.flush()?;
        self.records += 1;
        Ok(())
    }

    /// Reads every complete record. A truncated or implausible tail (crash mid-append) ends the
    /// read without error.
    pub fn read_all(&mut self) -> io::Result<Vec<Vec<u8>>> {
        let mut bytes = Vec::new();
        File::open(&self.path)?.read_to_end(&mut bytes)?;
        let mut out = Vec::new();
        let mut rest = bytes.as_slice();
        while rest.len() >= 4 {
            let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            if len > MAX_RECORD || rest.len() - 4 < len {
                tracing::warn!(path = %self.path.display(), "pool journal has a truncated tail");
                break;
            }
            out.push(rest[4..4 + len].to_vec());
            rest = &rest[4 + len..];
        }
        self.records = out.len();
        Ok(out)
    }

    /// Replaces the file's contents with `txs`: written to a temporary file, synced, then renamed
    /// over the journal, so a crash leaves either the old or the new journal.
    pub fn rewrite<'a>(&mut self, txs: impl IntoIterator<Item = &'a [u8]>) -> io::Result<()> {
        let tmp = self.path.with_extension("tmp");
        let mut count = 0;
        {
            let mut buf = Vec::new();
            for raw in txs {
                let len = u32::try_from(raw.len())
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "record too large"))?;
                buf.extend_from_slice(&len.to_le_bytes());
                buf.extend_from_slice(raw);
                count += 1;
            }
            let mut file = File::create(&tmp)?;
            file.write_all(&buf)?;
            file.sync_data()?;
        }
        fs::rename(&tmp, &self.path)?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // Persist the rename itself; not supported on every platform, hence best effort.
            let _ = File::open(dir).and_then(|d| d.sync_all());
        }
        self.file = OpenOptions::new().append(true).open(&self.path)?;
        self.records = count;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_round_trips_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/txs.journal");
        let mut j = Journal::open(&path).unwrap();
        j.append(b"one").unwrap();
        j.append(b"").unwrap();
        j.append(b"three").unwrap();
        let mut j = Journal::open(&path).unwrap();
        assert_eq!(
            j.read_all().unwrap(),
            vec![b"one".to_vec(), vec![], b"three".to_vec()]
        );
        assert_eq!(j.records(), 3);
    }

    #[test]
    fn journal_ignores_truncated_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("txs.journal");
        let mut j = Journal::open(&path).unwrap();
        j.append(b"complete").unwrap();
        OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(&[9, 0, 0, 0, 1])
            .unwrap();
        assert_eq!(j.read_all().unwrap(), vec![b"complete".to_vec()]);
    }

    #[test]
    fn journal_rewrite_replaces_contents_and_keeps_appending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("txs.journal");
        let mut j = Journal::open(&path).unwrap();
        for r in [b"a", b"b", b"c"] {
            j.append(r).unwrap();
        }
        j.rewrite([b"b".as_slice()]).unwrap();
        assert_eq!(j.records(), 1);
        j.append(b"d").unwrap();
        assert_eq!(j.read_all().unwrap(), vec![b"b".to_vec(), b"d".to_vec()]);
    }
}

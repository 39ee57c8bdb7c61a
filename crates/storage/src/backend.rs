//! The database file's redb backend: redb's own file backend, with reads served from a memory map
//! of the file.
//!
//! redb reads each page its cache misses with one `pread` into a fresh buffer. A node whose state
//! outgrows that cache misses on most of a block's random trie reads, and a 4 KiB `pread` from
//! the OS page cache costs about 3 µs on the 2-core machine this project is measured on: at ten
//! million accounts a block's thousand fifth-level trie reads took two fifths of the state root's
//! thread time, and a third less through the map. Copying a page out of a shared read-only
//! mapping of the file is a memory copy once the page is mapped (LMDB and MDBX read their files
//! through a map too).
//!
//! Everything else is redb's [`FileBackend`]: writes (`pwrite`), syncs, length changes and the
//! file locks. A shared mapping and `pwrite` go through one page cache, so a read through the map
//! sees every write made before it. redb never reads a page while it writes it (a write
//! transaction writes pages no reader can reach until its commit), which is what makes copying out
//! of a mapping the writes change as safe as `pread`.

use std::{fmt, fs::File, io, ops::Bound, path::Path};

use parking_lot::RwLock;
use redb::{backends::FileBackend, BackendError, StorageBackend};

/// Smallest mapping: the file may grow to 1 GiB before it is mapped again. Address space is
/// reserved, not memory: only the pages read are mapped in.
const MIN_MAP_BYTES: u64 = 1 << 30;

/// The database file: redb's [`FileBackend`], reads through a mapping of the file.
pub(crate) struct MappedFile {
    file: FileBackend,
    /// A second, read-only handle on the file, for mapping it (again, once it outgrows the
    /// mapping). Kept open as long as the backend: on some systems closing any handle on a file
    /// releases the process's locks on it, redb's included.
    handle: File,
    map: RwLock<Mapping>,
    /// Smallest mapping ([`MIN_MAP_BYTES`]; tests make it small to map again often).
    min_map: u64,
}

/// The mapping and how much of it is the file (a mapping reaches past the end of the file so
/// that it need not be redone as the file grows; reading there would fault).
struct Mapping {
    map: Option<memmap2::Mmap>,
    file_len: u64,
}

impl MappedFile {
    /// Opens (or creates) the database file at `path`, as redb's `Builder::create` opens it.
    pub(crate) fn open(path: &Path) -> Result<Self, redb::DatabaseError> {
        Self::open_with_min_map(path, MIN_MAP_BYTES)
    }

    fn open_with_min_map(path: &Path, min_map: u64) -> Result<Self, redb::DatabaseError> {
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let handle = File::open(path)?;
        let file_len = file.metadata()?.len();
        let backend = Self {
            file: FileBackend::new(file)?,
            handle,
            map: RwLock::new(Mapping {
                map: None,
                file_len,
            }),
            min_map,
        };
        backend.map.write().map = backend.map_file(file_len);
        Ok(backend)
    }

    /// A read-only shared mapping of the file with room for it to grow to twice `file_len` (at
    /// least `min_map`); `None` when the system refuses it (too little address space, or not a
    /// Unix system), and reads then go through `pread`.
    fn map_file(&self, file_len: u64) -> Option<memmap2::Mmap> {
        if !cfg!(unix) {
            return None;
        }
        let len = usize::try_from(file_len.saturating_mul(2).max(self.min_map)).ok()?;
        // SAFETY: the mapping is read-only and only read where the file is (below `file_len`,
        // which `set_len` keeps). The file is redb's, which locks it against other writers;
        // redb never reads a page it is writing (see the module's documentation).
        let mapped = unsafe { memmap2::MmapOptions::new().len(len).map(&self.handle) };
        match mapped {
            Ok(map) => Some(map),
            Err(error) => {
                tracing::warn!(
                    target: "l2node::storage",
                    %error,
                    "the database file cannot be memory-mapped: reading it with system calls"
                );
                None
            }
        }
    }
}

impl fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mapping = self.map.read();
        f.debug_struct("MappedFile")
            .field("file_len", &mapping.file_len)
            .field("mapped", &mapping.map.as_ref().map(|m| m.len()))
            .finish()
    }
}

impl StorageBackend for MappedFile {
    fn len(&self) -> Result<u64, io::Error> {
        self.file.len()
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), io::Error> {
        {
            let mapping = self.map.read();
            let end = offset.checked_add(out.len() as u64);
            if let (Some(map), Some(end)) = (&mapping.map, end) {
                if end <= mapping.file_len {
                    // In the file, so in the mapping (it is at least the file's length).
                    out.copy_from_slice(&map[offset as usize..end as usize]);
                    return Ok(());
                }
            }
        }
        // Past the end as this backend knows it (the file error redb expects), or not mapped.
        self.file.read(offset, out)
    }

    fn set_len(&self, len: u64) -> Result<(), io::Error> {
        // Readers hold the read lock while they copy: none is inside the mapping while the file
        // shrinks under it.
        let mut mapping = self.map.write();
        self.file.set_len(len)?;
        let fits = mapping.map.as_ref().is_some_and(|m| len <= m.len() as u64);
        if !fits {
            // Grown past the mapping (or never mapped): mapped again with room to grow.
            mapping.map = None;
            mapping.map = self.map_file(len);
        }
        mapping.file_len = len;
        Ok(())
    }

    fn sync_data(&self) -> Result<(), io::Error> {
        self.file.sync_data()
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), io::Error> {
        self.file.write(offset, data)
    }

    fn close(&self) -> Result<(), io::Error> {
        self.map.write().map = None;
        self.file.close()
    }

    fn try_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.file.try_lock_range(start, end)
    }

    fn try_lock_shared_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> Result<bool, BackendError> {
        self.file.try_lock_shared_range(start, end)
    }

    fn lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.file.lock_range(start, end)
    }

    fn lock_shared_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.file.lock_shared_range(start, end)
    }

    fn unlock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.file.unlock_range(start, end)
    }

    fn query_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.file.query_lock_range(start, end)
    }
}

#[cfg(test)]
mod tests {
    use redb::{ReadableDatabase, ReadableTableMetadata, TableDefinition};

    use super::*;

    /// Smallest mapping in these tests: a few pages, so that the file outgrows it often.
    const SMALL_MAP: u64 = 64 * 1024;

    fn mapped_len(backend: &MappedFile) -> Option<u64> {
        backend.map.read().map.as_ref().map(|m| m.len() as u64)
    }

    #[test]
    fn reads_see_writes_through_the_map_as_the_file_grows_and_shrinks() {
        let dir = tempfile::tempdir().unwrap();
        let backend = MappedFile::open_with_min_map(&dir.path().join("db"), SMALL_MAP).unwrap();
        // Nothing in the file yet: reading it is the end-of-file error.
        let mut page = [0u8; 4096];
        assert!(backend.read(0, &mut page).is_err());
        let mut written = Vec::new();
        for (round, len) in [SMALL_MAP / 2, SMALL_MAP * 3, SMALL_MAP * 20]
            .iter()
            .enumerate()
        {
            backend.set_len(*len).unwrap();
            let mapped = mapped_len(&backend);
            assert!(mapped.is_some_and(|m| m >= *len), "{mapped:?} for {len}");
            // New positions read as zeros, then as what is written there.
            backend.read(len - 4096, &mut page).unwrap();
            assert_eq!(page, [0; 4096]);
            let offset = len - 4096;
            backend.write(offset, &[round as u8 + 1; 4096]).unwrap();
            written.push((offset, round as u8 + 1));
            for (offset, byte) in &written {
                backend.read(*offset, &mut page).unwrap();
                assert_eq!(page, [*byte; 4096]);
            }
        }
        // Shrunk: what is left reads as written, what is gone is the end-of-file error.
        backend.set_len(SMALL_MAP * 3).unwrap();
        backend.read(written[1].0, &mut page).unwrap();
        assert_eq!(page, [2; 4096]);
        assert!(backend.read(written[2].0, &mut page).is_err());
        assert!(backend.read(u64::MAX - 10, &mut page).is_err());
        backend.close().unwrap();
    }

    const TABLE: TableDefinition<u64, &[u8]> = TableDefinition::new("values");

    fn value(key: u64) -> Vec<u8> {
        vec![(key % 251) as u8; 100 + (key % 900) as usize]
    }

    /// A redb database on the backend, with a small mapping and cache: many commits grow the file
    /// past its mapping, deletes and a compaction shrink it, and every value reads back as
    /// written, before and after the database is opened again.
    #[test]
    fn a_database_on_the_map_reads_back_what_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let open = || {
            redb::Database::builder()
                .set_cache_size(64 * 1024)
                .create_with_backend(MappedFile::open_with_min_map(&path, SMALL_MAP).unwrap())
                .unwrap()
        };
        let check = |db: &redb::Database, keys: std::ops::Range<u64>| {
            let read = db.begin_read().unwrap();
            let table = read.open_table(TABLE).unwrap();
            for key in keys {
                let got = table.get(key).unwrap().map(|v| v.value().to_vec());
                assert_eq!(got, Some(value(key)), "key {key}");
            }
            assert_eq!(table.len().unwrap(), 2_000);
        };
        let mut db = open();
        for batch in 0..20u64 {
            let tx = db.begin_write().unwrap();
            {
                let mut table = tx.open_table(TABLE).unwrap();
                for key in batch * 200..(batch + 1) * 200 {
                    table.insert(key, value(key).as_slice()).unwrap();
                }
            }
            tx.commit().unwrap();
        }
        let tx = db.begin_write().unwrap();
        {
            let mut table = tx.open_table(TABLE).unwrap();
            for key in 2_000..4_000 {
                table.remove(key).unwrap();
            }
        }
        tx.commit().unwrap();
        check(&db, 0..2_000);
        let before = std::fs::metadata(&path).unwrap().len();
        while db.compact().unwrap() {}
        assert!(std::fs::metadata(&path).unwrap().len() < before);
        check(&db, 0..2_000);
        drop(db);
        check(&open(), 0..2_000);
    }

    #[test]
    fn a_database_open_elsewhere_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let _first = crate::open_database(&path, 1 << 20).unwrap();
        let second = crate::open_database(&path, 1 << 20).map_err(redb::Error::from);
        assert!(matches!(second, Err(redb::Error::DatabaseAlreadyOpen)));
    }
}

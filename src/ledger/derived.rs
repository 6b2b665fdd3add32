//! Writing the derived files at the ledger root (the state snapshot, the graph file):
//! each goes to a temporary `.name.*` file in the directory, written a bounded chunk at a
//! time as it is encoded ([`Derived::stream`]), then synced if asked and renamed over
//! `DIR/name`, so a reader finds the old file or the new one, whole. One left unsynced may
//! be old or damaged after a machine crash, which its checks detect.
//!
//! Streaming keeps an encoding of a hundred megabytes out of memory: the writer touches one
//! buffer of [`DERIVED_WRITE_CHUNK`] bytes again and again instead of fresh memory as large
//! as the file, which on a host that takes back the guest's free pages costs a host page
//! fault per page first touched; and it leaves only the file's newest chunks in the page
//! cache, for the same reason.

use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::codec::Chunks;
use crate::layout;
use crate::limits::{DERIVED_CACHED_CHUNKS, DERIVED_WRITE_CHUNK};
use crate::store::page_cache::{self, ALIGN};

/// What [`Derived::stream`] hands an encoder: the `put_*` functions write to it, and it
/// writes each full chunk to the file.
pub type Stream<'a> = Chunks<Box<dyn FnMut(&[u8]) -> io::Result<()> + 'a>, io::Error>;

/// A derived file being written (see the module doc). Dropped without
/// [`Derived::persist`], its temporary file is removed and `DIR/name` is left as it was.
pub struct Derived {
    file: tempfile::NamedTempFile,
    to: PathBuf,
}

impl Derived {
    /// A new, empty temporary file for `DIR/name`.
    pub fn create(dir: &Path, name: &str) -> io::Result<Derived> {
        let file = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .tempfile_in(dir)?;
        Ok(Derived {
            file,
            to: dir.join(name),
        })
    }

    /// Writes what `encode` puts from byte `at` of the file on, a chunk of
    /// [`DERIVED_WRITE_CHUNK`] bytes at a time, handing each chunk to `seen` first (a
    /// checksum's update); returns the bytes written, or the first write's error.
    ///
    /// Each chunk's writeback starts as soon as it is written, and the pages of all but
    /// the newest [`DERIVED_CACHED_CHUNKS`] are dropped from the page cache once written
    /// back (`store::page_cache`): the file's writes reuse the same pages, and its later
    /// sync finds little left to write. A reader of the file reads it from the disk.
    pub fn stream(
        &self,
        at: u64,
        mut seen: impl FnMut(&[u8]),
        encode: impl FnOnce(&mut Stream<'_>),
    ) -> io::Result<u64> {
        let file = self.file.as_file();
        let (mut offset, mut dropped) = (at, 0u64);
        let kept = (DERIVED_CACHED_CHUNKS * DERIVED_WRITE_CHUNK) as u64;
        let mut out: Stream<'_> = Chunks::new(
            DERIVED_WRITE_CHUNK,
            Box::new(|chunk: &[u8]| {
                seen(chunk);
                file.write_all_at(chunk, offset)?;
                let end = offset + chunk.len() as u64;
                page_cache::start_writeback(file, offset, end);
                let written_back = end.saturating_sub(kept);
                if written_back > dropped {
                    page_cache::drop_cached(file, dropped & !(ALIGN - 1), written_back);
                    dropped = written_back;
                }
                offset = end;
                Ok(())
            }),
        );
        encode(&mut out);
        out.finish()
    }

    /// Writes `bytes` at byte `at` of the file (a header whose checksum covers what was
    /// streamed after it).
    pub fn write_at(&self, bytes: &[u8], at: u64) -> io::Result<()> {
        self.file.as_file().write_all_at(bytes, at)
    }

    /// Syncs the file when `sync`, then renames it over `DIR/name`.
    pub fn persist(self, sync: bool) -> io::Result<()> {
        if sync {
            self.file.as_file().sync_data()?;
        }
        self.file.persist(&self.to).map_err(|e| e.error)?;
        Ok(())
    }
}

/// Removes temporary files a writer killed while writing a derived file (the snapshot,
/// the graph file) left in `dir`.
pub fn remove_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefixes = [layout::SNAPSHOT, layout::GRAPH].map(|name| format!(".{name}."));
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if prefixes.iter().any(|p| name.starts_with(p.as_str())) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

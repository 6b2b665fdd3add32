//! The runtime's progress marker, `DIR/runtime-progress.json` next to the ledger it belongs
//! to: how far the input was taken in (and in which file), how long the output was, and up
//! to which ledger position everything was handled and written, plus the agents the
//! controller has declared gone. Replaced atomically after every step that did something:
//! without syncs while running (it survives the process being killed; a machine crash may
//! leave an older one, which costs work done again), with them when the runtime stops.
//!
//! The marker is a checkpoint, not the truth: events after `ledger_position` are scanned
//! again on start (inbox records give the input position, `(cause, effect)` tags the
//! actions already taken, outbox records what the output should hold), so a crash between
//! any two steps loses nothing. The format is in `docs/format.md`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::limits::MAX_PROGRESS_BYTES;
use akledger::canonical::{parse_value, to_canonical, Json, Object};
use akledger::did::DidCoreId;
use akledger::error::Error;
use akledger::layout::Layout;
use akledger::store::atomic;

use crate::envelope::{FileIdentity, InputCursor};

/// The marker's `version`.
const VERSION: i64 = 1;

/// The marker's content.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Progress {
    /// Where the input was taken in to (every envelope before it is an inbox event).
    pub input: InputCursor,
    /// The output's length when every outbox event before `ledger_position` was written.
    pub output_length: u64,
    /// Ledger events before this admission position are handled and their output written.
    pub ledger_position: u64,
    /// Agents the controller declared gone.
    pub gone: BTreeSet<DidCoreId>,
}

/// The marker's path in ledger directory `dir` ([`akledger::layout::RUNTIME_PROGRESS`]).
pub fn progress_path(dir: &Path) -> PathBuf {
    Layout::new(dir).runtime_progress()
}

fn int(n: u64) -> Json {
    Json::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

impl Progress {
    /// The marker's canonical JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        let gone = self.gone.iter().map(|d| d.as_str().into()).collect();
        let doc = Object::new()
            .with("version", Json::Int(VERSION))
            .with("input_offset", int(self.input.offset))
            .with("output_length", int(self.output_length))
            .with("ledger_position", int(self.ledger_position))
            .with("gone", Json::Array(gone));
        let doc = match self.input.file {
            Some(f) => doc.with("input_file", file_json(f)),
            None => doc,
        };
        let mut bytes = to_canonical(&doc.into());
        bytes.push(b'\n');
        bytes
    }

    /// Reads a marker's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Progress, String> {
        let doc = parse_value(bytes.strip_suffix(b"\n").unwrap_or(bytes))
            .map_err(|e| format!("not JSON: {}", e.message()))?;
        let doc = doc.as_object().ok_or("not a JSON object")?;
        let number = |k: &str| match doc.get(k) {
            Some(&Json::Int(n)) => u64::try_from(n).map_err(|_| format!("{k} is negative")),
            _ => Err(format!("{k} is missing or not an integer")),
        };
        if number("version")? != VERSION as u64 {
            return Err("unknown version".into());
        }
        let mut gone = BTreeSet::new();
        for d in doc
            .get("gone")
            .and_then(Json::as_array)
            .ok_or("gone is missing")?
        {
            let text = d.as_str().ok_or("gone holds a non-string")?;
            gone.insert(DidCoreId::parse(text).map_err(|e| e.message().to_string())?);
        }
        let file = match doc.get("input_file") {
            None => None,
            Some(f) => Some(file_of(f).ok_or("input_file is not {device, inode, guard}")?),
        };
        Ok(Progress {
            input: InputCursor {
                offset: number("input_offset")?,
                file,
            },
            output_length: number("output_length")?,
            ledger_position: number("ledger_position")?,
            gone,
        })
    }

    /// Reads the marker of ledger directory `dir`; `None` when there is none yet.
    pub fn load(dir: &Path) -> Result<Option<Progress>, Error> {
        let path = progress_path(dir);
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(Error::Io { path, source }),
        };
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, MAX_PROGRESS_BYTES),
            &mut bytes,
        )
        .map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        Progress::from_bytes(&bytes)
            .map(Some)
            .map_err(|reason| Error::Corrupt {
                path,
                offset: 0,
                reason,
            })
    }

    /// Writes the marker of ledger directory `dir`, atomically, durably when `durable`.
    pub fn save(&self, dir: &Path, durable: bool) -> Result<(), Error> {
        let path = progress_path(dir);
        let write = if durable {
            atomic::replace
        } else {
            atomic::replace_unsynced
        };
        write(&path, &self.to_bytes(), Some(0o600)).map_err(|source| Error::Io { path, source })
    }
}

/// `{"device","inode","guard"}`, the guard as 16 hex digits.
pub fn file_json(f: FileIdentity) -> Json {
    Object::new()
        .with("device", int(f.device))
        .with("inode", int(f.inode))
        .with("guard", format!("{:016x}", f.guard).as_str().into())
        .into()
}

/// Reads [`file_json`].
pub fn file_of(v: &Json) -> Option<FileIdentity> {
    let obj = v.as_object()?;
    let number = |k: &str| match obj.get(k) {
        Some(&Json::Int(n)) => u64::try_from(n).ok(),
        _ => None,
    };
    let guard = obj.get("guard")?.as_str()?;
    (guard.len() == 16).then_some(())?;
    Some(FileIdentity {
        device: number("device")?,
        inode: number("inode")?,
        guard: u64::from_str_radix(guard, 16).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_round_trips_and_damage_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Progress::load(dir.path()).unwrap(), None);
        let p = Progress {
            input: InputCursor {
                offset: 120,
                file: Some(FileIdentity {
                    device: 2049,
                    inode: 77,
                    guard: 0xfeed_beef_0000_0001,
                }),
            },
            output_length: 77,
            ledger_position: 9,
            gone: [DidCoreId::parse("ak:did_core:key:z6Mkabc").unwrap()].into(),
        };
        p.save(dir.path(), true).unwrap();
        assert_eq!(Progress::load(dir.path()).unwrap(), Some(p.clone()));
        // A marker of a version that did not name the file still reads.
        let old = Progress {
            input: InputCursor {
                offset: 120,
                file: None,
            },
            ..p
        };
        old.save(dir.path(), false).unwrap();
        assert_eq!(Progress::load(dir.path()).unwrap(), Some(old));
        std::fs::write(progress_path(dir.path()), b"{\"version\":1}").unwrap();
        assert!(matches!(
            Progress::load(dir.path()),
            Err(Error::Corrupt { .. })
        ));
    }
}

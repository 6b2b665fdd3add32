//! The runtime's progress marker, `DIR/runtime-progress.json` next to the ledger it belongs
//! to: per connection, how far its input was taken in (and in which file), its output
//! position, and the first envelope of each lane not written yet; up to which ledger
//! position everything was handled and written, and how long the ledger was; plus the
//! agents the controller has declared gone. Replaced atomically after every step that did
//! something: without syncs while running (it survives the process being killed; a machine
//! crash may leave an older one, which costs work done again), with them when the runtime
//! stops.
//!
//! The marker is a checkpoint, not the truth: events after `ledger_position` are scanned
//! again on start (inbox records give the input positions, `(cause, effect)` tags the
//! actions already taken, outbox records what the outputs should hold), so a crash between
//! any two steps loses nothing. The format is in `docs/format.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::limits::MAX_PROGRESS_BYTES;
use akledger::canonical::{parse_value, to_canonical, Json, Object};
use akledger::did::DidCoreId;
use akledger::error::Error;
use akledger::layout::Layout;
use akledger::store::atomic;

use crate::envelope::{FileIdentity, InputCursor};

/// The marker's `version`: 2 since connections are named (1: one connection, read as the
/// runtime's first).
const VERSION: i64 = 2;

/// One connection's progress.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct ConnectionProgress {
    /// Where its input was taken in to (every envelope before it is an inbox event).
    pub input: InputCursor,
    /// Its [`output_position`](crate::Connection::output_position) at the checkpoint.
    pub output_position: u64,
    /// Per lane, the admission position of the first outbox event not written yet (lanes
    /// with everything written are absent).
    pub unwritten: BTreeMap<String, u64>,
}

/// The marker's content.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Progress {
    /// Ledger events before this admission position are handled and their output written.
    pub ledger_position: u64,
    /// The ledger's length at the checkpoint: every event before it was handled, and its
    /// outbox events before it are written unless a lane's `unwritten` says otherwise.
    pub ledger_length: u64,
    /// Per connection name (`""` in a version 1 marker: the runtime's first connection).
    pub connections: BTreeMap<String, ConnectionProgress>,
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

/// `input_offset` and `input_file` of `obj`.
fn with_input(obj: Object, input: InputCursor) -> Object {
    let obj = obj.with("input_offset", int(input.offset));
    match input.file {
        Some(f) => obj.with("input_file", file_json(f)),
        None => obj,
    }
}

/// Reads `input_offset` and `input_file`.
fn input_of(obj: &Object) -> Result<InputCursor, String> {
    let file = match obj.get("input_file") {
        None => None,
        Some(f) => Some(file_of(f).ok_or("input_file is not {device, inode, guard}")?),
    };
    Ok(InputCursor {
        offset: number(obj, "input_offset")?,
        file,
    })
}

fn number(obj: &Object, k: &str) -> Result<u64, String> {
    match obj.get(k) {
        Some(&Json::Int(n)) => u64::try_from(n).map_err(|_| format!("{k} is negative")),
        _ => Err(format!("{k} is missing or not an integer")),
    }
}

impl Progress {
    /// The progress of connection `name`; the one of a version 1 marker when `first` (the
    /// runtime's first connection).
    pub fn connection(&self, name: &str, first: bool) -> Option<&ConnectionProgress> {
        self.connections
            .get(name)
            .or_else(|| first.then(|| self.connections.get("")).flatten())
    }

    /// The marker's canonical JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        let gone = self.gone.iter().map(|d| d.as_str().into()).collect();
        let mut connections = Object::new();
        for (name, c) in &self.connections {
            let mut unwritten = Object::new();
            for (lane, position) in &c.unwritten {
                unwritten.insert(lane.as_str(), int(*position));
            }
            let obj = with_input(Object::new(), c.input)
                .with("output_position", int(c.output_position))
                .with("unwritten", unwritten.into());
            connections.insert(name.as_str(), obj.into());
        }
        let doc = Object::new()
            .with("version", Json::Int(VERSION))
            .with("ledger_position", int(self.ledger_position))
            .with("ledger_length", int(self.ledger_length))
            .with("connections", connections.into())
            .with("gone", Json::Array(gone));
        let mut bytes = to_canonical(&doc.into());
        bytes.push(b'\n');
        bytes
    }

    /// Reads a marker's bytes (version 2, or 1).
    pub fn from_bytes(bytes: &[u8]) -> Result<Progress, String> {
        let doc = parse_value(bytes.strip_suffix(b"\n").unwrap_or(bytes))
            .map_err(|e| format!("not JSON: {}", e.message()))?;
        let doc = doc.as_object().ok_or("not a JSON object")?;
        let mut gone = BTreeSet::new();
        for d in doc
            .get("gone")
            .and_then(Json::as_array)
            .ok_or("gone is missing")?
        {
            let text = d.as_str().ok_or("gone holds a non-string")?;
            gone.insert(DidCoreId::parse(text).map_err(|e| e.message().to_string())?);
        }
        let ledger_position = number(doc, "ledger_position")?;
        let version = number(doc, "version")?;
        if version == 1 {
            let only = ConnectionProgress {
                input: input_of(doc)?,
                output_position: number(doc, "output_length")?,
                unwritten: BTreeMap::new(),
            };
            return Ok(Progress {
                ledger_position,
                ledger_length: ledger_position,
                connections: BTreeMap::from([(String::new(), only)]),
                gone,
            });
        }
        if version != VERSION as u64 {
            return Err("unknown version".into());
        }
        let mut connections = BTreeMap::new();
        for (name, c) in doc
            .get("connections")
            .and_then(Json::as_object)
            .ok_or("connections is missing")?
            .iter()
        {
            let c = c.as_object().ok_or("a connection is not an object")?;
            let mut unwritten = BTreeMap::new();
            for (lane, position) in c
                .get("unwritten")
                .and_then(Json::as_object)
                .ok_or("unwritten is missing")?
                .iter()
            {
                let &Json::Int(p) = position else {
                    return Err("an unwritten position is not an integer".into());
                };
                let p = u64::try_from(p).map_err(|_| "an unwritten position is negative")?;
                unwritten.insert(lane.to_string(), p);
            }
            connections.insert(
                name.to_string(),
                ConnectionProgress {
                    input: input_of(c)?,
                    output_position: number(c, "output_position")?,
                    unwritten,
                },
            );
        }
        Ok(Progress {
            ledger_position,
            ledger_length: number(doc, "ledger_length")?,
            connections,
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
        let stub = ConnectionProgress {
            input: InputCursor {
                offset: 120,
                file: Some(FileIdentity {
                    device: 2049,
                    inode: 77,
                    guard: 0xfeed_beef_0000_0001,
                }),
            },
            output_position: 77,
            unwritten: BTreeMap::from([(String::new(), 8)]),
        };
        let tcp = ConnectionProgress {
            input: InputCursor {
                offset: 5,
                file: None,
            },
            output_position: 0,
            unwritten: BTreeMap::from([("agent_a".into(), 7), ("agent_b".into(), 9)]),
        };
        let p = Progress {
            ledger_position: 7,
            ledger_length: 12,
            connections: BTreeMap::from([("stub".into(), stub), ("tcp".into(), tcp)]),
            gone: [DidCoreId::parse("ak:did_core:key:z6Mkabc").unwrap()].into(),
        };
        p.save(dir.path(), true).unwrap();
        assert_eq!(Progress::load(dir.path()).unwrap(), Some(p.clone()));
        std::fs::write(progress_path(dir.path()), b"{\"version\":2}").unwrap();
        assert!(matches!(
            Progress::load(dir.path()),
            Err(Error::Corrupt { .. })
        ));
    }

    #[test]
    fn a_version_1_marker_is_the_first_connections() {
        let v1 = br#"{"gone":[],"input_file":{"device":1,"guard":"00000000000000ff","inode":2},"input_offset":40,"ledger_position":9,"output_length":3,"version":1}"#;
        let p = Progress::from_bytes(v1).unwrap();
        assert_eq!((p.ledger_position, p.ledger_length), (9, 9));
        let first = p.connection("stub", true).unwrap();
        assert_eq!(first.input.offset, 40);
        assert_eq!(first.output_position, 3);
        assert!(first.unwritten.is_empty());
        assert_eq!(p.connection("tcp", false), None);
    }
}

//! The published-so-far marker, `DIR/replicate/<stream>.json`: which durable consumer this
//! ledger reads the stream with, and how many of its admitted events (a prefix of admission
//! order) the stream already holds. Written atomically ([`akledger::store::atomic`]) after the
//! server acknowledged a published batch, so a restart re-publishes at most that batch.

use akledger::layout::Layout;
use std::io::Read;
use std::path::{Path, PathBuf};

use rand_core::{OsRng, RngCore};
use serde::{Deserialize, Serialize};

use super::subject::consumer_name;
use super::ReplicateError;

/// Largest marker file read: a marker is one short JSON object.
const MAX_MARKER_BYTES: u64 = 4096;

/// The format version written.
const VERSION: u64 = 1;

/// The marker's contents (see `docs/format.md`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Marker {
    /// Format version, 1.
    pub version: u64,
    /// The stream the marker is about.
    pub stream: String,
    /// This ledger's durable consumer on that stream.
    pub consumer: String,
    /// Admitted events (from admission position 0) the stream holds.
    pub published: u64,
    /// The ledger directory the consumer belongs to (absent in markers written before it
    /// was recorded: the directory they are found in is adopted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<Instance>,
    /// When the stream `published` counts into was created (the server's nanoseconds since
    /// the epoch); absent until the first connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_created: Option<String>,
}

/// A ledger directory as the file system knows it: a copy of the directory (`cp -r`, a
/// restored backup) is another one, and must not read the stream with the original's
/// consumer (the server would share the messages out between the two).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Instance {
    /// The directory's device number.
    pub device: u64,
    /// The directory's inode number.
    pub inode: u64,
}

impl Instance {
    /// The directory `dir` is.
    pub fn of(dir: &Path) -> Result<Instance, ReplicateError> {
        use std::os::unix::fs::MetadataExt as _;
        let meta =
            std::fs::metadata(dir).map_err(|e| ReplicateError::marker(dir, e.to_string()))?;
        Ok(Instance {
            device: meta.dev(),
            inode: meta.ino(),
        })
    }
}

/// A fresh random consumer name.
fn new_consumer() -> String {
    let mut identity = [0u8; 16];
    OsRng.fill_bytes(&mut identity);
    consumer_name(&identity)
}

/// Where the marker of `stream` lives in the ledger directory `dir`.
pub fn path(dir: &Path, stream: &str) -> PathBuf {
    Layout::new(dir).replicate_marker(stream)
}

/// Reads the marker at `path` for the ledger directory `instance`, or makes and saves a new
/// one (nothing published, a fresh random consumer identity) when there is none: the
/// consumer's name must outlive this run before the server knows it. A damaged marker is
/// an error, never replaced silently: replacing it would re-publish everything and change
/// the consumer. A marker written in another directory (this one is a copy) keeps its
/// count of published events, which the copy holds too, and gets a consumer of its own;
/// the second value says so.
pub fn load_or_new(
    path: &Path,
    stream: &str,
    instance: Instance,
) -> Result<(Marker, bool), ReplicateError> {
    let (marker, renewed) = match load(path, stream)? {
        Some(marker) if marker.instance == Some(instance) => return Ok((marker, false)),
        Some(marker) => {
            let copied = marker.instance.is_some();
            let consumer = if copied {
                new_consumer()
            } else {
                marker.consumer.clone()
            };
            let marker = Marker {
                consumer,
                instance: Some(instance),
                ..marker
            };
            (marker, copied)
        }
        None => (
            Marker {
                version: VERSION,
                stream: stream.to_owned(),
                consumer: new_consumer(),
                published: 0,
                instance: Some(instance),
                stream_created: None,
            },
            false,
        ),
    };
    save(path, &marker)?;
    Ok((marker, renewed))
}

/// Reads the marker at `path`; `None` when there is none.
fn load(path: &Path, stream: &str) -> Result<Option<Marker>, ReplicateError> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ReplicateError::marker(path, e.to_string())),
    };
    let mut bytes = Vec::new();
    file.take(MAX_MARKER_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ReplicateError::marker(path, e.to_string()))?;
    if bytes.len() as u64 > MAX_MARKER_BYTES {
        return Err(ReplicateError::marker(
            path,
            format!("over {MAX_MARKER_BYTES} bytes"),
        ));
    }
    let marker: Marker = serde_json::from_slice(&bytes)
        .map_err(|e| ReplicateError::marker(path, format!("not a marker: {e}")))?;
    if marker.version != VERSION || marker.stream != stream {
        return Err(ReplicateError::marker(
            path,
            format!(
                "version {} of stream {:?}, expected version {VERSION} of {stream:?}",
                marker.version, marker.stream
            ),
        ));
    }
    Ok(Some(marker))
}

/// Writes `marker` to `path` atomically and durably.
pub fn save(path: &Path, marker: &Marker) -> Result<(), ReplicateError> {
    let mut bytes =
        serde_json::to_vec(marker).map_err(|e| ReplicateError::marker(path, e.to_string()))?;
    bytes.push(b'\n');
    akledger::store::atomic::replace(path, &bytes, None)
        .map_err(|e| ReplicateError::marker(path, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_survives_a_round_trip_and_a_damaged_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let at = path(dir.path(), "S");
        let here = Instance::of(dir.path()).unwrap();
        let (fresh, _) = load_or_new(&at, "S", here).unwrap();
        assert_eq!(fresh.published, 0);
        // Saved at once: the consumer keeps its name.
        assert_eq!(load_or_new(&at, "S", here).unwrap(), (fresh.clone(), false));
        let (other, _) = load_or_new(&path(dir.path(), "T"), "T", here).unwrap();
        assert_ne!(fresh.consumer, other.consumer);
        let marker = Marker {
            published: 42,
            ..fresh
        };
        save(&at, &marker).unwrap();
        assert_eq!(
            load_or_new(&at, "S", here).unwrap(),
            (marker.clone(), false)
        );
        assert!(load_or_new(&at, "T", here).is_err());
        // Found in another directory: the count stays, the consumer is new.
        let elsewhere = Instance {
            inode: here.inode + 1,
            ..here
        };
        let (copy, renewed) = load_or_new(&at, "S", elsewhere).unwrap();
        assert!(renewed);
        assert_eq!((copy.published, copy.instance), (42, Some(elsewhere)));
        assert_ne!(copy.consumer, marker.consumer);
        std::fs::write(&at, b"{\"version\":1,").unwrap();
        assert!(load_or_new(&at, "S", here).is_err());
        std::fs::write(&at, vec![b' '; MAX_MARKER_BYTES as usize + 1]).unwrap();
        assert!(load_or_new(&at, "S", here).is_err());
    }
}

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
}

/// Where the marker of `stream` lives in the ledger directory `dir`.
pub fn path(dir: &Path, stream: &str) -> PathBuf {
    Layout::new(dir).replicate_marker(stream)
}

/// Reads the marker at `path`, or makes and saves a new one (nothing published, a fresh
/// random consumer identity) when there is none: the consumer's name must outlive this run
/// before the server knows it. A damaged marker is an error, never replaced silently:
/// replacing it would re-publish everything and change the consumer.
pub fn load_or_new(path: &Path, stream: &str) -> Result<Marker, ReplicateError> {
    match load(path, stream)? {
        Some(marker) => Ok(marker),
        None => {
            let mut identity = [0u8; 16];
            OsRng.fill_bytes(&mut identity);
            let marker = Marker {
                version: VERSION,
                stream: stream.to_owned(),
                consumer: consumer_name(&identity),
                published: 0,
            };
            save(path, &marker)?;
            Ok(marker)
        }
    }
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
        let fresh = load_or_new(&at, "S").unwrap();
        assert_eq!(fresh.published, 0);
        // Saved at once: the consumer keeps its name.
        assert_eq!(load_or_new(&at, "S").unwrap(), fresh);
        let other = load_or_new(&path(dir.path(), "T"), "T").unwrap();
        assert_ne!(fresh.consumer, other.consumer);
        let marker = Marker {
            published: 42,
            ..fresh
        };
        save(&at, &marker).unwrap();
        assert_eq!(load_or_new(&at, "S").unwrap(), marker);
        assert!(load_or_new(&at, "T").is_err());
        std::fs::write(&at, b"{\"version\":1,").unwrap();
        assert!(load_or_new(&at, "S").is_err());
        std::fs::write(&at, vec![b' '; MAX_MARKER_BYTES as usize + 1]).unwrap();
        assert!(load_or_new(&at, "S").is_err());
    }
}

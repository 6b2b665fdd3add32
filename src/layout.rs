//! The one place that names every entry of a ledger directory. Byte layouts of the files
//! are in `docs/format.md`; which module owns each entry is said beside its name.
//!
//! ```text
//! DIR/
//!   lock                  the root lock (store::root): a writer's exclusive flock
//!   acked                 how far the log was acknowledged (store::root)
//!   log/                  the segment log, the truth (store::log): 00000000.log, …
//!   index/                the sled index, derived (ledger::index)
//!   snapshot              the state snapshot, derived (ledger::snapshot)
//!   graph                 the graph file, derived (ledger::graph_file)
//!   tree                  the ledger tree's stored hashes, derived (ledger::tree)
//!   checkpoint            the latest signed checkpoint the ledger recorded (ledger::stored_checkpoint)
//!   keyring.json          the keyring the CLI reads and `keys add` writes (optional)
//!   keyring.json.lock     the keyring file's writer lock (ledger::keyring_file)
//!   replicate/<s>.json    a NATS stream's replication marker (akledger-replicate)
//!   runtime-progress.json the sidecar runtime's progress marker (akledger-runtime)
//!   sidecar-runtime.json  the runtime configuration `akledger sidecar run` bootstraps
//!   controller.key        the controller key it bootstraps, mode 0600
//! ```
//!
//! Atomic rewrites (`store::atomic`) go through a temporary `.<name>.<random>` beside the
//! file they replace.

use std::path::{Path, PathBuf};

/// The segment log's subdirectory.
pub const LOG: &str = "log";
/// The sled index's subdirectory.
pub const INDEX: &str = "index";
/// The state snapshot file.
pub const SNAPSHOT: &str = "snapshot";
/// The graph file.
pub const GRAPH: &str = "graph";
/// The ledger tree's stored-hash file.
pub const TREE: &str = "tree";
/// The ledger's latest recorded checkpoint note.
pub const CHECKPOINT: &str = "checkpoint";
/// The root lock file.
pub const LOCK: &str = "lock";
/// The acknowledgement marker file.
pub const ACKED: &str = "acked";
/// The keyring file commands read by default and `keys add` writes.
pub const KEYRING: &str = "keyring.json";
/// The subdirectory of replication markers, one file per stream.
pub const REPLICATE: &str = "replicate";
/// The sidecar runtime's progress marker.
pub const RUNTIME_PROGRESS: &str = "runtime-progress.json";
/// The sidecar runtime's configuration file that `akledger sidecar run` bootstraps.
pub const RUNTIME_CONFIG: &str = "sidecar-runtime.json";
/// The controller's key file that `akledger sidecar run` bootstraps (mode 0600).
pub const CONTROLLER_KEY: &str = "controller.key";
/// The author's disclosures of redacted values (PROFILE §14.3; mode 0600): never exported,
/// synced, replicated, snapshotted or tiled.
pub const DISCLOSURES: &str = "disclosures.jsonl";

/// The paths of one ledger directory's entries.
#[derive(Clone, Debug)]
pub struct Layout {
    root: PathBuf,
}

impl Layout {
    /// The layout of the ledger directory `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Layout { root: root.into() }
    }

    /// The ledger directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `DIR/log`.
    pub fn log(&self) -> PathBuf {
        self.root.join(LOG)
    }

    /// Whether `DIR` holds a ledger: its segment log, the truth, is there.
    pub fn is_ledger(&self) -> bool {
        self.log().is_dir()
    }

    /// `DIR/index`.
    pub fn index(&self) -> PathBuf {
        self.root.join(INDEX)
    }

    /// `DIR/snapshot`.
    pub fn snapshot(&self) -> PathBuf {
        self.root.join(SNAPSHOT)
    }

    /// `DIR/graph`.
    pub fn graph(&self) -> PathBuf {
        self.root.join(GRAPH)
    }

    /// `DIR/tree`.
    pub fn tree(&self) -> PathBuf {
        self.root.join(TREE)
    }

    /// `DIR/checkpoint`.
    pub fn checkpoint(&self) -> PathBuf {
        self.root.join(CHECKPOINT)
    }

    /// `DIR/lock`.
    pub fn lock(&self) -> PathBuf {
        self.root.join(LOCK)
    }

    /// `DIR/acked`.
    pub fn acked(&self) -> PathBuf {
        self.root.join(ACKED)
    }

    /// `DIR/keyring.json`.
    pub fn keyring(&self) -> PathBuf {
        self.root.join(KEYRING)
    }

    /// `DIR/replicate/<stream>.json`.
    pub fn replicate_marker(&self, stream: &str) -> PathBuf {
        self.root.join(REPLICATE).join(format!("{stream}.json"))
    }

    /// `DIR/runtime-progress.json`.
    pub fn runtime_progress(&self) -> PathBuf {
        self.root.join(RUNTIME_PROGRESS)
    }

    /// `DIR/disclosures.jsonl`.
    pub fn disclosures(&self) -> PathBuf {
        self.root.join(DISCLOSURES)
    }
}

//! What the tests share: appending to a stub file as an agent's writer does, and reading
//! back the envelopes a stub connection wrote.

use std::io::Write;
use std::path::Path;

use akledger_runtime::stub_format::{decode_record, split_records};
use akledger_runtime::Envelope;

/// Appends `bytes` to the file at `path` (created when missing).
pub fn append(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
}

/// The envelopes in the stub file at `path` (none when it is missing).
pub fn written(path: &Path) -> Vec<Envelope> {
    let data = std::fs::read(path).unwrap_or_default();
    split_records(&data)
        .records
        .into_iter()
        .map(|r| decode_record(&data[r]).unwrap())
        .collect()
}

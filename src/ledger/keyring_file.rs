//! The keyring file on disk (PROFILE §11): read, and rewritten atomically under a lock.
//!
//! The CLI's `DIR/keyring.json` and a ledger opened with [`super::Config::keyring_file`] use
//! the same file and the same rules: every rewrite holds `<file>.lock` exclusively while
//! it reads, changes and writes the keyring (so concurrent writers never lose each other's
//! keys), and writes a temporary file of mode 0600 in the same directory, syncs it, renames
//! it over the old file and syncs the directory (so a crash leaves the old or the new
//! keyring, never a torn one).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::{Code, Error, Rejection};
use crate::keyring::Keyring;
use crate::limits::MAX_KEYRING_BYTES;

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_owned(),
        source,
    }
}

/// Reads the keyring file at `path`. A file over [`MAX_KEYRING_BYTES`] is refused without
/// being read whole; a malformed one is rejected with its PROFILE code; one that holds
/// sidecar keys (secrets) while other users may read or write it is refused, as OpenSSH
/// refuses such a private key ([`Error::Misuse`], saying what to run).
pub fn load(path: &Path) -> Result<Keyring, Error> {
    let file = File::open(path).map_err(io(path))?;
    let mode = file.metadata().map_err(io(path))?.permissions();
    let mut bytes = Vec::new();
    file.take(MAX_KEYRING_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io(path))?;
    let keyring = Keyring::from_json_bytes(&bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = mode.mode();
        if mode & 0o077 != 0 && keyring.holds_secrets() {
            return Err(Error::Misuse(format!(
                "{}: the keyring holds secret sidecar keys and other users can read it (mode {:04o}); run `chmod 600 {}` first",
                path.display(),
                mode & 0o7777,
                path.display()
            )));
        }
    }
    #[cfg(not(unix))]
    let _ = mode;
    Ok(keyring)
}

/// [`load`] when the file exists, else an empty keyring.
pub fn load_or_new(path: &Path) -> Result<Keyring, Error> {
    if path.exists() {
        load(path)
    } else {
        Ok(Keyring::new())
    }
}

/// Holds `<path>.lock` exclusively (waiting for it) until the returned file is dropped.
pub fn lock(path: &Path) -> Result<File, Error> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    let lock_path = path.with_file_name(name);
    if let Some(dir) = lock_path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io(&lock_path))?;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(io(&lock_path))?;
    fs2::FileExt::lock_exclusive(&file).map_err(io(&lock_path))?;
    Ok(file)
}

/// Writes `keyring` to `path` atomically (mode 0600). The caller holds [`lock`] when it
/// read the file first. A keyring over [`MAX_KEYRING_BYTES`] is refused and nothing is
/// written.
pub fn save(path: &Path, keyring: &Keyring) -> Result<(), Error> {
    let mut bytes = keyring.to_json_bytes();
    bytes.push(b'\n');
    if bytes.len() > MAX_KEYRING_BYTES {
        return Err(Error::Rejected(Rejection::new(
            Code::PayloadTooLarge,
            format!(
                "the keyring would be {} bytes, over the {MAX_KEYRING_BYTES}-byte bound every reader enforces; not written",
                bytes.len()
            ),
        )));
    }
    write_private(path, &bytes)
}

/// Reads, changes and rewrites the keyring file under its lock; a change that fails
/// writes nothing.
pub fn update(
    path: &Path,
    change: impl FnOnce(&mut Keyring) -> Result<(), Rejection>,
) -> Result<(), Error> {
    let _lock = lock(path)?;
    let mut keyring = load_or_new(path)?;
    change(&mut keyring)?;
    save(path, &keyring)
}

/// Writes a secret file atomically with mode 0600 ([`crate::store::atomic::replace`]).
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    crate::store::atomic::replace(path, bytes, Some(0o600)).map_err(io(path))
}

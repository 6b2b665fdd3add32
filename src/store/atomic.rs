//! Whole small files replaced atomically and durably: a temporary file in the same
//! directory, written and synced, renamed over the old file, then the directory synced. A
//! crash leaves the old file or the new one, never a torn one. Used for the keyring file and
//! the replication marker.

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Replaces `path` with `bytes` (creating its directory when missing). `mode` sets the unix
/// permissions of the new file (for example `0o600` for a secret); `None` keeps the default.
pub fn replace(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // The rename is durable only once the directory is.
    File::open(dir).and_then(|d| d.sync_all())
}

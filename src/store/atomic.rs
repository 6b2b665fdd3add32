//! Whole small files replaced atomically and durably: a temporary file in the same
//! directory, written and synced, renamed over the old file, then the directory synced. A
//! crash leaves the old file or the new one, never a torn one. A path that is a symbolic
//! link is written through: the file it leads to is replaced and the link stays (as any
//! program writing to the path would). Used for the keyring file and
//! the replication marker. [`replace_unsynced`] skips the syncs: still atomic, and it
//! survives the process being killed, but a machine crash may leave the old file.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Replaces `path` with `bytes` (creating its directory when missing). `mode` sets the unix
/// permissions of the new file (for example `0o600` for a secret); `None` keeps the default.
pub fn replace(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    replace_with(path, bytes, mode, true)
}

/// [`replace`] without its syncs: for a checkpoint written often, whose loss on a machine
/// crash costs only work done again.
pub fn replace_unsynced(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    replace_with(path, bytes, mode, false)
}

/// Most links followed before giving up (Linux's `SYMLOOP_MAX`).
const MAX_LINKS: usize = 40;

/// The file a write to `path` reaches: `path`, or the end of the chain of symbolic links it
/// starts (which may not exist yet).
fn through_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(std::io::Error::other(format!(
        "{}: more than {MAX_LINKS} symbolic links",
        path.display()
    )))
}

fn replace_with(path: &Path, bytes: &[u8], mode: Option<u32>, sync: bool) -> std::io::Result<()> {
    let path = &through_links(path)?;
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
    if sync {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    if !sync {
        return Ok(());
    }
    // The rename is durable only once the directory is.
    File::open(dir).and_then(|d| d.sync_all())
}

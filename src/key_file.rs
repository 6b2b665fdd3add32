//! Key files: an Ed25519 signing key as JSON `{"ed25519_secret_key": "<unpadded base64url
//! of 32 bytes>"}`, mode 0600. What the CLI's `keygen` writes and everything that signs
//! reads (the CLI's `--key`, the sidecar runtime's configuration).

use std::path::Path;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ed25519_dalek::SigningKey;

use crate::canonical::{parse_value, Json};
use crate::error::Error;

/// The one member of a key file.
pub const SECRET_MEMBER: &str = "ed25519_secret_key";

/// Largest key file read: the one member is 80 bytes; anything far larger is not a key.
pub const MAX_KEY_FILE_BYTES: u64 = 4096;

/// Refuses a secret file other users can read or write (as ssh does): [`Error::Misuse`]
/// saying how to mend it.
pub fn check_permissions(path: &Path) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(path)
        .map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(Error::Misuse(format!(
            "{}: the key file is readable by other users (mode {:04o}); run `chmod 600 {}` first",
            path.display(),
            mode & 0o7777,
            path.display()
        )));
    }
    Ok(())
}

/// Reads a key file, refusing one other users can read or write. A file that is not a key
/// file is [`Error::Misuse`] naming the file and what is wrong.
pub fn read(path: &Path) -> Result<SigningKey, Error> {
    use std::io::Read as _;
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    check_permissions(path)?;
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_KEY_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    let bad = |why: &str| {
        Error::Misuse(format!(
            "{}: not a key file ({why}); expected {{\"{SECRET_MEMBER}\": \"<base64url of 32 bytes>\"}}",
            path.display()
        ))
    };
    if bytes.len() as u64 > MAX_KEY_FILE_BYTES {
        return Err(bad("larger than a key file"));
    }
    let doc = parse_value(&bytes).map_err(|_| bad("not JSON"))?;
    let text = doc
        .as_object()
        .and_then(|o| o.get(SECRET_MEMBER))
        .and_then(Json::as_str)
        .ok_or_else(|| bad("member missing"))?;
    let raw = URL_SAFE_NO_PAD
        .decode(text)
        .ok()
        .and_then(|k| <[u8; 32]>::try_from(k).ok())
        .ok_or_else(|| bad("the key is not 32 bytes of base64url"))?;
    Ok(SigningKey::from_bytes(&raw))
}

/// A key file's bytes for `key`.
pub fn to_bytes(key: &SigningKey) -> Vec<u8> {
    let mut bytes = format!(
        "{{\"{SECRET_MEMBER}\": \"{}\"}}",
        URL_SAFE_NO_PAD.encode(key.to_bytes())
    )
    .into_bytes();
    bytes.push(b'\n');
    bytes
}

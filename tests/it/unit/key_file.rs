use akledger::ed25519_dalek::SigningKey;
use akledger::key_file::*;
#[allow(unused_imports)]
use akledger::*;
use std::os::unix::fs::PermissionsExt as _;

#[test]
fn key_files_read_back_and_bad_ones_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.json");
    let key = SigningKey::from_bytes(&[5; 32]);
    std::fs::write(&path, to_bytes(&key)).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(read(&path).unwrap().to_bytes(), key.to_bytes());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(read(&path).unwrap_err().to_string().contains("chmod 600"));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    for (bytes, why) in [
        (&b"nope"[..], "not JSON"),
        (b"{}", "member missing"),
        (b"{\"ed25519_secret_key\": \"AAAA\"}", "not 32 bytes"),
    ] {
        std::fs::write(&path, bytes).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains(why) && e.contains("k.json"), "{e}");
    }
    assert!(matches!(
        read(&dir.path().join("missing")),
        Err(Error::Io { .. })
    ));
}

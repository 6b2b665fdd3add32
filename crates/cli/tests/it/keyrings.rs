//! Keyring and key files through the real binary: concurrent `keys add`, the size bound,
//! the PROFILE §11 refusal of key principals, key file permissions, keys from stdin.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use akledger::id::SidecarId;
use akledger::workload::realm_dag;
use akledger::Keyring;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_akledger"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn sidecar(n: u64) -> SidecarId {
    realm_dag(n, 1, 1, 8).unwrap()[0].id().retype()
}

fn ring(dir: &Path) -> Keyring {
    Keyring::from_json_bytes(&std::fs::read(dir.join("keyring.json")).unwrap()).unwrap()
}

#[test]
fn twenty_concurrent_key_adds_keep_all_twenty_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = sidecar(1);
    let children: Vec<_> = (0..20u64)
        .map(|epoch| {
            bin()
                .args(["keys", "add", "--dir"])
                .arg(tmp.path())
                .args(["--sidecar", &sc.to_string(), "--epoch", &epoch.to_string()])
                .arg("--generate")
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let ring = ring(tmp.path());
    for epoch in 0..20 {
        assert!(ring.sidecar_key(&sc, epoch).is_some(), "epoch {epoch} lost");
    }
}

#[test]
fn keys_add_refuses_to_write_a_keyring_readers_would_refuse() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = sidecar(2).to_string();
    let limit = akledger::limits::MAX_KEYRING_BYTES;
    // A keyring within 50 bytes of the bound, built as (canonical) text: entries of 56
    // bytes (7-digit epochs), then one shorter entry closing most of the gap.
    let key = "A".repeat(43);
    let mut body =
        format!("{{\"principals\":{{}},\"sidecar_keys\":{{\"{sc}\":{{\"1000000\":\"{key}\"");
    let mut epoch = 1_000_001u64;
    while body.len() + 56 + 4 <= limit {
        body.push_str(&format!(",\"{epoch}\":\"{key}\""));
        epoch += 1;
    }
    let gap = limit - body.len() - 4;
    if gap >= 50 {
        let digits = (gap - 49).min(6);
        body.push_str(&format!(",\"{}\":\"{key}\"", "9".repeat(digits)));
    }
    body.push_str("}}}\n");
    assert!(
        body.len() <= limit && body.len() + 50 > limit,
        "{}",
        body.len()
    );
    let path = tmp.path().join("keyring.json");
    std::fs::write(&path, &body).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(Keyring::from_json_bytes(body.as_bytes()).is_ok());
    let out = bin()
        .args(["keys", "add", "--dir"])
        .arg(tmp.path())
        .args(["--sidecar", &sc, "--epoch", "1", "--generate"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("not written"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), body);
    assert!(std::fs::metadata(&path).unwrap().len() <= limit as u64);
    assert!(Keyring::from_json_bytes(&std::fs::read(&path).unwrap()).is_ok());
}

#[test]
fn a_key_principal_in_the_keyring_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let key_principal = akledger::DidCoreId::for_key(
        &akledger::ed25519_dalek::SigningKey::from_bytes(&[7; 32]).verifying_key(),
    );
    let other = akledger::did::did_key(
        &akledger::ed25519_dalek::SigningKey::from_bytes(&[8; 32]).verifying_key(),
    );
    // Parsing refuses it.
    let file = format!("{{\"principals\":{{\"{key_principal}\":[\"{other}\"]}}}}");
    let err = Keyring::from_json_bytes(file.as_bytes()).unwrap_err();
    assert!(err.message().contains("self-certifying"), "{err}");
    // `keys add` refuses to write it.
    let out = bin()
        .args(["keys", "add", "--dir"])
        .arg(tmp.path())
        .args(["--principal", key_principal.as_str(), "--did-key", &other])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("self-certifying"),
        "{}",
        text(&out.stderr)
    );
    assert!(!tmp.path().join("keyring.json").exists());
}

#[test]
fn key_files_readable_by_others_are_refused_and_keys_come_from_stdin() {
    let tmp = tempfile::tempdir().unwrap();
    let key = tmp.path().join("me.json");
    let made = bin().args(["keygen", "--out"]).arg(&key).output().unwrap();
    assert!(made.status.success());
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let init = bin()
        .args(["init", "--dir"])
        .arg(tmp.path().join("data"))
        .output();
    assert!(init.unwrap().status.success());
    let create = || {
        bin()
            .args(["realm", "create", "--dir"])
            .arg(tmp.path().join("data"))
            .arg("--key")
            .arg(&key)
            .output()
            .unwrap()
    };
    let out: Output = create();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("readable by other users"),
        "{}",
        text(&out.stderr)
    );
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(create().status.code(), Some(0));

    // A sidecar key from stdin, never on the command line.
    let sc = sidecar(3);
    let secret = "B".repeat(42) + "A";
    let mut child = bin()
        .args(["keys", "add", "--dir"])
        .arg(tmp.path().join("data"))
        .args([
            "--sidecar",
            &sc.to_string(),
            "--epoch",
            "4",
            "--key-file",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{secret}").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains(&secret));
    assert!(ring(&tmp.path().join("data")).sidecar_key(&sc, 4).is_some());
}

#[test]
fn a_symlinked_keyring_is_written_through_and_a_readable_one_with_secrets_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let (dir, shared) = (tmp.path().join("ledger"), tmp.path().join("shared"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&shared).unwrap();
    let target = shared.join("team-keyring.json");
    std::os::unix::fs::symlink("../shared/team-keyring.json", dir.join("keyring.json")).unwrap();
    let sc = sidecar(5).to_string();
    let add = |epoch: &str| {
        bin()
            .args(["keys", "add", "--dir"])
            .arg(&dir)
            .args(["--sidecar", &sc, "--epoch", epoch, "--generate"])
            .output()
            .unwrap()
    };
    // Twice: once creating the link's target, once rewriting it.
    for epoch in ["1", "2"] {
        let out = add(epoch);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let link = std::fs::symlink_metadata(dir.join("keyring.json")).unwrap();
        assert!(link.file_type().is_symlink(), "the link was replaced");
    }
    let written = Keyring::from_json_bytes(&std::fs::read(&target).unwrap()).unwrap();
    let sc: SidecarId = sc.parse().unwrap();
    assert!(written.sidecar_key(&sc, 1).is_some() && written.sidecar_key(&sc, 2).is_some());
    assert_eq!(
        std::fs::metadata(&target).unwrap().permissions().mode() & 0o777,
        0o600
    );

    // Readable by others, it is refused, with what to run.
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
    let before = std::fs::read(&target).unwrap();
    let out = add("3");
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out.stderr);
    assert!(
        said.contains("other users can read it (mode 0644)") && said.contains("chmod 600"),
        "{said}"
    );
    assert_eq!(std::fs::read(&target).unwrap(), before, "nothing written");
}

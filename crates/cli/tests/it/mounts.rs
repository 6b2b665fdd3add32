//! Real mounts: a ledger on a full disk and on read-only media. CI runs as root and can
//! mount a small tmpfs; where mounting is impossible the test says why and skips.

use std::path::{Path, PathBuf};
use std::process::Command;

use akledger::workload::realm_dag;
use akledger::{Config, Ledger};

/// A tmpfs of `size` mounted on a fresh directory; unmounted on drop.
struct Tmpfs {
    dir: PathBuf,
    parent: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("mnt");
        std::fs::create_dir(&dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs { dir, parent }),
            Ok(o) => {
                eprintln!(
                    "skipped: cannot mount a tmpfs (needs root): {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot run mount: {e}");
                None
            }
        }
    }

    fn remount(&self, options: &str) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

fn cli(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_akledger"))
        .args(args)
        .arg("--dir")
        .arg(dir)
        .output()
        .unwrap()
}

fn heads_ok(dir: &Path) {
    for args in [&["heads"][..], &["check"], &["export"]] {
        let out = cli(dir, args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_full_disk_loses_nothing_acknowledged_and_heals_once_freed() {
    let Some(fs) = Tmpfs::mount("6m") else {
        return;
    };
    let dir = fs.dir.join("ledger");
    let events = realm_dag(21, 6000, 4, 8).unwrap();
    let bytes: Vec<&[u8]> = events.iter().map(|e| e.bytes()).collect();
    let mut acknowledged = 0usize;
    {
        let ledger = Ledger::open(&dir).unwrap();
        // Most of the disk taken by something else.
        std::fs::write(fs.dir.join("filler"), vec![0u8; 3 << 20]).unwrap();
        for chunk in bytes.chunks(100) {
            match ledger.append_batch(chunk) {
                Ok(_) => acknowledged += chunk.len(),
                Err(e) => {
                    eprintln!("disk full after {acknowledged} events: {e}");
                    break;
                }
            }
        }
    }
    assert!(
        acknowledged > 0 && acknowledged < events.len(),
        "the disk never filled ({acknowledged})"
    );
    // Still full: read commands work, nothing written.
    heads_ok(&dir);
    let reader = Ledger::open_with(Config::new(&dir).read_only(true)).unwrap();
    assert_eq!(reader.len(), acknowledged);
    drop(reader);
    // Space freed: the writer opens (healing whatever sled left), nothing is lost, and
    // appends work again.
    std::fs::remove_file(fs.dir.join("filler")).unwrap();
    let ledger = Ledger::open(&dir).unwrap();
    assert_eq!(ledger.len(), acknowledged, "{:?}", ledger.open_report());
    let more = &bytes[acknowledged..acknowledged + 50];
    ledger.append_batch(more).unwrap();
    assert_eq!(ledger.len(), acknowledged + 50);
    assert!(ledger.check().unwrap().is_clean());
}

#[test]
fn a_ledger_on_read_only_media_can_be_read() {
    let Some(fs) = Tmpfs::mount("64m") else {
        return;
    };
    let dir = fs.dir.join("ledger");
    let events = realm_dag(22, 200, 4, 8).unwrap();
    // Written by a child process, which has closed every file of the ledger once it has
    // exited: a writer opened in this process would leave its files open for a moment in
    // any child that another test forks meanwhile, and remounting read-only is refused
    // while a file is open for writing.
    let log = fs.parent.path().join("events.jsonl");
    let lines: Vec<u8> = events
        .iter()
        .flat_map(|e| e.bytes().iter().copied().chain([b'\n']))
        .collect();
    std::fs::write(&log, lines).unwrap();
    let out = cli(&dir, &["import", log.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fs.remount("ro");
    heads_ok(&dir);
    let reader = Ledger::open_with(Config::new(&dir).read_only(true)).unwrap();
    assert_eq!(reader.len(), events.len());
    assert!(reader.check().unwrap().is_clean());
    assert!(matches!(
        reader.append(events[0].bytes()),
        Err(akledger::Error::ReadOnly { .. })
    ));
    // A writer is refused with the OS's reason, not a panic.
    let err = Ledger::open(&dir).unwrap_err();
    assert_eq!(err.fault(), akledger::Fault::Io, "{err}");
    fs.remount("rw");
}

//! A `nats-server -js` of a test or benchmark's own: a free loopback port, a temporary
//! store, killed on drop; `None` (with the reason printed) when the binary is missing.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a test waits for something that must happen (a port, a follower catching up)
/// before it fails. Generous: a loaded machine is slow, and nothing is timed.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// The `nats-server` binary, if installed.
fn nats_server_binary() -> Option<PathBuf> {
    let candidates = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
        .map(|dir| dir.join("nats-server"));
    candidates.into_iter().find(|p| p.is_file())
}

/// A `nats-server -js` on a loopback port with its store in a temporary directory, killed on
/// drop.
pub struct NatsServer {
    binary: PathBuf,
    pub port: u16,
    store: tempfile::TempDir,
    child: Option<Child>,
}

impl NatsServer {
    /// Starts one, or says why the test is skipped and returns `None`.
    pub fn start(test: &str) -> Option<NatsServer> {
        let Some(binary) = nats_server_binary() else {
            eprintln!(
                "{test}: skipped: nats-server is not installed (apt-get install nats-server)"
            );
            return None;
        };
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let mut server = NatsServer {
            binary,
            port,
            store: tempfile::tempdir().unwrap(),
            child: None,
        };
        server.spawn();
        Some(server)
    }

    fn spawn(&mut self) {
        let child = Command::new(&self.binary)
            .args([
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-sd",
            ])
            .arg(self.store.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + PATIENCE;
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL, then the same server again on the same port and store.
    pub fn kill_and_restart(&mut self) {
        self.kill();
        self.spawn();
    }

    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// The server's process id (none once killed).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}

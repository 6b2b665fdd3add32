//! Two ledgers syncing over TCP with the library alone: one serves (`Ledger::serve`, its
//! timeouts on by default), the other syncs (`Ledger::sync_tcp`), and the server stops
//! cleanly (`stop_serving`), letting its running sessions end. Built and run by `cargo
//! test`, so it cannot rot; run it with `cargo run --example sync_over_tcp`.
// Examples panic on what they set up themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::net::TcpListener;
use std::sync::atomic::AtomicBool;

use akledger::sync::{stop_serving, ServeOptions, SyncOptions};
use akledger::workload::realm_dag;
use akledger::Ledger;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let (here, there) = (
        Ledger::open(dir.path().join("here"))?,
        Ledger::open(dir.path().join("there"))?,
    );
    // Two ledgers with a shared history, each with events of its own.
    let events = realm_dag(1, 60, 3, 16)?;
    for (i, event) in events.iter().enumerate() {
        if i < 40 || i % 2 == 0 {
            here.append(event.bytes())?;
        }
        if i < 40 || i % 2 == 1 {
            there.append(event.bytes())?;
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let stop = AtomicBool::new(false);
    let (moved, served) = std::thread::scope(|scope| {
        let server = scope.spawn(|| there.serve(listener, &ServeOptions::default(), &stop, |_| {}));
        let moved = here.sync_tcp(addr, &SyncOptions::default());
        stop_serving(&stop, addr);
        (moved, server.join())
    });
    let moved = moved?;
    let served = served.map_err(|_| "the server panicked")??;
    println!(
        "sent {} events, received {}; the server ran {} session(s)",
        moved.sent, moved.received, served.sessions
    );
    // Both hold the union now, with the same heads.
    assert_eq!(here.heads(), there.heads());
    assert_eq!(here.len(), there.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    /// `cargo test` runs the example end to end.
    #[test]
    fn the_example_runs() {
        super::main().unwrap();
    }
}

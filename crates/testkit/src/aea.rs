//! The aea 1.2.5 test partner that `crates/cli/tests/aea/setup.sh` leaves: finding it, and
//! copying, running and stopping its agent projects, for the CLI's tests and its
//! `aea_partner` benchmark alike.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// What setup.sh left: the Python that runs aea, its HOME, the agent projects.
#[derive(Debug)]
pub struct Partner {
    /// The virtual environment's Python (its `aea` beside it).
    pub python: PathBuf,
    /// The HOME `aea` keeps its settings in.
    pub home: PathBuf,
    /// The agent project on the stub connection.
    pub project: PathBuf,
    /// The agent project on the tcp client connection.
    pub project_tcp: PathBuf,
}

/// The partner, when setup.sh made it (in `target/aea`, or `$AKLEDGER_AEA_DIR`).
pub fn partner() -> Option<Partner> {
    let root = crate::workspace_root();
    let dir = std::env::var_os("AKLEDGER_AEA_DIR").map_or(root.join("target/aea"), PathBuf::from);
    let ready = std::fs::read_to_string(dir.join("ready")).ok()?;
    let field = |name: &str| {
        ready
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .map(PathBuf::from)
    };
    Some(Partner {
        python: field("python")?,
        home: field("home")?,
        project: field("project")?,
        project_tcp: field("project_tcp")?,
    })
}

/// A copy of the agent project `template` in `dir`, named `name` (its `agent_name`, the
/// address its dialogues use unless the plan says `by_address`) and planned by `plan`
/// (its `partner.json`).
pub fn copy_agent(template: &Path, dir: &Path, name: &str, plan: &Value) -> PathBuf {
    let project = dir.join(name);
    let copied = Command::new("cp")
        .arg("-r")
        .arg(template)
        .arg(&project)
        .status()
        .expect("run cp");
    assert!(copied.success(), "cp -r {}", template.display());
    let config = project.join("aea-config.yaml");
    let text = std::fs::read_to_string(&config).expect("read aea-config.yaml");
    let old = text.lines().next().unwrap_or_default().to_string();
    assert!(old.starts_with("agent_name: "), "{old}");
    std::fs::write(
        &config,
        text.replacen(&old, &format!("agent_name: {name}"), 1),
    )
    .expect("write aea-config.yaml");
    std::fs::write(project.join("partner.json"), plan.to_string()).expect("write partner.json");
    project
}

/// `aea -s run` in `project` (`-s`: no fingerprint check, so a test may edit a package's
/// configuration), its output discarded.
pub fn run_agent(p: &Partner, project: &Path) -> Child {
    let aea = p.python.with_file_name("aea");
    Command::new(aea)
        .args(["-s", "run"])
        .current_dir(project)
        .env("HOME", &p.home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run aea")
}

/// Stops an agent as Ctrl-C does, killing it after 20 s.
pub fn stop_agent(mut agent: Child) {
    let _ = Command::new("kill")
        .args(["-INT", &agent.id().to_string()])
        .status();
    let started = Instant::now();
    while agent.try_wait().expect("wait for aea").is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = agent.kill();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The agent's `report.json` (written atomically by its skill), or `null` before it has one.
pub fn report(project: &Path) -> Value {
    std::fs::read(project.join("report.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}

/// `n` ping contents (`ping 0`, `ping 1`, …) in hex, as a plan lists them.
pub fn pings(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            format!("ping {i}")
                .bytes()
                .map(|b| format!("{b:02x}"))
                .collect()
        })
        .collect()
}

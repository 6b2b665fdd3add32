//! `akledger --help` with its commands grouped by what they are for (clap lists
//! subcommands in one list). Every command belongs to a group; one that does not is listed
//! under "Other", and a CLI test keeps that list empty.

use clap::Command;

/// The groups, in the order `--help` shows them.
const GROUPS: &[(&str, &[&str])] = &[
    ("Start", &["demo", "init", "keygen", "keys"]),
    (
        "Read a ledger",
        &[
            "show",
            "log",
            "heads",
            "heads-of",
            "covers",
            "exchanges",
            "exchange",
            "pending",
            "dag",
            "check",
            "export",
            "actor",
            "disclose",
        ],
    ),
    (
        "Write to a ledger",
        &[
            "append",
            "import",
            "drop-pending",
            "realm",
            "strand",
            "sidecar",
            "observe",
        ],
    ),
    (
        "Audit and verify",
        &[
            "audit",
            "verify",
            "verify-disclosure",
            "checkpoint",
            "prove",
            "verify-proof",
            "tiles",
            "witness",
        ],
    ),
    ("Connect ledgers", &["serve", "sync", "replicate"]),
    ("Tools", &["gen", "completions", "man", "help"]),
];

/// `cmd` with a help template that lists its subcommands in [`GROUPS`].
pub fn grouped(cmd: Command) -> Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .chain(std::iter::once("help".to_string()))
        .collect();
    let width = names.iter().map(String::len).max().unwrap_or(0);
    let line = |name: &str| {
        let about = cmd
            .find_subcommand(name)
            .and_then(Command::get_about)
            .map(|a| a.to_string())
            .unwrap_or_else(|| "Print this message or the help of the given subcommand(s)".into());
        format!("  {name:<width$}  {about}\n")
    };
    let mut text = String::new();
    for (group, members) in GROUPS {
        let present: Vec<&&str> = members
            .iter()
            .filter(|m| names.iter().any(|n| n == **m))
            .collect();
        if present.is_empty() {
            continue;
        }
        text.push_str(&format!("{group}:\n"));
        for name in present {
            text.push_str(&line(name));
        }
        text.push('\n');
    }
    let other: Vec<&String> = names
        .iter()
        .filter(|n| !GROUPS.iter().any(|(_, m)| m.contains(&n.as_str())))
        .collect();
    if !other.is_empty() {
        text.push_str("Other:\n");
        for name in other {
            text.push_str(&line(name));
        }
        text.push('\n');
    }
    cmd.help_template(format!(
        "{{before-help}}{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{text}Options:\n{{options}}{{after-help}}"
    ))
}

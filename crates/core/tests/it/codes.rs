//! The `Code` enum and PROFILE §10 agree: every code is listed there, once, in snake case,
//! and parses back from its spelling.

use akledger_core::Code;

#[test]
fn every_code_is_a_profile_section_10_code() {
    let profile =
        std::fs::read_to_string(akledger_testkit_core::workspace_root().join("docs/PROFILE.md"))
            .expect("docs/PROFILE.md");
    let section = profile
        .split("## 10. Error codes")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("PROFILE §10");
    let mut seen = Vec::new();
    for code in Code::ALL {
        let name = code.as_str();
        assert!(
            section.contains(&format!("`{name}`")),
            "{name} is not in PROFILE §10"
        );
        assert!(
            name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "{name}"
        );
        assert_eq!(Code::parse(name), Some(code));
        assert!(!seen.contains(&name), "{name} twice");
        seen.push(name);
    }
    for name in ["checkpoint_invalid", "checkpoint_mismatch", "proof_invalid"] {
        assert!(seen.contains(&name), "{name}");
    }
}

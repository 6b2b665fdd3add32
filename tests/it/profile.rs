//! The crate ships the normative profile as `docs/PROFILE.md`; it must stay equal to the
//! shared specification at `../shared/spec/PROFILE.md` (relative to the repository root).

use std::path::Path;

#[test]
fn the_shipped_profile_equals_the_shared_specification() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared/spec/PROFILE.md");
    let shipped = std::fs::read(root.join("docs/PROFILE.md")).expect("docs/PROFILE.md ships");
    assert!(
        shipped.starts_with(b"# AK ledger profile"),
        "docs/PROFILE.md is the profile"
    );
    match std::fs::read(&shared) {
        Ok(spec) => assert!(
            spec == shipped,
            "docs/PROFILE.md differs from ../shared/spec/PROFILE.md: copy the shared one over it"
        ),
        Err(e) => eprintln!(
            "skipped the comparison: ../shared/spec/PROFILE.md is not readable from the repository root ({e}); this checkout has no shared specification beside it"
        ),
    }
}

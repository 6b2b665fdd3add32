//! `Keyring::merge` says what the merged-into keyring lacked: what a running server reports
//! when it reloads its keyring file.

use akledger_core::encrypted::SidecarKey;
use akledger_core::keyring::Added;
use akledger_core::{
    ed25519_dalek::SigningKey, DidCoreId, DigestSuite, EventId, Keyring, SidecarId,
};

fn sidecar(n: u8) -> SidecarId {
    EventId::from_digest(DigestSuite::Blake3, &[n; 32]).retype()
}

fn principal(host: &str) -> DidCoreId {
    DidCoreId::parse(&format!("ak:did_core:web:{host}")).expect("web principal")
}

#[test]
fn a_merge_reports_only_the_authorizations_and_sidecar_epochs_that_were_missing() {
    let (a, b) = (
        SigningKey::from_bytes(&[1; 32]).verifying_key(),
        SigningKey::from_bytes(&[2; 32]).verifying_key(),
    );
    let mut held = Keyring::new();
    held.authorize(principal("example.org"), a)
        .expect("authorize");
    held.add_sidecar_key(sidecar(1), 1, SidecarKey::from_bytes([7; 32]));
    let mut file = held.clone();
    file.authorize(principal("example.org"), b)
        .expect("authorize");
    file.authorize(principal("other.example"), a)
        .expect("authorize");
    // A key replaced at an epoch held is not new; a new epoch and a new sidecar are.
    file.add_sidecar_key(sidecar(1), 1, SidecarKey::from_bytes([8; 32]));
    file.add_sidecar_key(sidecar(1), 2, SidecarKey::from_bytes([9; 32]));
    file.add_sidecar_key(sidecar(0), 5, SidecarKey::from_bytes([9; 32]));
    let added = held.merge(file.clone());
    let mut expected = vec![(sidecar(0), 5), (sidecar(1), 2)];
    expected.sort_unstable();
    assert_eq!(
        added,
        Added {
            authorizations: 2,
            sidecar_keys: expected
        }
    );
    assert!(held.authorizes(&principal("other.example"), &a));
    assert!(held.merge(file).is_empty(), "a second merge adds nothing");
}

use akledger_core::did::*;
use akledger_core::*;

#[test]
fn did_key_round_trip() {
    let sk = ed25519_dalek::SigningKey::from_bytes(&[9u8; 32]);
    let vk = sk.verifying_key();
    let principal = DidCoreId::for_key(&vk);
    assert!(principal.as_str().starts_with("ak:did_core:key:z6Mk"));
    assert_eq!(principal.key(), Some(vk));
    assert_eq!(key_of_did_key(&verification_method(&vk)).ok(), Some(vk));
    assert_eq!(key_of_did_key(&did_key(&vk)).ok(), Some(vk));
    assert!(DidCoreId::parse(principal.as_str()).is_ok());
}

#[test]
fn did_core_id_rules() {
    for bad in [
        "ak:did_core:KEY:x",
        "ak:did_core:key:",
        "ak:did_core:key:a/b",
        "did:key:z",
        "ak:did_core:k ey:x",
    ] {
        assert!(DidCoreId::parse(bad).is_err(), "{bad}");
    }
    assert!(DidCoreId::parse("ak:did_core:webvh:z6mkfixture:agent.example").is_ok());
    assert!(DidCoreId::parse(&format!("ak:did_core:x:{}", "a".repeat(600))).is_err());
}

//! The signing threads' Ed25519 signatures of many messages by one key: RFC 8032's own
//! vectors, and byte-for-byte agreement with `ed25519-dalek` signing the same messages one
//! at a time.

use akledger_core::internals::sign_many;
use ed25519_dalek::{Signer, SigningKey};
use proptest::prelude::*;

fn bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn key(seed_hex: &str) -> SigningKey {
    SigningKey::from_bytes(&bytes(seed_hex).try_into().unwrap())
}

/// RFC 8032 §7.1, TEST 1 to 3: secret key, public key, message, signature.
const RFC_8032: [[&str; 4]; 3] = [
    [
        "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        "",
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    ],
    [
        "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        "72",
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
    ],
    [
        "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
        "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        "af82",
        "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
    ],
];

#[test]
fn many_signatures_are_rfc_8032_s_own() {
    for [secret, public, message, signature] in RFC_8032 {
        let key = key(secret);
        assert_eq!(key.verifying_key().to_bytes().to_vec(), bytes(public));
        let message = bytes(message);
        // The vector's message alone, and three times among others in one set: each
        // signature is its own, wherever it stands.
        assert_eq!(sign_many(&key, &[&message])[0].to_vec(), bytes(signature));
        let others: [&[u8]; 5] = [&message, b"one", &message, b"", &message];
        let signed = sign_many(&key, &others);
        for at in [0, 2, 4] {
            assert_eq!(
                signed[at].to_vec(),
                bytes(signature),
                "{secret}: place {at}"
            );
        }
    }
}

#[test]
fn no_messages_no_signatures() {
    assert!(sign_many(&key(RFC_8032[0][0]), &[]).is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn many_signatures_are_those_of_one_at_a_time(
        seed in any::<[u8; 32]>(),
        messages in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..700), 0..40),
    ) {
        let key = SigningKey::from_bytes(&seed);
        let borrowed: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
        let one_at_a_time: Vec<[u8; 64]> =
            borrowed.iter().map(|m| key.sign(m).to_bytes()).collect();
        prop_assert_eq!(sign_many(&key, &borrowed), one_at_a_time);
    }
}

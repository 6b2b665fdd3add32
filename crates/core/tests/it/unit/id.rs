use akledger_core::id::*;
use akledger_core::internals::decode_token;
use akledger_core::*;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use proptest::prelude::*;

proptest! {
    /// The token decoder gives what the general base64url decoder gives, for every
    /// 44-byte text (base64url characters mostly, any byte sometimes).
    #[test]
    fn token_decoding_agrees_with_the_general_decoder(
        text in prop::collection::vec(
            prop_oneof![
                8 => prop::sample::select(
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".to_vec()
                ),
                1 => any::<u8>(),
            ],
            TOKEN_LEN,
        ),
    ) {
        let text: [u8; TOKEN_LEN] = text.try_into().expect("44 bytes");
        let general = URL_SAFE_NO_PAD
            .decode(text)
            .ok()
            .and_then(|raw| <[u8; 33]>::try_from(raw).ok());
        prop_assert_eq!(decode_token(&text), general);
    }

    /// Digest text is the suite's name, a colon and the digest in lowercase hex, as
    /// `format!` spells it; digests of parts are digests of the parts joined.
    #[test]
    fn digest_text_and_digests_of_parts(
        digest in any::<[u8; 32]>(),
        parts in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 0..6),
    ) {
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        for suite in [DigestSuite::Sha256, DigestSuite::Blake3] {
            prop_assert_eq!(suite.digest_text(&digest), format!("{}:{hex}", suite.name()));
            prop_assert_eq!(
                suite.digest_parts(parts.iter().map(Vec::as_slice)),
                suite.digest(&parts.concat())
            );
        }
    }
}

#[test]
fn ids_are_53_characters_and_round_trip() {
    let id = EventId::of_preimage(DigestSuite::Blake3, b"{}");
    let text = id.to_string();
    assert_eq!(text.len(), 53);
    assert_eq!(EventId::parse(&text), Ok(id));
    let realm: RealmId = id.retype();
    assert_eq!(realm.to_string(), text.replace("ak:event:", "ak:realm:"));
}

#[test]
fn header_rules() {
    let mk = |h: u8| {
        let mut raw = [7u8; 33];
        raw[0] = h;
        format!("ak:event:{}", URL_SAFE_NO_PAD.encode(raw))
    };
    assert_eq!(
        EventId::parse(&mk(0x12)).map_err(|e| e.code()),
        Err(Code::SchemaViolation)
    );
    for suite in [0u8, 3, 15] {
        assert_eq!(
            EventId::parse(&mk(suite)).map_err(|e| e.code()),
            Err(Code::UnsupportedDigestAlgorithm)
        );
    }
    assert!(EventId::parse(&mk(1)).is_ok());
    assert!(EventId::parse(&mk(2)).is_ok());
}

#[test]
fn lexical_rules() {
    let good = EventId::of_preimage(DigestSuite::Sha256, b"x").to_string();
    let token = good.trim_start_matches("ak:event:");
    for bad in [
        format!("ak:event:{token}="),
        format!("ak:event:{}", &token[..43]),
        format!("ak:event:{}=", &token[..43]),
        format!("ak:realm:{token}"),
        format!("ak:event:{}", URL_SAFE_NO_PAD.encode([1u8; 32])),
        format!("ak:event:{}+", &token[..43]),
    ] {
        assert_eq!(
            EventId::parse(&bad).map_err(|e| e.code()),
            Err(Code::SchemaViolation),
            "{bad}"
        );
    }
    // Non-canonical trailing bits: 33 bytes = 264 bits = 44 chars exactly, so every
    // 44-char token has no spare bits; flipping the last char changes the digest.
    assert!(EventId::parse(&good).is_ok());
}

proptest! {
    /// An id written as a JSON string directly is what escaping its text gives, for every
    /// kind and any digest of either suite.
    #[test]
    fn an_id_written_as_json_is_its_text_escaped(digest in any::<[u8; 32]>(), sha in any::<bool>()) {
        let suite = if sha { DigestSuite::Sha256 } else { DigestSuite::Blake3 };
        let token = Token::new(suite, &digest);
        fn same<K: IdKind>(id: Id<K>) -> Result<(), TestCaseError> {
            let (mut direct, mut escaped) = (Vec::new(), Vec::new());
            id.write_json(&mut direct);
            akledger_core::canonical::write_string(&id.to_string(), &mut escaped);
            prop_assert_eq!(direct, escaped);
            Ok(())
        }
        same(EventId::from_token(token))?;
        same(RealmId::from_token(token))?;
        same(SidecarId::from_token(token))?;
        same(StrandId::from_token(token))?;
    }
}

use akledger_core::canonical::*;
use akledger_core::error::Code;

fn code(bytes: &[u8]) -> Code {
    match parse_canonical(bytes) {
        Ok(v) => panic!("accepted {:?} as {v:?}", String::from_utf8_lossy(bytes)),
        Err(e) => e.code(),
    }
}

#[test]
fn canonical_documents_round_trip() {
    for doc in [
        r#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
        r#"[]"#,
        r#"{}"#,
        r#""\"\\\b\t\n\f\r\u0001\u001f""#,
        r#"-9007199254740991"#,
        r#"9007199254740991"#,
        "\"é ü 漢字 😀\"",
        r#"{"":0,"a":0}"#,
    ] {
        let v = parse_canonical(doc.as_bytes()).unwrap_or_else(|e| panic!("{doc}: {e}"));
        assert_eq!(to_canonical(&v), doc.as_bytes());
    }
}

#[test]
fn keys_sort_by_utf16_code_units_not_bytes() {
    // U+E000 is one UTF-16 unit 0xE000; U+1F600 is the surrogate pair D83D DE00.
    // By UTF-8 bytes U+E000 (EE 80 80) < U+1F600 (F0 ..); by UTF-16 units the emoji is first.
    let doc = "{\"\u{1F600}\":1,\"\u{E000}\":2}";
    assert!(parse_canonical(doc.as_bytes()).is_ok());
    let bytes_order = "{\"\u{E000}\":2,\"\u{1F600}\":1}";
    assert_eq!(code(bytes_order.as_bytes()), Code::SchemaViolation);
}

#[test]
fn rejects_non_canonical_spellings() {
    for doc in [
        r#"{"b":1,"a":2}"#,
        r#"{"a": 1}"#,
        r#" {}"#,
        "{}\n",
        r#""\u0062""#,
        r#""\u001F""#,
        r#""\/""#,
        r#"-0"#,
        r#"01"#,
    ] {
        assert_eq!(code(doc.as_bytes()), Code::SchemaViolation, "{doc}");
    }
}

#[test]
fn rejects_value_rules() {
    for doc in [
        r#"{"a":1,"a":1}"#,
        r#"1.0"#,
        r#"1e3"#,
        r#"9007199254740992"#,
        r#"-9007199254740992"#,
        r#"18446744073709551616"#,
        "\"e\u{0301}\"",
        "\u{feff}{}",
        "\"a\u{feff}\"",
        r#""\ufeff""#,
        r#""\ud800""#,
        r#""\udc00x""#,
        "\"\u{0}\"",
    ] {
        assert_eq!(code(doc.as_bytes()), Code::SchemaViolation, "{doc:?}");
    }
}

#[test]
fn depth_64_is_accepted_and_65_rejected() {
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(parse_canonical(nest(64).as_bytes()).is_ok());
    assert_eq!(code(nest(65).as_bytes()), Code::SchemaViolation);
}

#[test]
fn size_limit_is_payload_too_large() {
    let limit = akledger_core::limits::MAX_EVENT_BYTES;
    let at = format!("\"{}\"", "a".repeat(limit - 2));
    assert!(parse_canonical(at.as_bytes()).is_ok());
    let over = format!("\"{}\"", "a".repeat(limit - 1));
    assert_eq!(code(over.as_bytes()), Code::PayloadTooLarge);
}

#[test]
fn invalid_utf8_is_rejected() {
    assert_eq!(code(b"\"\xff\""), Code::SchemaViolation);
    assert_eq!(code(b"\"\xed\xa0\x80\""), Code::SchemaViolation);
}

#[test]
fn escapes_are_found_at_every_position_of_long_strings() {
    for len in [31usize, 32, 33, 64, 70, 100] {
        for at in 0..len {
            for special in ['"', '\\', '\n', '\u{1}'] {
                let mut s: String = "a".repeat(len);
                s.replace_range(at..=at, &special.to_string());
                let bytes = to_canonical(&Json::Str(s.clone()));
                let expected = serde_json::to_string(&s).unwrap();
                assert_eq!(
                    String::from_utf8(bytes.clone()).unwrap(),
                    expected,
                    "len {len} at {at}"
                );
                assert_eq!(parse_canonical(&bytes).unwrap(), Json::Str(s));
            }
        }
    }
}

mod strict_against_the_oracle {
    //! The one-pass parser against the two-pass definition it replaces: parse the value, then
    //! require re-serializing to give the same bytes.
    use super::*;
    use proptest::prelude::*;

    fn oracle(bytes: &[u8]) -> Option<Json> {
        let value = parse_value(bytes).ok()?;
        (to_canonical(&value) == bytes).then_some(value)
    }

    fn text() -> impl Strategy<Value = String> {
        let chars = prop::sample::select(vec![
            'a', 'z', 'A', '0', ' ', '"', '\\', '/', '\n', '\t', '\u{1}', '\u{1f}', '\u{7f}', 'é',
            'e', '\u{301}', '漢', '\u{e000}', '\u{feff}', '😀', '\u{ffff}',
        ]);
        prop::collection::vec(chars, 0..8).prop_map(|c| c.into_iter().collect())
    }

    fn json() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            (-(1i64 << 54)..(1i64 << 54)).prop_map(Json::Int),
            prop_oneof![
                Just(0i64),
                Just(-1),
                Just(9_007_199_254_740_991),
                Just(i64::MIN)
            ]
            .prop_map(Json::Int),
            text().prop_map(Json::Str),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Json::Array),
                prop::collection::vec((text(), inner), 0..5).prop_map(|members| {
                    let mut obj = Object::new();
                    for (k, v) in members {
                        obj.insert(k, v);
                    }
                    Json::Object(obj)
                }),
            ]
        })
    }

    const BYTES: &[u8] = b" \"\\u0fF1-.eE{}[],:n/a\x00\xff\xc3\xa9";

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn the_one_pass_check_accepts_exactly_what_reserializing_accepts(
            doc in json(),
            edits in prop::collection::vec((any::<usize>(), 0u8..3, prop::sample::select(BYTES)), 0..3),
        ) {
            let mut bytes = to_canonical(&doc);
            for (at, op, b) in edits {
                let at = at % (bytes.len() + 1);
                match op {
                    0 => bytes.insert(at, b),
                    1 if at < bytes.len() => { bytes.remove(at); }
                    _ if at < bytes.len() => bytes[at] = b,
                    _ => bytes.push(b),
                }
            }
            let strict = parse_canonical(&bytes);
            let expected = oracle(&bytes);
            prop_assert_eq!(strict.as_ref().ok(), expected.as_ref(), "{:?}", String::from_utf8_lossy(&bytes));
            if let Err(e) = strict {
                prop_assert!(matches!(e.code(), Code::SchemaViolation | Code::PayloadTooLarge));
            }
        }
    }
}

proptest::proptest! {
    /// The byte-first comparison orders keys exactly as comparing their UTF-16 units does
    /// (the naive oracle), including ASCII prefixes, BMP characters above the surrogates and
    /// supplementary ones.
    #[test]
    fn utf16_cmp_agrees_with_comparing_utf16_units(
        a in "[a-c\u{e9}\u{e000}\u{ffff}\u{1f600}]{0,6}",
        b in "[a-c\u{e9}\u{e000}\u{ffff}\u{1f600}]{0,6}",
    ) {
        proptest::prop_assert_eq!(
            akledger_core::internals::utf16_cmp(&a, &b),
            a.encode_utf16().cmp(b.encode_utf16())
        );
    }
}

use akledger_core::canonical::*;

#[test]
fn values_round_trip_and_rule_breakers_are_refused() {
    let text = r#"{"b":[1,-2,true,null,"é"],"a":{"z":"","\u00e9":9007199254740991}}"#;
    let json = parse_value(text.as_bytes()).unwrap();
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(serde_json::Value::from(&json), value);
    assert_eq!(Json::try_from(&value).unwrap(), json);
    // Display is the canonical text, and serde writes the same bytes.
    assert_eq!(json.to_string().as_bytes(), to_canonical(&json));
    assert_eq!(serde_json::to_vec(&json).unwrap(), to_canonical(&json));
    for bad in [
        serde_json::json!(1.5),
        serde_json::json!(9_007_199_254_740_992_i64),
        serde_json::json!({"k": "e\u{301}"}),
    ] {
        assert!(Json::try_from(bad.clone()).is_err(), "{bad}");
    }
}

use akledger_core::internals::civil_from_days;
use akledger_core::time::*;
use proptest::prelude::*;

proptest! {
    /// The digit writer spells what `format!` with zero-padded fields spells, and the
    /// parser reads it back, for every representable instant.
    #[test]
    fn the_text_is_the_formatted_fields_and_parses_back(ms in 0..=Timestamp::MAX.millis()) {
        let (year, month, day) = civil_from_days(ms / 86_400_000);
        let in_day = ms % 86_400_000;
        let expected = format!(
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
            in_day / 3_600_000,
            in_day / 60_000 % 60,
            in_day / 1000 % 60,
            in_day % 1000
        );
        let t = Timestamp::from_millis(ms).unwrap();
        prop_assert_eq!(t.to_string(), expected);
        prop_assert_eq!(Timestamp::parse(&t.to_string()), Ok(t));
    }
}

#[test]
fn exact_form_round_trips() {
    for s in [
        "1970-01-01T00:00:00.000Z",
        "2026-11-29T23:59:59.999Z",
        "2024-02-29T12:00:00.001Z",
        "9999-12-31T23:59:59.999Z",
    ] {
        assert_eq!(Timestamp::parse(s).map(|t| t.to_string()).as_deref(), Ok(s));
    }
    assert_eq!(
        Timestamp::parse("1970-01-02T00:00:00.000Z").map(Timestamp::millis),
        Ok(86_400_000)
    );
}

#[test]
fn other_forms_are_rejected() {
    for s in [
        "2026-11-29T23:59:59Z",
        "2026-11-29T23:59:59.99Z",
        "2026-11-29T23:59:59.9999Z",
        "2026-11-29t23:59:59.999Z",
        "2026-11-29T23:59:59.999z",
        "2026-11-29T23:59:59.999+00:00",
        "2026-11-29 23:59:59.999Z",
        "2026-02-30T00:00:00.000Z",
        "2025-02-29T00:00:00.000Z",
        "2026-13-01T00:00:00.000Z",
        "2026-11-29T24:00:00.000Z",
        "2026-11-29T23:60:00.000Z",
        "2026-11-29T23:59:60.000Z",
        "1969-12-31T23:59:59.999Z",
        "２026-11-29T23:59:59.999Z",
    ] {
        assert!(Timestamp::parse(s).is_err(), "{s}");
    }
}

//! Abbreviated ids against a naive oracle: an abbreviation matches exactly the ids whose
//! text (the base64url of their 33 bytes, as a standard encoder writes it) starts with it.

use akledger_core::id::EventKind;
use akledger_core::id_prefix::IdPrefix;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use proptest::prelude::*;

fn raw() -> impl Strategy<Value = [u8; 33]> {
    proptest::collection::vec(any::<u8>(), 33).prop_map(|v| v.try_into().unwrap())
}

proptest! {
    #[test]
    fn an_abbreviation_matches_the_ids_whose_text_starts_with_it(
        a in raw(),
        b in raw(),
        n in 4usize..44,
        tagged in any::<bool>(),
    ) {
        let text = URL_SAFE_NO_PAD.encode(a);
        let given = match tagged {
            true => format!("ak:event:{}", &text[..n]),
            false => text[..n].to_string(),
        };
        let prefix = IdPrefix::parse::<EventKind>(&given).unwrap();
        prop_assert!(prefix.matches(&a));
        // Another id matches exactly when its text starts the same.
        let other = URL_SAFE_NO_PAD.encode(b);
        prop_assert_eq!(prefix.matches(&b), other.starts_with(&text[..n]));
        // The id with the last bit the abbreviation spells flipped does not match.
        let mut near = a;
        let bit = n * 6 - 1;
        near[bit / 8] ^= 0x80 >> (bit % 8);
        prop_assert!(!prefix.matches(&near));
    }
}

#[test]
fn abbreviations_too_short_too_long_of_another_kind_or_not_base64url_are_refused() {
    let id = "ak:event:AvW3IN7cfBmrh_JhLIAq0mZdraiN_yt58SFUKwRj3vhN";
    for (text, why) in [
        ("AvW", "at least 4 characters"),
        ("ak:event:AvW", "at least 4 characters"),
        (&id[..9 + 44], "as long as an id"),
        ("ak:sidecar:AvW3IN7c", "another kind"),
        ("AvW3+N7c", "not base64url"),
    ] {
        let err = IdPrefix::parse::<EventKind>(text).unwrap_err();
        assert!(err.message().contains(why), "{text}: {err}");
    }
    // A report's label: its trailing ellipsis is not part of it.
    let label = IdPrefix::parse::<EventKind>("AvW3IN7cfBmr…").unwrap();
    let raw: [u8; 33] = URL_SAFE_NO_PAD
        .decode(&id[9..])
        .unwrap()
        .try_into()
        .unwrap();
    assert!(label.matches(&raw));
}

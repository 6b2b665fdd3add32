//! The proofs' JSON forms: round trips, strictness, and verification against checkpoints.

use super::*;
use akledger_core::error::Code;
use akledger_core::id::{DigestSuite, EventId};

fn event(i: u64) -> EventId {
    EventId::of_preimage(DigestSuite::Blake3, &i.to_be_bytes())
}

#[test]
fn inclusion_proofs_round_trip_and_verify_against_a_checkpoint() {
    let ids: Vec<EventId> = (0..9).map(event).collect();
    let leaves: Vec<Hash> = ids.iter().map(|id| leaf_hash(id.bytes())).collect();
    let stored = stored_of(&leaves);
    let root = tree_hash(9, &stored).unwrap();
    let path = inclusion_proof(4, 9, &stored).unwrap();
    let proof = InclusionProof::new("example.com/log", 9, 4, ids[4], path).unwrap();
    let json = proof.to_json();
    let text = String::from_utf8(json.clone()).unwrap();
    assert!(text.starts_with("{\"event_id\":\"ak:event:"), "{text}");
    assert_eq!(InclusionProof::from_json(&json).unwrap(), proof);
    proof.verify(&root).unwrap();
    let checkpoint = Checkpoint::new("example.com/log", 9, root).unwrap();
    proof.verify_against(&checkpoint).unwrap();
    let elsewhere = Checkpoint::new("example.com/other", 9, root).unwrap();
    assert!(proof.verify_against(&elsewhere).is_err());
    let later = Checkpoint::new("example.com/log", 10, root).unwrap();
    assert!(proof.verify_against(&later).is_err());
    let wrong = InclusionProof::new("example.com/log", 9, 4, ids[5], proof.hashes().to_vec());
    assert!(wrong.unwrap().verify(&root).is_err());
}

#[test]
fn consistency_proofs_round_trip_and_verify_between_checkpoints() {
    let stored = stored_of(&leaves(9));
    let (r3, r9) = (
        tree_hash(3, &stored).unwrap(),
        tree_hash(9, &stored).unwrap(),
    );
    let path = consistency_proof(3, 9, &stored).unwrap();
    let proof = ConsistencyProof::new("example.com/log", 3, 9, path).unwrap();
    let json = proof.to_json();
    assert_eq!(ConsistencyProof::from_json(&json).unwrap(), proof);
    proof.verify(&r3, &r9).unwrap();
    let old = Checkpoint::new("example.com/log", 3, r3).unwrap();
    let new = Checkpoint::new("example.com/log", 9, r9).unwrap();
    proof.verify_between(&old, &new).unwrap();
    assert!(proof.verify_between(&new, &old).is_err());
    assert!(proof.verify(&r9, &r3).is_err());
}

#[test]
fn parsing_is_strict() {
    let h = empty_root().to_base64();
    let good = format!(r#"{{"origin":"o","old_size":1,"new_size":2,"hashes":["{h}"]}}"#);
    assert!(ConsistencyProof::from_json(good.as_bytes()).is_ok());
    let short = Hash([1; 32]).to_base64().replace("AQE=", "AQ==");
    for bad in [
        String::new(),
        "[]".into(),
        "{}".into(),
        r#"{"origin":"o","old_size":1,"new_size":2}"#.to_string(),
        format!(r#"{{"origin":"o","old_size":1,"new_size":2,"hashes":["{h}"],"x":1}}"#),
        r#"{"origin":"o","old_size":1,"old_size":1,"new_size":2,"hashes":[]}"#.to_string(),
        r#"{"origin":"o","old_size":"1","new_size":2,"hashes":[]}"#.to_string(),
        r#"{"origin":"o","old_size":-1,"new_size":2,"hashes":[]}"#.to_string(),
        r#"{"origin":"o","old_size":1.0,"new_size":2,"hashes":[]}"#.to_string(),
        r#"{"origin":"o","old_size":9007199254740992,"new_size":2,"hashes":[]}"#.to_string(),
        r#"{"origin":1,"old_size":1,"new_size":2,"hashes":[]}"#.to_string(),
        r#"{"origin":"","old_size":1,"new_size":2,"hashes":[]}"#.to_string(),
        format!(r#"{{"origin":"o","old_size":1,"new_size":2,"hashes":"{h}"}}"#),
        r#"{"origin":"o","old_size":1,"new_size":2,"hashes":[1]}"#.to_string(),
        format!(r#"{{"origin":"o","old_size":1,"new_size":2,"hashes":["{short}"]}}"#),
        format!(
            r#"{{"origin":"o","old_size":1,"new_size":2,"hashes":["{}"]}}"#,
            h.trim_end_matches('=')
        ),
        format!(
            r#"{{"origin":"o","old_size":1,"new_size":2,"hashes":[{}]}}"#,
            vec![format!("\"{h}\""); 129].join(",")
        ),
    ] {
        let err = ConsistencyProof::from_json(bad.as_bytes()).unwrap_err();
        assert_eq!(err.code(), Code::ProofInvalid, "{bad}");
    }
    let id = event(1).to_string();
    let good = format!(
        r#"{{"origin":"o","tree_size":2,"leaf_index":1,"event_id":"{id}","hashes":["{h}"]}}"#
    );
    assert!(InclusionProof::from_json(good.as_bytes()).is_ok());
    for bad in [
        good.replace(&id, "ak:event:x"),
        good.replace("\"tree_size\"", "\"size\""),
        good.replace(",\"leaf_index\":1", ""),
    ] {
        assert!(InclusionProof::from_json(bad.as_bytes()).is_err(), "{bad}");
    }
    assert!(ConsistencyProof::new("o", 1 << 53, 1 << 53, vec![]).is_err());
    assert!(ConsistencyProof::new("o", 1, 2, vec![empty_root(); 129]).is_err());
}

//! The member names of the event schemas (PROFILE §3–§8), so that parsing an object key
//! that is one of them allocates nothing: an event's objects spell the same few dozen names
//! over and over, and each was an allocation and a free per event.

/// Known member names, in byte order (a test keeps them sorted).
pub const KNOWN: [&str; 56] = [
    "account_id",
    "actor_id",
    "addressed_agent_ids",
    "basis_event_ids",
    "ciphertext",
    "client_order_key",
    "completes_exchange",
    "content",
    "content_type",
    "coordinator_agent_id",
    "created_at",
    "did_core_id",
    "effective_scope",
    "encrypted_payload",
    "encryption_context",
    "envelope_version",
    "epoch",
    "event_digest",
    "event_id",
    "event_kind",
    "exchange_id",
    "expected_coordinator_agent_id",
    "failure_reason_code",
    "group_state_ref",
    "id",
    "jws",
    "kind",
    "n",
    "new_coordinator",
    "nonce",
    "payload",
    "performative",
    "predecessor_event_ref",
    "principal_id",
    "producer_proof",
    "protocol_id",
    "purpose",
    "realm_id",
    "request_context",
    "request_event_id",
    "response_event_ids",
    "role",
    "scheme",
    "scope_ref",
    "semantic_refs",
    "sender_actor_id",
    "service_id",
    "sidecar_exchange_binding",
    "sidecar_id",
    "source_context_ref",
    "source_track_ref",
    "station_id",
    "strand_id",
    "text",
    "track_name",
    "verification_method",
];

/// Bits of the slot table: 4096 slots for the few dozen names, so a hash that places
/// every name in a slot of its own is easy to find (the table is built at compile time,
/// and a collision is a compile error).
const SLOT_BITS: u32 = 12;

/// FNV-1a of `name`, cut to [`SLOT_BITS`].
const fn slot(name: &[u8]) -> usize {
    let mut hash: u32 = 0x811c_9dc5;
    let mut rest = name;
    while let [byte, tail @ ..] = rest {
        hash = (hash ^ *byte as u32).wrapping_mul(0x0100_0193);
        rest = tail;
    }
    (hash >> (32 - SLOT_BITS)) as usize
}

/// For each slot, 1 + the index in [`KNOWN`] of the name hashed there, or 0.
#[allow(
    clippy::indexing_slicing,
    reason = "evaluated at compile time: an index out of range fails the build, it cannot panic"
)]
const SLOTS: [u8; 1 << SLOT_BITS] = {
    let mut slots = [0u8; 1 << SLOT_BITS];
    let mut i = 0;
    let mut names: &[&str] = &KNOWN;
    while let [name, tail @ ..] = names {
        let at = slot(name.as_bytes());
        assert!(slots[at] == 0, "two known member names hash to one slot");
        i += 1;
        slots[at] = i;
        names = tail;
    }
    slots
};

/// `key` as one of the known member names, when it is one: one hash, one comparison.
pub fn known(key: &str) -> Option<&'static str> {
    let entry = usize::from(*SLOTS.get(slot(key.as_bytes()))?);
    let name = KNOWN.get(entry.checked_sub(1)?)?;
    (*name == key).then_some(*name)
}

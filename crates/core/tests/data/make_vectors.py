#!/usr/bin/env python3
"""Known-answer vectors for akledger, produced by an implementation independent of the crate.

How the files in this directory were produced:

    pip install blake3 cryptography
    python3 tests/data/vectors/make_vectors.py      # from the crate root

This writes `ids.json` and `signed_event.json` next to this script. Nothing here uses Rust
code: canonical JSON (PROFILE §2) is written by `canonical()` below on top of Python's `json`
string escaping, digests come from `hashlib` (sha256) and the `blake3` package, ids follow
PROFILE §1 (header byte 0x01 sha256 / 0x02 blake3, then the 32-byte digest, unpadded
base64url), and producer proofs follow PROFILE §4 with the `cryptography` package's Ed25519.

`ids.json`: canonical envelope preimages (PROFILE §3) with their sha256/blake3 digests and the
`ak:event:` ids in both suites. `signed_event.json`: complete signed events made from fixed
Ed25519 seeds; the script signs them itself and then re-verifies the recorded bytes from
scratch (parse, re-canonicalize, recompute id, rebuild the JWS signing input, verify).
`tests/vectors.rs` checks that the crate computes the same digests and ids and that
`EventBuilder` reproduces every signed event byte for byte (Ed25519 is deterministic).
The tests read the JSON files only; they never run Python.
"""

import base64
import hashlib
import json
import os
import unicodedata

import blake3
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------- canonical JSON (PROFILE §2)

MAX_SAFE = 2**53 - 1


def canonical(v):
    """Canonical JSON text: keys sorted by UTF-16 code units, no whitespace, integers only."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        assert -MAX_SAFE <= v <= MAX_SAFE
        return str(v)
    if isinstance(v, str):
        assert unicodedata.is_normalized("NFC", v), v
        assert "\ufeff" not in v
        # Python escapes exactly \" \\ \b \f \n \r \t and other controls as lowercase \u00xx.
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(canonical(x) for x in v) + "]"
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(canonical(k) + ":" + canonical(v[k]) for k in keys) + "}"
    raise TypeError(type(v))


def cbytes(v):
    return canonical(v).encode("utf-8")


# ------------------------------------------------------------------------ ids (PROFILE §1)

SUITES = {"sha256": 0x01, "blake3": 0x02}


def b64u(b):
    return base64.urlsafe_b64encode(b).decode("ascii").rstrip("=")


def b64u_decode(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def digest(suite, data):
    if suite == "sha256":
        return hashlib.sha256(data).digest()
    return blake3.blake3(data).digest()


def token(suite, data):
    t = b64u(bytes([SUITES[suite]]) + digest(suite, data))
    assert len(t) == 44
    return t


def event_id(suite, data):
    return "ak:event:" + token(suite, data)


# ---------------------------------------------------------------- did:key (PROFILE §1, §4)

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58btc(b):
    n = int.from_bytes(b, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    return "1" * (len(b) - len(b.lstrip(b"\0"))) + out


def key_from_seed(byte):
    sk = Ed25519PrivateKey.from_private_bytes(bytes([byte]) * 32)
    pk = sk.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return sk, pk


def multibase(pk):
    return "z" + base58btc(b"\xed\x01" + pk)


def did_core(pk):
    return "ak:did_core:key:" + multibase(pk)


def method(pk):
    mb = multibase(pk)
    return f"did:key:{mb}#{mb}"


def service(pk):
    return {"kind": "service", "service_id": did_core(pk)}


STATION = "ak:did_core:webvh:z6mkfixture:station.example"


def account(pk):
    return {"kind": "account", "account_id": {"principal_id": did_core(pk), "station_id": STATION}}


# ------------------------------------------------------------------ preimage vectors (§3)

SK_A, PK_A = key_from_seed(0x01)


def preimages():
    realm = {
        "actor_id": service(PK_A),
        "created_at": "2026-11-29T12:00:00.000Z",
        "kind": "ak.realm.create",
        "payload": {"name": "Operations realm", "retention_days": 365},
        "scope_ref": {"kind": "realm_genesis"},
    }
    realm_id = "ak:realm:" + token("blake3", cbytes(realm))
    sidecar = {
        "actor_id": account(PK_A),
        "created_at": "2026-11-29T12:00:01.000Z",
        "kind": "ak.sidecar.create",
        "payload": {},
        "realm_id": realm_id,
        "scope_ref": {"kind": "realm", "realm_id": realm_id},
    }
    sidecar_event = event_id("blake3", cbytes(sidecar))
    sidecar_id = "ak:sidecar:" + token("blake3", cbytes(sidecar))
    message = {
        "actor_id": account(PK_A),
        "created_at": "2026-11-29T12:00:02.500Z",
        "kind": "ak.message.create",
        "payload": {
            "encrypted_payload": {
                "ciphertext": b64u(bytes(range(64))),
                "content_type": "application/vnd.arkret.message+json",
                "encryption_context": {"epoch": 0, "group_state_ref": "group-state-0"},
                "version": "1.0",
            }
        },
        "realm_id": realm_id,
        "scope_ref": {"kind": "sidecar", "realm_id": realm_id, "sidecar_id": sidecar_id},
        "semantic_refs": [
            {"critical": True, "id": sidecar_event, "role": "after"},
            {"critical": False, "id": "urn:example:ticket:4711", "role": "mentions"},
        ],
    }
    unicode_note = {
        "actor_id": service(PK_A),
        "created_at": "2026-11-29T23:59:59.999Z",
        "kind": "ak.note.create",
        "payload": {
            "title": "Grüße aus Köln — 東京 ☕ 한국어 Å 😀",
            "memo": "tab\there\nline \"quoted\" back\\slash \b\f\r \u0001\u001f\u007f end",
            "é": 1,
            "\ue000": 2,  # UTF-16 0xE000 sorts after the surrogate pair of U+1F600 ...
            "😀": 3,  # ... although its UTF-8 bytes sort first
            "min": -MAX_SAFE,
            "max": MAX_SAFE,
            "list": [True, False, None, [], {}],
        },
        "realm_id": realm_id,
        "scope_ref": {"kind": "realm", "realm_id": realm_id},
    }
    return [
        ("realm_create", realm),
        ("sidecar_create", sidecar),
        ("message_with_semantic_refs", message),
        ("non_ascii_and_control_escapes", unicode_note),
    ]


def id_vectors():
    out = []
    for name, obj in preimages():
        pre = cbytes(obj)
        out.append(
            {
                "name": name,
                "preimage": pre.decode("utf-8"),
                "sha256": digest("sha256", pre).hex(),
                "blake3": digest("blake3", pre).hex(),
                "id_sha256": event_id("sha256", pre),
                "id_blake3": event_id("blake3", pre),
            }
        )
    return out


# ------------------------------------------------------------- signed events (PROFILE §4)

JWS_HEADER = {"alg": "Ed25519"}


def signing_input(binding):
    return (b64u(cbytes(JWS_HEADER)) + "." + b64u(cbytes(binding))).encode("ascii")


def binding_of(event_digest, actor, vm, created_at):
    return {
        "context": "ak.event_proof.v1",
        "event_digest": event_digest,
        "actor_id": actor,
        "verification_method": vm,
        "created_at": created_at,
    }


def sign_event(pre_obj, suite, sk, pk):
    pre = cbytes(pre_obj)
    event_digest = f"{suite}:{digest(suite, pre).hex()}"
    vm = method(pk)
    binding = binding_of(event_digest, pre_obj["actor_id"], vm, pre_obj["created_at"])
    signature = sk.sign(signing_input(binding))
    event = dict(pre_obj)
    event["event_id"] = event_id(suite, pre)
    event["producer_proof"] = {
        "kind": "detached_jws",
        "verification_method": vm,
        "event_digest": event_digest,
        "created_at": pre_obj["created_at"],
        "jws": b64u(cbytes(JWS_HEADER)) + ".." + b64u(signature),
    }
    return canonical(event)


def verify_recorded(event_text):
    """Checks a recorded event from scratch; returns its id."""
    raw = event_text.encode("utf-8")
    obj = json.loads(event_text)
    assert cbytes(obj) == raw, "event is not canonical"
    proof = obj.pop("producer_proof")
    stated = obj.pop("event_id")
    pre = cbytes(obj)
    header = b64u_decode(stated[len("ak:event:") :])[0]
    suite = {v: k for k, v in SUITES.items()}[header]
    assert event_id(suite, pre) == stated, "id is not the digest of the preimage"
    assert proof["event_digest"] == f"{suite}:{digest(suite, pre).hex()}"
    assert proof["created_at"] == obj["created_at"]
    vm = proof["verification_method"]
    mb, frag = vm[len("did:key:") :].split("#")
    assert mb == frag and mb.startswith("z")
    n = 0
    for c in mb[1:]:
        n = n * 58 + B58.index(c)
    key_bytes = n.to_bytes(34, "big")
    assert key_bytes[:2] == b"\xed\x01"
    principal = obj["actor_id"].get("service_id") or obj["actor_id"]["account_id"]["principal_id"]
    assert principal == "ak:did_core:key:" + mb, "signer is not the actor's key principal"
    h, empty, sig = proof["jws"].split(".")
    assert empty == "" and json.loads(b64u_decode(h)) == JWS_HEADER and h == b64u(cbytes(JWS_HEADER))
    binding = binding_of(proof["event_digest"], obj["actor_id"], vm, obj["created_at"])
    # Raises cryptography.exceptions.InvalidSignature on failure.
    Ed25519PublicKey.from_public_bytes(key_bytes[2:]).verify(b64u_decode(sig), signing_input(binding))
    return stated


def signed_events():
    realm = {
        "actor_id": service(PK_A),
        "created_at": "2026-11-29T12:00:00.000Z",
        "kind": "ak.realm.create",
        "payload": {"name": "Vector realm"},
        "scope_ref": {"kind": "realm_genesis"},
    }
    realm_text = sign_event(realm, "sha256", SK_A, PK_A)
    realm_event_id = json.loads(realm_text)["event_id"]
    realm_id = "ak:realm:" + realm_event_id[len("ak:event:") :]
    note = {
        "actor_id": account(PK_A),
        "created_at": "2026-11-29T12:00:01.250Z",
        "kind": "ak.note.create",
        "payload": {"text": "Grüße — 東京 \u0007"},
        "realm_id": realm_id,
        "scope_ref": {"kind": "realm", "realm_id": realm_id},
        "semantic_refs": [
            {"critical": True, "id": realm_event_id, "role": "after"},
            {"critical": False, "id": "urn:example:doc:1", "role": "cites"},
        ],
    }
    note_text = sign_event(note, "blake3", SK_A, PK_A)
    out = []
    for name, suite, text in [("realm_create_sha256", "sha256", realm_text), ("note_blake3", "blake3", note_text)]:
        out.append({"name": name, "suite": suite, "event_id": verify_recorded(text), "event": text})
    return {
        "seed_hex": (bytes([0x01]) * 32).hex(),
        "public_key_hex": PK_A.hex(),
        "verification_method": method(PK_A),
        "events": out,
    }


def write(name, doc):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=2)
        f.write("\n")


if __name__ == "__main__":
    write("ids.json", id_vectors())
    write("signed_event.json", signed_events())
    # Re-verify what was written, as a reader would see it.
    with open(os.path.join(HERE, "signed_event.json"), encoding="utf-8") as f:
        for e in json.load(f)["events"]:
            assert verify_recorded(e["event"]) == e["event_id"]
    print("wrote ids.json and signed_event.json; all signatures verify")

#!/usr/bin/env python3
"""Known answers for PROFILE §14.3 commitments, computed without akledger: Python's json
(sorted keys, no whitespace, raw UTF-8, which is RFC 8785 for these values) and the blake3
package (pip install blake3). Writes redaction_vectors.json beside this script."""
import base64, json, os
import blake3

CASES = [
    ("exchange-00000001-00000000", "ssn", bytes(range(32)), "123-45-6789"),
    ("exchange-00000001-00000001", "card", bytes([0xff] * 32), 4111111111111111),
    ("ex_7Qk2-abcdefghijklmnopqrst", "address", bytes(range(32, 64)),
     {"street": "Rue de l'\u00c9glise 5", "lines": ["a\nb", "tab\there"], "zip": None, "ok": True}),
    ("exchange-00000002-00000003", "note", bytes([7] * 32), ["\u00e9t\u00e9", -42, {"k": "\u0001"}]),
]

def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

vectors = []
for exchange_id, field, salt, value in CASES:
    salt_text = base64.urlsafe_b64encode(salt).rstrip(b"=").decode()
    preimage = canonical({"context": "ak.redaction.v1", "exchange_id": exchange_id,
                          "field": field, "salt": salt_text, "value": value})
    vectors.append({
        "exchange_id": exchange_id, "field": field, "salt": salt_text, "value": value,
        "preimage": preimage.decode(),
        "commitment": "blake3:" + blake3.blake3(preimage).hexdigest(),
    })
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "redaction_vectors.json"), "w", encoding="utf-8") as out:
    json.dump(vectors, out, ensure_ascii=False, indent=1)
    out.write("\n")

#!/usr/bin/env python3
"""Validates the control plaintexts akledger authors against the published Arkret schema.

How the report in this directory was produced (from the crate root):

    pip install jsonschema referencing
    cargo run --example control_plaintexts > tests/data/vectors/control_plaintexts.json
    python3 tests/data/vectors/check_control_schema.py

Input: `control_plaintexts.json` (every control plaintext the authoring helpers write for the
sample sidecar, decrypted byte for byte) and the published schema
`tests/data/arkret/agent-sidecar-exchange-control.schema.json` (copied unchanged; see the
README there). Output: `control_schema_report.json`, which `tests/arkret_published.rs`
reads; CI runs no Python.

The schema's two coordinator members refer to `./common-ids.schema.json#/$defs/core_id`.
The copy of that file available at the schema's commit does not define `core_id`, so the
reference is served by a stand-in holding the did_core_id pattern the published
documentation of this schema gives for those members (seed 004; PROFILE §1):
`^ak:did_core:[a-z0-9]+:[^\\s/?#]+$`.

Besides validating every authored plaintext (all must be valid), the script builds negative
cases, two per `allOf` rule of the schema, by mutating authored plaintexts, and requires
each to fail under exactly that rule and no other part of the schema.
"""

import copy
import json
import os
from importlib.metadata import version

import jsonschema
from referencing import Registry, Resource

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "arkret", "agent-sidecar-exchange-control.schema.json")
COMMON_IDS = "https://arkret.org/v1/schemas/common-ids.schema.json"
DID_CORE_ID = r"^ak:did_core:[a-z0-9]+:[^\s/?#]+$"


def canonical(value):
    """Compact JSON with sorted keys (all keys here are ASCII, so this is PROFILE §2 order)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def validator():
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    stand_in = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": COMMON_IDS,
        "$defs": {"core_id": {"type": "string", "pattern": DID_CORE_ID}},
    }
    registry = Registry().with_resource(COMMON_IDS, Resource.from_contents(stand_in))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def failing_parts(v, instance):
    """The top-level schema parts an instance fails: 'allOf[i]', 'properties', ..."""
    parts = set()
    for error in v.iter_errors(instance):
        path = list(error.schema_path)
        if path and path[0] == "allOf":
            parts.add("allOf[%d]" % path[1])
        elif path:
            parts.add(str(path[0]))
        else:
            parts.add("(root)")
    return sorted(parts)


def first(samples, pred):
    for s in samples:
        if pred(s):
            return copy.deepcopy(s)
    raise SystemExit("no sample plaintext fits a negative case")


def negatives(samples):
    close = first(samples, lambda s: s["action"] == "close" and s["response_event_ids"])
    cancel = first(samples, lambda s: s["action"] == "cancel")
    fail = first(samples, lambda s: s["action"] == "fail")
    reassign = first(samples, lambda s: s["action"] == "reassign_coordinator")
    agent = reassign["coordinator_agent_id"]

    def without(obj, key):
        obj = copy.deepcopy(obj)
        del obj[key]
        return obj

    def plus(obj, key, value):
        obj = copy.deepcopy(obj)
        obj[key] = value
        return obj

    return [
        ("terminal_without_response_event_ids", "allOf[0]", without(close, "response_event_ids")),
        ("terminal_with_coordinator_agent_id", "allOf[0]", plus(cancel, "coordinator_agent_id", agent)),
        ("fail_without_failure_reason_code", "allOf[1]", without(fail, "failure_reason_code")),
        ("close_with_failure_reason_code", "allOf[1]", plus(close, "failure_reason_code", "some_reason")),
        ("reassign_without_expected_coordinator", "allOf[2]", without(reassign, "expected_coordinator_agent_id")),
        ("reassign_with_response_event_ids", "allOf[2]", plus(reassign, "response_event_ids", [])),
    ]


def main():
    v = validator()
    with open(os.path.join(HERE, "control_plaintexts.json"), encoding="utf-8") as f:
        items = json.load(f)
    authored, parsed = [], []
    for n, item in enumerate(items):
        text = item["plaintext"]
        value = json.loads(text)
        assert canonical(value) == text, "authored plaintext %d is not canonical" % n
        parts = failing_parts(v, value)
        assert not parts, "authored plaintext %d fails %s: %s" % (n, parts, text)
        authored.append({
            "name": "authored_%02d_%s" % (n, item["action"]),
            "action": item["action"],
            "plaintext": text,
            "valid": not parts,
        })
        parsed.append(value)
    actions = {a["action"] for a in authored}
    assert actions == {"close", "cancel", "fail", "reassign_coordinator"}, actions
    negative = []
    for name, rule, value in negatives(parsed):
        parts = failing_parts(v, value)
        assert parts == [rule], "%s fails %s, not only %s" % (name, parts, rule)
        negative.append({
            "name": name,
            "all_of_rule": rule,
            "plaintext": canonical(value),
            "valid": not parts,
            "failing": parts,
        })
    report = {
        "schema": "tests/data/arkret/agent-sidecar-exchange-control.schema.json",
        "validator": "jsonschema %s, Draft 2020-12" % version("jsonschema"),
        "authored": authored,
        "negative": negative,
    }
    with open(os.path.join(HERE, "control_schema_report.json"), "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("%d authored plaintexts valid; %d negatives fail their allOf rule"
          % (len(authored), len(negative)))


if __name__ == "__main__":
    main()

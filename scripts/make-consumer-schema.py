#!/usr/bin/env python3
"""Writes docs/report.consumer.schema.json from docs/report.schema.json.

report.schema.json is exact: every object allows no key it does not list, so the tests prove
that every field gpucheck writes is documented. A consumer (a CI gate, a fleet collector) needs
the opposite: a schema that keeps accepting reports of the same schema_version when a later
gpucheck adds to them (docs/report-format.md, "schema_version policy"). This script derives that
schema, so the two never drift:

- every object is open (the "additionalProperties": false are removed; a map's value schema
  stays);
- the open string sets lose their "enum" (the type stays): a consumer must accept values it does
  not know there. The closed sets below keep theirs, and "const" (schema_version,
  format_version) stays: a new value in them is a new schema_version;
- keys added after schema_version 1 was first published (ADDED_WITHIN_VERSION) are not
  required, so a report of an older gpucheck of the same schema_version still validates;
- everything else (structure, types, required keys, patterns, minimums) is the strict schema's.

Usage: scripts/make-consumer-schema.py           rewrite docs/report.consumer.schema.json
       scripts/make-consumer-schema.py --check   exit 1 when the committed file differs
"""

import argparse
import copy
import json
import pathlib
import sys

SOURCE = pathlib.Path(__file__).resolve().parent.parent

# Closed sets: "$defs" name -> properties whose enum stays. A consumer may branch on these
# exhaustively (a CI gate on a status, an alert on a severity), so a new value bumps
# schema_version. Every other enum is an open set.
CLOSED_SETS = {
    "CheckResult": ["status"],
    "Finding": ["severity"],
    "ReportSummary": ["overall"],
}

# Keys added to an object after schema_version 1 was first published: "$defs" name (or "" for
# the report itself) -> keys. gpucheck writes them, the strict schema requires them, but the
# consumer schema does not, because older reports of the same version lack them.
ADDED_WITHIN_VERSION = {
    "NvLinkInfo": ["crc_errors"],
}


def open_objects(node):
    """Drops every "additionalProperties": false and every enum, recursively (in place)."""
    if isinstance(node, dict):
        if node.get("additionalProperties") is False:
            del node["additionalProperties"]
        node.pop("enum", None)
        for value in node.values():
            open_objects(value)
    elif isinstance(node, list):
        for value in node:
            open_objects(value)


def checked_property(schema, name, key, table):
    """The property KEY of object NAME that TABLE lists; a stale entry is an error."""
    properties = schema.get("$defs", {}).get(name, {}) if name else schema
    properties = properties.get("properties", {})
    if key not in properties:
        sys.exit(f"make-consumer-schema.py: {table} names {name or '(report)'}.{key}, "
                 "which the strict schema does not have")
    return properties[key]


def consumer_schema(strict):
    consumer = copy.deepcopy(strict)
    closed = {}
    for name, keys in CLOSED_SETS.items():
        for key in keys:
            prop = checked_property(strict, name, key, "CLOSED_SETS")
            if "enum" not in prop:
                sys.exit(f"make-consumer-schema.py: CLOSED_SETS names {name}.{key}, "
                         "which has no enum")
            closed[(name, key)] = prop["enum"]
    open_objects(consumer)
    for (name, key), values in closed.items():
        checked_property(consumer, name, key, "CLOSED_SETS")["enum"] = values
    for name, keys in ADDED_WITHIN_VERSION.items():
        owner = consumer["$defs"][name] if name else consumer
        for key in keys:
            checked_property(strict, name, key, "ADDED_WITHIN_VERSION")
            owner["required"] = [k for k in owner.get("required", []) if k != key]

    version = strict["$id"].rsplit(":", 1)[-1]
    consumer["$id"] = f"urn:gpucheck:report-consumer-schema:{version}"
    consumer["title"] = "gpucheck report, for consumers"
    consumer["description"] = (
        f"Validates reports of schema_version {version} from any gpucheck that writes that "
        "version, also a newer one that added keys or values to open sets: objects accept "
        "unknown keys, open string sets accept unknown values. Generated from "
        "report.schema.json (the exact schema) by scripts/make-consumer-schema.py; do not edit. "
        "See docs/report-format.md, \"schema_version policy\".")
    # The strict schema's key order, with the new annotations where the old ones were.
    return {key: consumer[key] for key in strict if key in consumer}


def render(schema):
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed file instead of writing it")
    parser.add_argument("--strict", type=pathlib.Path,
                        default=SOURCE / "docs" / "report.schema.json")
    parser.add_argument("--output", type=pathlib.Path,
                        default=SOURCE / "docs" / "report.consumer.schema.json")
    args = parser.parse_args()
    text = render(consumer_schema(json.loads(args.strict.read_text(encoding="utf-8"))))
    if not args.check:
        args.output.write_text(text, encoding="utf-8")
        return 0
    committed = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
    if committed != text:
        print(f"{args.output} is not what scripts/make-consumer-schema.py makes from "
              f"{args.strict}: run scripts/make-consumer-schema.py and commit the result",
              file=sys.stderr)
        return 1
    print(f"{args.output} matches {args.strict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

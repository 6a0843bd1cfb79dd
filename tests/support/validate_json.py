#!/usr/bin/python3
"""Validates JSON documents against JSON Schemas (draft 2020-12) with python3-jsonschema.

The C++ tests' JsonSchema (tests/support/json_schema.hpp) starts one of these per test process
and talks to it one line at a time, so many validations cost one interpreter start.

Each request on stdin is one compact JSON object on one line:
  {"schema": PATH}                                  load and check the schema
  {"schema": PATH, "ref": "#/$defs/NAME", "instance": DOC}   validate DOC (ref is optional)
Each answer on stdout is one line:
  {"errors": ["<JSON pointer>: <reason>", ...]}     sorted by place; empty when valid
  {"schema_error": "<reason>"}                      the schema cannot be read or is not a schema
Exit 3 when jsonschema cannot be imported, with the reason on stderr and on stdout as a
schema_error (the C++ side shows it).
"""

import hashlib
import json
import os
import sys
import tempfile

INSTALL_HINT = "run scripts/install-deps.sh (it installs Debian's python3-jsonschema)"

try:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
except ImportError as error:
    message = f"python3-jsonschema is missing ({error}): {INSTALL_HINT}"
    print(message, file=sys.stderr)
    print(json.dumps({"schema_error": message}), flush=True)
    sys.exit(3)


def pointer(path):
    """The RFC 6901 JSON pointer of a jsonschema error path; "(root)" for the document itself."""
    tokens = [str(token).replace("~", "~0").replace("/", "~1") for token in path]
    return "/" + "/".join(tokens) if tokens else "(root)"


def place(path):
    """A sort key for an error path: array indexes in numeric order, keys by name."""
    return [(0, token, "") if isinstance(token, int) else (1, 0, str(token)) for token in path]


def check_once(schema, text):
    """Checks the schema against the metaschema, once per content on this machine: most test
    processes load the same two report schemas, and the check costs more than the validations."""
    marker = os.path.join(tempfile.gettempdir(), "gpucheck-schema-checked-" +
                          hashlib.sha256(text).hexdigest() + "-" + str(os.getuid()))
    if os.path.exists(marker):
        return
    Draft202012Validator.check_schema(schema)
    try:
        with open(marker, "w", encoding="utf-8"):
            pass
    except OSError:
        pass  # only a lost shortcut


class Schemas:
    """Schema files read once, and one validator per (file, reference)."""

    def __init__(self):
        self.roots = {}
        self.validators = {}

    def root(self, path):
        if path not in self.roots:
            with open(path, "rb") as file:
                text = file.read()
            schema = json.loads(text)
            check_once(schema, text)
            self.roots[path] = schema
        return self.roots[path]

    def validator(self, path, ref):
        key = (path, ref)
        if key not in self.validators:
            root = self.root(path)
            schema = root if ref is None else self.definition(root, ref)
            self.validators[key] = Draft202012Validator(schema)
        return self.validators[key]

    @staticmethod
    def definition(root, ref):
        """The sub-schema "#/$defs/NAME" names, with the root's $defs so its own refs resolve."""
        prefix = "#/$defs/"
        name = ref[len(prefix):] if ref.startswith(prefix) else None
        if name is None or name not in root.get("$defs", {}):
            raise LookupError(f"reference {ref} names no entry of $defs")
        schema = dict(root["$defs"][name])
        schema["$defs"] = root["$defs"]
        schema["$schema"] = root.get("$schema", "https://json-schema.org/draft/2020-12/schema")
        return schema


def answer(schemas, request):
    path = request["schema"]
    try:
        if "instance" not in request:
            schemas.root(path)
            return {"errors": []}
        validator = schemas.validator(path, request.get("ref"))
    except (OSError, ValueError, LookupError) as error:
        return {"schema_error": f"{path}: {error}"}
    except SchemaError as error:
        return {"schema_error": f"{path}: not a JSON Schema: at {pointer(error.path)}: {error.message}"}
    errors = sorted(validator.iter_errors(request["instance"]), key=lambda e: place(e.path))
    # A type stated both at a use site and in the definition it refers to fails twice: say it once.
    return {"errors": list(dict.fromkeys(f"{pointer(e.path)}: {e.message}" for e in errors))}


def main():
    schemas = Schemas()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = answer(schemas, json.loads(line))
        except (ValueError, KeyError, TypeError) as error:
            reply = {"schema_error": f"bad request: {error}"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()

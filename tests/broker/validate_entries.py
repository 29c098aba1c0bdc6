#!/usr/bin/env python3
"""Validates queue entries against broker/queue_entry.schema.json.

usage: validate_entries.py SCHEMA ENTRIES
ENTRIES holds one entry a line. Prints one line per entry, "ok" or
"invalid: <first error>", and exits 0; exits 3 when python3-jsonschema is
missing and 2 when the schema itself is not a valid draft 2020-12 schema.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is missing: apt-get install python3-jsonschema"
          " (scripts/test installs it)", file=sys.stderr)
    sys.exit(3)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        print(f"the schema is not valid: {e.message}", file=sys.stderr)
        sys.exit(2)
    validator = jsonschema.Draft202012Validator(schema)
    with open(sys.argv[2], encoding="utf-8") as f:
        for line in f:
            errors = sorted(validator.iter_errors(json.loads(line)), key=str)
            print("ok" if not errors else "invalid: " + errors[0].message)


main()

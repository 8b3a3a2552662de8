"""Validates JSON instances against a JSON Schema (draft 4) with the reference Python implementation.

Reads {"schema": {...}, "instances": [...]} on stdin and writes one entry per instance on stdout:
null when it is valid, else the first error as "<path>: <message>". The infra tests use it to hold
the documents put in the EventBridge schema registry against what the poller really publishes,
with a validator that shares no code with the subscriber kit's.
"""

import json
import sys

from jsonschema import Draft4Validator


def first_error(validator, instance):
    errors = sorted(validator.iter_errors(instance), key=lambda error: list(error.absolute_path))
    if not errors:
        return None
    error = errors[0]
    path = "/".join(str(part) for part in error.absolute_path)
    return f"{path}: {error.message}"


def main():
    request = json.load(sys.stdin)
    Draft4Validator.check_schema(request["schema"])
    validator = Draft4Validator(request["schema"])
    json.dump([first_error(validator, instance) for instance in request["instances"]], sys.stdout)


if __name__ == "__main__":
    main()

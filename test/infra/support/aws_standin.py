"""A stand-in for the AWS CLI, for test/infra/runbook.test.ts.

Does what the CLI does before and after the network, with canned answers in between:

- builds the request from the options and `--cli-input-json`, and validates it against botocore's
  service model as the CLI does before sending (so a `null` copied into `--cli-input-json` fails
  here exactly as it fails there: "Invalid type for parameter Description, value: None");
- answers from the JSON file named by AWS_STANDIN_ANSWERS:
  `{"<service> <command>": {"expect": {<param>: <value>}, "response": {...}}}`; a request whose
  params differ from `expect` fails like a missing resource; a command not listed answers `{}`;
- applies `--query` with the JMESPath library the CLI uses, and prints as `--output` says.

Needs botocore and jmespath, which moto (required by the infra tests) brings.
"""

import json
import os
import sys

import jmespath
from botocore import xform_name
from botocore.exceptions import ParamValidationError
from botocore.loaders import Loader
from botocore.model import ServiceModel
from botocore.validate import validate_parameters

# Options the CLI handles itself rather than passing to the operation.
GLOBAL_OPTIONS = {"query", "output", "region", "profile", "endpoint-url", "cli-input-json"}


def fail(message: str, code: int) -> None:
    print(message, file=sys.stderr)
    sys.exit(code)


def read_value(raw: str) -> str:
    if raw.startswith("file://"):
        with open(raw[len("file://") :], encoding="utf-8") as handle:
            return handle.read()
    return raw


def parse_options(args: list[str]) -> dict[str, object]:
    options: dict[str, object] = {}
    index = 0
    while index < len(args):
        name = args[index]
        if not name.startswith("--"):
            fail(f"Unknown options: {name}", 252)
        has_value = index + 1 < len(args) and not args[index + 1].startswith("--")
        options[name[2:]] = args[index + 1] if has_value else True
        index += 2 if has_value else 1
    return options


def to_param(shape, raw: object) -> object:
    if raw is True:
        return True
    text = read_value(str(raw))
    if shape.type_name in ("structure", "list", "map"):
        return json.loads(text)
    if shape.type_name in ("integer", "long"):
        return int(text)
    if shape.type_name == "boolean":
        return text.lower() == "true"
    return text


def format_text(value: object) -> str:
    if value is None:
        return "None"
    if isinstance(value, list) and all(not isinstance(item, (dict, list)) for item in value):
        return "\t".join(format_text(item) for item in value)
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        fail("usage: aws <service> <command> [options]", 252)
    service_name, command, *rest = argv
    # The model alone: botocore.session would import the whole client stack for nothing.
    model = ServiceModel(Loader().load_service_model(service_name, "service-2"), service_name)
    operations = {xform_name(name, "-"): name for name in model.operation_names}
    if command not in operations:
        fail(f"aws: error: argument operation: Invalid choice: {command}", 252)
    operation = model.operation_model(operations[command])
    members = {xform_name(name, "-"): name for name in operation.input_shape.members}

    options = parse_options(rest)
    params: dict[str, object] = {}
    if "cli-input-json" in options:
        params.update(json.loads(read_value(str(options["cli-input-json"]))))
    for option, raw in options.items():
        if option in GLOBAL_OPTIONS:
            continue
        if option not in members:
            fail(f"Unknown options: --{option}", 252)
        member = members[option]
        params[member] = to_param(operation.input_shape.members[member], raw)
    try:
        validate_parameters(params, operation.input_shape)
    except ParamValidationError as error:
        fail(f"\n{error}", 252)

    answers_path = os.environ.get("AWS_STANDIN_ANSWERS")
    answers = {}
    if answers_path:
        with open(answers_path, encoding="utf-8") as handle:
            answers = json.load(handle)
    answer = answers.get(f"{service_name} {command}", {"response": {}})
    for param, expected in answer.get("expect", {}).items():
        if params.get(param) != expected:
            fail(
                f"An error occurred (ResourceNotFoundException) when calling the {operation.name} "
                f"operation: {param} {params.get(param)!r} does not exist (expected {expected!r})",
                254,
            )

    result = answer.get("response", {})
    if "query" in options:
        result = jmespath.search(str(options["query"]), result)
    if options.get("output") == "text":
        print(format_text(result))
    else:
        print(json.dumps(result, indent=4))


if __name__ == "__main__":
    main(sys.argv[1:])

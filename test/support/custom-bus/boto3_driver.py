"""Drives the custom-bus stand-in through boto3's real `eventbridgev2` client, for the conformance test.

One JSON request per stdin line, one JSON answer per stdout line:
  {"id": 1, "call": "put_events", "args": {...}, "client": "default" | "wrong-secret"}
  {"id": 2, "waiter": "event_bus_active", "args": {...}}
  {"id": 3, "validate": [{"operation": "PutEvents", "kind": "input" | "output", "value": {...}}]}
Answers: {"id": 1, "ok": <parsed response>} or {"id": 1, "error": {"code", "message", "status"}};
validation answers {"id": 3, "ok": ["<report>", ...]} (empty strings for valid values).
Timestamps travel as {"$timestamp": <epoch seconds>} both ways.

Environment: CUSTOM_BUS_ENDPOINT, AWS_REGION. Run with PYTHONPATH at a boto3 that has eventbridgev2.
"""

import datetime
import json
import os
import sys

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError, WaiterError
from botocore.validate import ParamValidator

REGION = os.environ.get("AWS_REGION", "us-east-1")


def make_client(secret, validate=True):
    return boto3.client(
        "eventbridgev2",
        endpoint_url=os.environ["CUSTOM_BUS_ENDPOINT"],
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key=secret,
        # No retries: a throttled or refused request is what the test wants to see.
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, parameter_validation=validate),
    )


CLIENTS = {
    "default": make_client("testing"),
    "wrong-secret": make_client("not-the-secret"),
    # Sends what botocore's own validation would stop: the stand-in must refuse it itself.
    "unvalidated": make_client("testing", validate=False),
}


def from_wire(value):
    if isinstance(value, dict):
        if set(value) == {"$timestamp"}:
            return datetime.datetime.fromtimestamp(value["$timestamp"], tz=datetime.timezone.utc)
        return {key: from_wire(member) for key, member in value.items()}
    if isinstance(value, list):
        return [from_wire(member) for member in value]
    return value


def to_wire(value):
    if isinstance(value, datetime.datetime):
        return {"$timestamp": value.timestamp()}
    if isinstance(value, dict):
        return {key: to_wire(member) for key, member in value.items() if key != "ResponseMetadata"}
    if isinstance(value, list):
        return [to_wire(member) for member in value]
    return value


def validate(items):
    model = CLIENTS["default"].meta.service_model
    reports = []
    for item in items:
        operation = model.operation_model(item["operation"])
        shape = operation.input_shape if item["kind"] == "input" else operation.output_shape
        report = ParamValidator().validate(from_wire(item["value"]), shape)
        reports.append(report.generate_report() if report.has_errors() else "")
    return reports


def handle(request):
    if "validate" in request:
        return {"ok": validate(request["validate"])}
    client = CLIENTS[request.get("client", "default")]
    args = from_wire(request.get("args", {}))
    try:
        if "waiter" in request:
            client.get_waiter(request["waiter"]).wait(**args)
            return {"ok": {}}
        return {"ok": to_wire(getattr(client, request["call"])(**args))}
    except ClientError as error:
        return {
            "error": {
                "code": error.response["Error"]["Code"],
                "message": error.response["Error"].get("Message", ""),
                "status": error.response.get("ResponseMetadata", {}).get("HTTPStatusCode"),
            }
        }
    except WaiterError as error:
        return {"error": {"code": "WaiterError", "message": str(error), "status": None}}


def main():
    print(json.dumps({"ready": botocore.__version__}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = handle(request)
        except Exception as error:  # a driver bug answers, rather than hanging the test
            answer = {"error": {"code": "DriverError", "message": repr(error), "status": None}}
        answer["id"] = request["id"]
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()

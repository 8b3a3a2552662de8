"""Captures the exact CBOR bodies boto3's eventbridgev2 client sends for the PutEvents inputs in
test/fixtures/eventbridgev2/put-events-cases.json, and encodes each case's answer with botocore's
own CBOR serializer, so a unit test can hold our encoder to boto3's bytes, byte for byte, and our
decoder to botocore's encoding.

Run it with a Python that has boto3/botocore 1.43.107 (the first with eventbridgev2):

    python3 -m venv /tmp/ebv2 && /tmp/ebv2/bin/pip install boto3==1.43.107
    /tmp/ebv2/bin/python scripts/capture-eventbridgev2-golden.py

Nothing leaves the machine: a `before-send` hook records each request body and answers itself.
It writes <case>.request.cbor and <case>.response.cbor beside the cases file and checks that
botocore parses each answer back to the case's results. A Detail written "LONG:<n>" stands for
<n> characters of JSON text (the same expansion as the test's), so the cases file stays small.
Members are given in the service model's order, which is the order boto3 writes them in (it
follows the input dict) and the order our encoder writes them in.
"""

import datetime
import json
import pathlib
import sys

import boto3
import botocore
from botocore.awsrequest import AWSResponse
from botocore.serialize import RpcV2CBORSerializer

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / 'test' / 'fixtures' / 'eventbridgev2'
EXPECTED_BOTOCORE = '1.43.107'


def long_detail(length):
    """{"pad":"xxx…"} of exactly `length` characters (as the unit test builds it)."""
    return '{"pad":"' + 'x' * (length - 10) + '"}'


def detail_of(text):
    return long_detail(int(text[5:])) if text.startswith('LONG:') else text


def time_of(iso):
    return datetime.datetime.fromisoformat(iso.replace('Z', '+00:00'))


def entry_params(entry):
    params = {'Source': entry['Source'], 'DetailType': entry['DetailType'], 'Detail': detail_of(entry['Detail'])}
    if 'Time' in entry:
        params['Time'] = time_of(entry['Time'])
    if 'SystemMetadata' in entry:
        params['SystemMetadata'] = dict(entry['SystemMetadata'])
    return params


class _Raw:
    def __init__(self, body):
        self._body = body

    def stream(self, **_kwargs):
        yield self._body


def main():
    if botocore.__version__ != EXPECTED_BOTOCORE:
        sys.exit(f'botocore {botocore.__version__}: expected {EXPECTED_BOTOCORE} (see the header)')
    cases = json.loads((FIXTURES / 'put-events-cases.json').read_text(encoding='utf-8'))['cases']
    client = boto3.client(
        'eventbridgev2',
        region_name='eu-west-1',
        endpoint_url='https://eventsv2.invalid',
        aws_access_key_id='AKIDEXAMPLE',
        aws_secret_access_key='secret',
    )
    model = client.meta.service_model.operation_model('PutEvents')
    serializer = RpcV2CBORSerializer()
    for case in cases:
        response = {'FailedEntryCount': sum(1 for r in case['results'] if 'ErrorCode' in r), 'Entries': case['results']}
        answer = bytearray()
        serializer._serialize_data_item(answer, response, model.output_shape)
        answer = bytes(answer)
        sent = {}

        def respond(request, **_kwargs):
            sent['body'] = bytes(request.body)
            sent['url'] = request.url
            return AWSResponse(
                request.url,
                200,
                {'content-type': 'application/cbor', 'smithy-protocol': 'rpc-v2-cbor'},
                _Raw(answer),
            )

        client.meta.events.register('before-send.eventbridgev2.PutEvents', respond)
        try:
            parsed = client.put_events(
                EventBusArn=case['eventBusArn'], Entries=[entry_params(e) for e in case['entries']]
            )
        finally:
            client.meta.events.unregister('before-send.eventbridgev2.PutEvents', respond)
        assert sent['url'].endswith('/service/AWSEventsV2/operation/PutEvents'), sent['url']
        parsed.pop('ResponseMetadata', None)
        assert parsed == response, (parsed, response)
        (FIXTURES / f"{case['name']}.request.cbor").write_bytes(sent['body'])
        (FIXTURES / f"{case['name']}.response.cbor").write_bytes(answer)
        print(f"{case['name']}: request {len(sent['body'])} bytes, response {len(answer)} bytes")


if __name__ == '__main__':
    main()

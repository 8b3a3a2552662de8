"""Starts moto's server on loopback for the integration and infra tests.

Usage: python3 moto_launcher.py [--port N] [--no-jsonpath-cache]

Three patches make moto behave as the services do where the tests depend on it: JSONPath parsing
memoized (speed, below), DynamoDB item writes serialized (conditional writes atomic, as in
DynamoDB) and `account` in the events EventBridge delivers to targets.

Prints one line `MOTO_READY http://127.0.0.1:<port>` on stdout once the server listens, then runs
until stdin closes (the parent test process went away, even if it was killed) or SIGTERM/SIGINT.
Port 0 (the default) lets the OS pick a free port, so two test runs never race for one.

Why the JSONPath cache: moto 5.2 delivers each event to each matching rule target through
`moto.events.utils.EventTemplateParser.parse`, which does `from jsonpath_ng.ext import parse` and
then builds a brand-new PLY parser for each of its 8 default input paths, for every delivered
event. Building that parser dominates EventBridge -> SQS delivery time. JSONPath objects are
immutable once parsed (`find` has no side effects), so memoizing `parse` by its arguments is safe.
The import sites in moto 5.2.1 are:
  - moto/events/utils.py           `from jsonpath_ng.ext import parse` inside the function: it
                                   reads the module attribute on every call, so patching
                                   `jsonpath_ng.ext.parse` is enough;
  - moto/stepfunctions/parser/asl/utils/json_path.py  module-level `from jsonpath_ng.ext import
                                   parse`: patched too because moto imports it lazily, after us;
  - moto/stepfunctions/.../result_path.py  `from jsonpath_ng import parse` (the non-ext parser,
                                   cheap and unrelated to EventBridge): left alone.
"""

from __future__ import annotations

import argparse
import functools
import logging
import signal
import sys
import threading


def memoize_jsonpath() -> None:
    import jsonpath_ng.ext
    import jsonpath_ng.ext.parser

    original = jsonpath_ng.ext.parser.parse
    cached = functools.lru_cache(maxsize=512)(original)
    jsonpath_ng.ext.parse = cached
    jsonpath_ng.ext.parser.parse = cached


def deliver_account_to_targets() -> None:
    """EventBridge delivers every event to its targets with its `account`; moto 5.2's default input
    template (`EventTemplateParser.DEFAULT_EVENT_INPUT_TEMPLATE`) leaves it out, although its input
    paths map reads `$.account`. Subscribers validate the envelope a real target receives, so the
    template gets the member back, in EventBridge's order."""
    from moto.events.utils import EventTemplateParser

    template = EventTemplateParser.DEFAULT_EVENT_INPUT_TEMPLATE
    if '"account"' not in template:
        EventTemplateParser.DEFAULT_EVENT_INPUT_TEMPLATE = template.replace(
            '"source": "<source>", ', '"source": "<source>", "account": "<account>", '
        )


def serialize_dynamodb_writes() -> None:
    """DynamoDB applies a conditional write atomically per item; moto 5.2 does not (no lock: the
    threaded server checks the condition and writes in separate steps, and a thread switch between
    them lets two "only if free" lease writes both succeed under CPU load). One lock around moto's
    item operations gives tests the service's guarantee."""
    from moto.dynamodb.models import DynamoDBBackend

    lock = threading.RLock()

    def locked(method):
        @functools.wraps(method)
        def call(*args, **kwargs):
            with lock:
                return method(*args, **kwargs)

        return call

    for name in ("get_item", "put_item", "update_item", "delete_item", "batch_write_item", "transact_write_items"):
        if hasattr(DynamoDBBackend, name):
            setattr(DynamoDBBackend, name, locked(getattr(DynamoDBBackend, name)))


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--port", type=int, default=0)
    args.add_argument("--no-jsonpath-cache", action="store_true", help="for benchmarking only")
    options = args.parse_args()

    if not options.no_jsonpath_cache:
        memoize_jsonpath()
    serialize_dynamodb_writes()
    deliver_account_to_targets()

    # werkzeug logs every request to stderr; the parent drains it, but there is no need for it.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)

    # Imported after the patch so any module-level `from jsonpath_ng.ext import parse` sees it.
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=options.port, verbose=False)
    server.start()
    host, port = server.get_host_and_port()

    stop = threading.Event()

    def wait_for_stdin_eof() -> None:
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except (OSError, ValueError):
            pass
        stop.set()

    threading.Thread(target=wait_for_stdin_eof, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    print(f"MOTO_READY http://{host}:{port}", flush=True)
    # A timeout keeps the main thread responsive to signals on every platform.
    while not stop.wait(timeout=0.5):
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

/**
 * A core that knows nothing of AWS by meaning, not only by import (`source-shape.test.ts` checks
 * imports): the publisher classifies its own failures and states its own limits, and the core
 * decides by those words alone. So the core's code (comments aside) names no AWS error code (any
 * `…Exception`, any name the AWS adapters classify, the adapters' `awsError`), matches none with
 * a pattern, names no AWS service (a refusal's wording is the adapter's: `BusEntryRules`), and
 * holds none of the bus's byte limits; and its publish path follows whatever limits
 * a publisher states, limits no bus has included. Each static check is also run on a source that
 * breaks it, so that it is known to catch what it looks for.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { BankingEvent } from '../../../functions/core/banking-event.ts';
import { ClaimCheckPublisher } from '../../../functions/core/claim-check-publisher.ts';
import { ConfigurationError } from '../../../functions/core/errors.ts';
import type { ClaimCheckStore } from '../../../functions/core/ports.ts';
import { PublishPipeline } from '../../../functions/core/publish-pipeline.ts';
import { awsErrorNames, awsServiceNames, busByteLimits, parseSource } from '../../support/core-meaning.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import {
  InMemoryPublisher,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
} from '../../support/in-memory-ports.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CORE = path.join(REPO, 'functions/core');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [file] : [];
  });
}

/**
 * Numbers in the core that equal a bus limit by value but mean something else, each with why: the
 * check is by value, so a unit of memory can look like PutEvents' cap.
 */
const NOT_BUS_LIMITS = [
  {
    file: 'functions/core/memory-budget.ts',
    text: '(1024 * 1024)',
    why: 'MiB, the unit of the memory budget',
  },
  {
    file: 'functions/core/memory-budget.ts',
    text: '(256 * 1024)',
    why: "the least of a page's body read at once",
  },
  {
    file: 'functions/core/fleet/memory-share.ts',
    text: '(1024 * 1024)',
    why: "MiB, the unit of a program's part of the memory",
  },
  {
    file: 'functions/core/fleet/memory-share.ts',
    text: '(256 * 1024)',
    why: "the least of a page's body a program of a worker reads at once",
  },
].map((known) => ({
  ...known,
  matches: (hit: string) => hit.startsWith(`${known.file}:`) && hit.endsWith(known.text),
}));

describe('the core, by meaning', () => {
  const core = sourceFiles(CORE).map((file) =>
    parseSource(path.relative(REPO, file), readFileSync(file, 'utf8')),
  );

  it('names no AWS error code, reads no awsError and matches no AWS error name with a pattern', () => {
    expect(core.flatMap(awsErrorNames)).toEqual([]);
  });

  it('names no AWS service in a name, a message or a string', () => {
    expect(core.flatMap(awsServiceNames)).toEqual([]);
  });

  it("holds none of the bus's byte limits", () => {
    const found = core
      .flatMap(busByteLimits)
      .filter((hit) => !NOT_BUS_LIMITS.some((known) => known.matches(hit)));
    expect(found).toEqual([]);
  });

  it('has checks that catch what they look for', () => {
    const broken = parseSource(
      'broken.ts',
      [
        '// ThrottlingException in a comment is fine',
        "const THROTTLE = new Set(['ThrottlingException', 'Throttling']);",
        'const isThrottle = (error: { context: Record<string, unknown> }) => error.context.awsError;',
        'const internal = /internal|unavailable/i;',
        "const message = 'refused (InvalidInputException)';",
        'const MAX_ENTRY = 1_048_576;',
        'const OLD_CAP = 256 * 1024;',
        'const DEFAULT = 1_000_000;',
        '// EventBridge PutEvents in a comment is fine',
        'const reason = `too deep; EventBridge PutEvents processes at most ` + max;',
        "const table = 'checkpoints in DynamoDB';",
        'const putEventsRequests = 0;',
      ].join('\n'),
    );

    expect(awsErrorNames(broken)).toEqual([
      'broken.ts:2 names ThrottlingException',
      'broken.ts:2 names Throttling',
      'broken.ts:3 names awsError',
      'broken.ts:4 matches InternalException with /internal|unavailable/i',
      'broken.ts:5 names InvalidInputException',
    ]);
    expect(busByteLimits(broken)).toEqual([
      'broken.ts:6 holds 1048576 (1_048_576)',
      'broken.ts:7 holds 262144 (256 * 1024)',
      'broken.ts:8 holds 1000000 (1_000_000)',
    ]);
    expect(awsServiceNames(broken)).toEqual([
      'broken.ts:10 names EventBridge',
      'broken.ts:11 names DynamoDB',
      'broken.ts:12 names PutEvents',
    ]);
  });
});

describe("the core's publish path follows the limits its publisher states", () => {
  /** Limits no bus has: 3 entries, 2,000 bytes a request, 800 bytes an entry. */
  const LIMITS = { maxEntriesPerBatch: 3, maxBatchBytes: 2_000, maxEntryBytes: 800 };

  /** An event whose detail is `bytes` long, as `InMemoryPublisher.entrySize` counts it. */
  function sized(sequence: number, bytes: number): BankingEvent {
    const event = makeEvent(sequence);
    const padding = bytes - Buffer.byteLength(JSON.stringify({ ...JSON.parse(event.detail), pad: '' }));
    return { ...event, detail: JSON.stringify({ ...JSON.parse(event.detail), pad: 'x'.repeat(padding) }) };
  }

  it('sends no request with more entries or bytes than stated, and stops at an entry larger than stated', async () => {
    const clock = new FakeClock();
    const publisher = new InMemoryPublisher(LIMITS);
    const pipeline = new PublishPipeline({
      publisher,
      clock,
      metrics: new RecordingMetrics(),
      logger: new RecordingLogger(),
    });
    const sizes = [600, 600, 600, 700, 300, 300, 300, 300, 800, 350, 801, 250];
    const events = sizes.map((bytes, index) => sized(index + 1, bytes));
    expect(events.map((event) => publisher.entrySize(event))).toEqual(sizes);

    const report = await pipeline.publish(events, {
      deadline: clock.now() + 60_000,
      signal: new AbortController().signal,
      onAccepted: () => {},
    });

    const sent = publisher.batches.map((batch) => batch.map((sequence) => sizes[sequence - 1]!));
    expect(sent.every((batch) => batch.length <= LIMITS.maxEntriesPerBatch)).toBe(true);
    expect(sent.every((batch) => batch.reduce((a, b) => a + b, 0) <= LIMITS.maxBatchBytes)).toBe(true);
    expect(publisher.batches.flat()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(report.oversize).toMatchObject({ event: { sequence_number: 11 }, sizeBytes: 801 });
  });

  it('claim-checks an entry larger than stated, and refuses a threshold above it', async () => {
    const stored: string[] = [];
    const store: ClaimCheckStore = {
      put: async (key) => {
        stored.push(key);
        return { bucket: 'b', key };
      },
    };
    const inner = new InMemoryPublisher(LIMITS);
    const deps = { inner, store, metrics: new RecordingMetrics(), logger: new RecordingLogger() };
    const claimCheck = new ClaimCheckPublisher(deps, { maxEntryBytes: 700 });

    const outcomes = await claimCheck.send([sized(1, 700), sized(2, 701)], new AbortController().signal);

    expect(outcomes).toEqual([{ ok: true }, { ok: true }]);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toContain('/2-');
    expect(() => new ClaimCheckPublisher(deps, { maxEntryBytes: 801 })).toThrow(ConfigurationError);
  });
});

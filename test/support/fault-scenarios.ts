/**
 * The fault matrix: every fault the poller must survive, each as a scenario run through the
 * shipped artifact under the runtime-faithful harness (`fault-run.ts`), ending with the no-loss
 * invariant. `npm run test:faults` runs each `runs` times with different seeds (CI runs it after
 * `npm test`). Random choices (how many faults, where a process is killed) are drawn
 * from a PRNG seeded with the run's seed, printed with any failure.
 *
 * The publisher's faults (partial failures, throttling, the claim check, quarantine, crash, kill
 * and lease takeover) run on the Custom Event Bus too (`custom.<id>`, `CUSTOM_BUS_VARIANTS`),
 * through its stand-in: nothing lost as on the classic bus, and beyond it no duplicate at the FIFO
 * queue (every re-send of a run falls within the bus's de-duplication window) and each group in
 * sequence order except where `OrderBroken` says otherwise.
 */

import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { expect } from 'vitest';
import { createRandom, type Random } from '../../functions/simulator/seeded-random.ts';
import { CORRUPTIONS } from './banking-fault-proxy.ts';
import { type BusKind, type FaultEnvironment, FaultRun, type RunReport } from './fault-run.ts';
import { emfDocuments } from './poller-lambda.ts';

export type FaultGroup =
  | 'Upstream'
  | 'EventBridge'
  | 'DynamoDB'
  | 'Concurrency'
  | 'Crash'
  | 'Timeout'
  | 'Bad events'
  | 'Oversize';

/** What one run of a scenario reports for the reliability table. */
export interface ScenarioResult {
  /** Events the bank held at or below the final checkpoint. */
  readonly events: number;
  readonly lost: number;
  readonly duplicates: number;
  /** Custom bus: entries the bus answered `DEDUPLICATED`: the re-sends it dropped. */
  readonly deduplicated?: number;
}

export interface FaultScenario {
  /** Stable id, e.g. `crash.sigkill`. */
  readonly id: string;
  readonly group: FaultGroup;
  /** What is done to the poller, for the report. */
  readonly fault: string;
  /** Runs in the full matrix. */
  readonly runs: number;
  /** The bus the function publishes to. @default 'classic' */
  readonly bus?: BusKind;
  run(environment: FaultEnvironment, seed: number): Promise<ScenarioResult>;
}

/** A scenario whose body runs on either bus; `CUSTOM_BUS_VARIANTS` runs it on the custom one too. */
interface EitherBusScenario extends Omit<FaultScenario, 'run' | 'bus'> {
  run(environment: FaultEnvironment, seed: number, bus?: BusKind): Promise<ScenarioResult>;
}

/**
 * The common ending: caught up, nothing lost, the invariant whole, no credential anywhere; on the
 * custom bus also no duplicate at the queue and each group in order but where OrderBroken says.
 */
function expectNoLoss(report: RunReport, seed: number): ScenarioResult {
  const context = `seed ${seed}; outcomes ${report.outcomes.join(', ')}`;
  expect(report.lost, context).toEqual([]);
  expect(report.violations, context).toEqual([]);
  expect(report.caughtUp, context).toBe(true);
  expect(report.leaks, context).toEqual([]);
  if (report.order !== undefined) {
    expect(report.duplicates, `${context}: duplicates at the FIFO queue`).toBe(0);
    expect(report.order.violations, `${context}: order at the FIFO queue`).toEqual([]);
  }
  return {
    events: report.events,
    lost: report.lost.length,
    duplicates: report.duplicates,
    ...(report.deduplicated === undefined ? {} : { deduplicated: report.deduplicated }),
  };
}

/** Starts a run, hands it to `body`, verifies and closes it whatever happens. */
async function withRun(
  environment: FaultEnvironment,
  seed: number,
  options: Omit<Parameters<typeof FaultRun.start>[1], 'seed'>,
  body: (run: FaultRun, random: Random) => Promise<void>,
  check: (report: RunReport, run: FaultRun) => Promise<void> | void = () => {},
): Promise<ScenarioResult> {
  const run = await FaultRun.start(environment, { ...options, seed });
  try {
    await body(run, createRandom(seed));
    const report = await run.verify();
    await check(report, run);
    return expectNoLoss(report, seed);
  } finally {
    await run.close();
  }
}

/** Sum of one metric over the EMF documents of every invocation of the run. */
function metricSum(run: FaultRun, name: string): number {
  return emfDocuments(run.lambda.output).reduce(
    (total, document) => total + (typeof document[name] === 'number' ? (document[name] as number) : 0),
    0,
  );
}

const SCENARIOS: readonly EitherBusScenario[] = [
  {
    id: 'upstream.5xx-storm',
    group: 'Upstream',
    fault: 'GET /events answers a storm of 500/502/503 (5 to 15 in a row, several bursts)',
    runs: 3,
    run: (environment, seed) =>
      withRun(environment, seed, { events: 60 }, async (run, random) => {
        for (let burst = 0; burst < 3; burst += 1) {
          run.simulator.faults.failNext(random.int(5, 15), [500, 502, 503][random.int(0, 2)]!, {
            path: '/events',
          });
        }
        await run.untilCaughtUp({ maxInvocations: 8 });
      }),
  },
  {
    id: 'upstream.429-retry-after',
    group: 'Upstream',
    fault: '429 storm with Retry-After: 1 (3 in a row), then without Retry-After (8 in a row)',
    runs: 2,
    run: (environment, seed) =>
      withRun(environment, seed, { events: 40 }, async (run) => {
        run.simulator.faults.failNext(3, 429, { path: '/events', retryAfter: '1' });
        run.simulator.faults.failNext(8, 429, { path: '/events' });
        await run.untilCaughtUp({ maxInvocations: 8 });
      }),
  },
  {
    id: 'upstream.reset-mid-body',
    group: 'Upstream',
    fault: 'connection reset in the middle of a poll body (1 to 4 answers)',
    runs: 3,
    run: (environment, seed) =>
      withRun(environment, seed, { events: 60 }, async (run, random) => {
        run.banking.resetMidBody(random.int(1, 4));
        await run.untilCaughtUp();
      }),
  },
  {
    id: 'upstream.hang-past-budget',
    group: 'Upstream',
    fault: 'a poll that hangs past the budget: no answer at all, then an answer that stops mid-body',
    runs: 2,
    run: (environment, seed) =>
      withRun(environment, seed, { events: 30 }, async (run) => {
        run.simulator.faults.delayNext(2, 120_000);
        run.banking.hangMidBody(1);
        await run.untilCaughtUp();
      }),
  },
  {
    id: 'upstream.malformed-json',
    group: 'Upstream',
    fault: 'a poll body cut in half (not JSON), and one whose data is not an array',
    runs: 2,
    run: (environment, seed) =>
      withRun(
        environment,
        seed,
        { events: 30 },
        async (run) => {
          run.simulator.faults.malformedNext(1, 'not-json');
          run.simulator.faults.malformedNext(1, 'bad-schema');
          await run.untilCaughtUp();
        },
        (report, run) => {
          // The page is refused as a whole (the checkpoint stays), named; the next run delivers it.
          expect(run.invocations.some((i) => i.outcome.kind === 'error')).toBe(true);
          expect(report.outcomes.at(-1)).toBe('response');
        },
      ),
  },
  {
    id: 'upstream.repeated-events',
    group: 'Upstream',
    fault: 'pages that carry events already delivered again (re-sends of 3 to 6 old events)',
    runs: 2,
    run: (environment, seed) =>
      withRun(
        environment,
        seed,
        { events: 30 },
        async (run, random) => {
          await run.untilCaughtUp();
          for (let i = random.int(3, 6); i > 0; i -= 1) run.simulator.resend(random.int(1, 30));
          run.simulator.generate(10);
          await run.untilCaughtUp();
        },
        (report) => expect(report.duplicates).toBe(0),
      ),
  },
  {
    id: 'upstream.reused-id',
    group: 'Upstream',
    fault: "the bank reuses an earlier event's id at a new sequence number (2 to 4 times), within minutes",
    runs: 1,
    run: (environment, seed, bus) =>
      withRun(environment, seed, { events: 20, bus }, async (run, random) => {
        await run.untilCaughtUp();
        const earlier = run.simulator.events();
        for (let i = random.int(2, 4); i > 0; i -= 1) {
          const reused = earlier[random.int(0, earlier.length - 1)]!;
          // A distinct event under an old id: on the custom bus it must not be taken for a re-send.
          run.simulator.append({
            id: reused.id,
            type: 'account_status',
            data: { account_id: `reused-${i}`, status: 'OPEN' },
          });
        }
        run.simulator.generate(5);
        // The invariant names events by id and number: a reused id not delivered is reported lost.
        await run.untilCaughtUp();
      }),
  },
  {
    id: 'upstream.sequence-backwards',
    group: 'Upstream',
    fault: 'a page that goes back to events already delivered, and pages in descending order',
    runs: 2,
    run: (environment, seed) =>
      withRun(
        environment,
        seed,
        { events: 80 },
        async (run) => {
          run.banking.reverseNext(2);
          let polls = 0;
          run.banking.onRequest((path) => {
            polls += path === '/events' ? 1 : 0;
            if (polls === 3) run.banking.repeatPrevious(1);
          });
          await run.untilCaughtUp();
        },
        (report) => expect(report.duplicates).toBe(0),
      ),
  },
  {
    id: 'upstream.token-revoked',
    group: 'Upstream',
    fault: 'every token revoked in the middle of a run (after the 2nd or 3rd poll)',
    runs: 2,
    run: (environment, seed) =>
      withRun(environment, seed, { events: 60 }, async (run, random) => {
        const at = random.int(2, 3);
        let polls = 0;
        run.banking.onRequest((path) => {
          if (path === '/events' && ++polls === at) run.simulator.faults.revokeTokens();
        });
        await run.untilCaughtUp();
        expect(run.simulator.requests.some((r) => r.path === '/events' && r.status === 401)).toBe(true);
      }),
  },
  {
    id: 'upstream.redirect',
    group: 'Upstream',
    fault:
      'GET /events answers 302 to another host (1 to 3 times): not followed, the bearer token stays home',
    runs: 2,
    run: (environment, seed) =>
      withRun(environment, seed, { events: 30 }, async (run, random) => {
        // "Another host": a listener of our own, which records whatever reaches it.
        const elsewhere: IncomingHttpHeaders[] = [];
        const other = createServer((req, res) => {
          elsewhere.push(req.headers);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
        });
        await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
        try {
          const { port } = other.address() as AddressInfo;
          run.banking.redirectNext(random.int(1, 3), `http://127.0.0.1:${port}/events`);
          await run.untilCaughtUp({ maxInvocations: 6 });
          expect(elsewhere, `seed ${seed}: requests that followed the redirect`).toEqual([]);
          expect(run.invocations[0]!.outcome).toMatchObject({
            kind: 'error',
            errorMessage: expect.stringContaining('302'),
          });
        } finally {
          await new Promise<void>((resolve) => other.close(() => resolve()));
        }
      }),
  },
  {
    id: 'upstream.wrong-credentials',
    group: 'Upstream',
    fault: 'a client secret the token endpoint refuses: a clear error, no retry storm',
    runs: 1,
    run: async (environment, seed) => {
      const run = await FaultRun.start(environment, { seed, events: 10, clientSecret: 'not-the-secret' });
      try {
        const invocation = await run.invoke();
        const tokenRequests = run.simulator.requests.filter((r) => r.path === '/oauth2/token').length;
        expect(invocation.outcome).toMatchObject({
          kind: 'error',
          errorType: 'AuthenticationError',
          errorMessage: expect.stringMatching(
            /refused the client credentials with HTTP 401.*check client_id/,
          ),
        });
        // One request, and one more after re-reading the secret: no storm.
        expect(tokenRequests).toBeLessThanOrEqual(2);
        expect(run.simulator.stats.pollRequests).toBe(0);
        const report = await run.verify();
        expect(report.delivered).toEqual([]);
        expect(report.finalCheckpoint).toBeNull();
        expect(report.leaks).toEqual([]);
        return { events: 0, lost: report.lost.length, duplicates: report.duplicates };
      } finally {
        await run.close();
      }
    },
  },
  {
    id: 'eventbridge.partial-failure',
    group: 'EventBridge',
    fault:
      'PutEvents answers FailedEntryCount > 0 (InternalFailure on every 2nd to 4th entry, 3 to 6 requests)',
    runs: 3,
    run: (environment, seed, bus) =>
      withRun(environment, seed, { events: 60, bus }, async (run, random) => {
        run.aws.rejectEntries(random.int(3, 6), { every: random.int(2, 4), errorCode: 'InternalFailure' });
        await run.untilCaughtUp();
        expect(metricSum(run, 'FailedEntries')).toBeGreaterThan(0);
      }),
  },
  {
    id: 'eventbridge.throttling',
    group: 'EventBridge',
    fault: 'whole PutEvents requests refused with ThrottlingException (4 to 8 in a row)',
    runs: 2,
    run: (environment, seed, bus) =>
      withRun(environment, seed, { events: 40, bus }, async (run, random) => {
        // The classic bus answers its throttling with 400, the custom bus with 429 (its model).
        run.aws.refuseRequests(random.int(4, 8), {
          status: bus === 'custom' ? 429 : 400,
          errorType: 'ThrottlingException',
        });
        await run.untilCaughtUp();
      }),
  },
  {
    id: 'eventbridge.5xx',
    group: 'EventBridge',
    fault: 'whole PutEvents requests refused with 500 InternalException and 503 ServiceUnavailable',
    runs: 2,
    run: (environment, seed) =>
      withRun(environment, seed, { events: 40 }, async (run, random) => {
        run.aws.refuseRequests(random.int(2, 5), { status: 500, errorType: 'InternalException' });
        run.aws.refuseRequests(random.int(2, 5), { status: 503, errorType: 'ServiceUnavailable' });
        await run.untilCaughtUp();
      }),
  },
  {
    id: 'dynamodb.lease-taken-over',
    group: 'DynamoDB',
    fault: "another invocation takes the lease over mid-run: the loser's next commit fails its condition",
    runs: 3,
    run: (environment, seed, bus) =>
      withRun(environment, seed, { events: 120, bus }, async (run, random) => {
        const takeoverAt = random.int(1, 2);
        let commits = 0;
        run.aws.intercept(async (call): Promise<'forward' | 'drop'> => {
          if (call.checkpoint === undefined || ++commits !== takeoverAt) return 'forward';
          // The rival's conditional write: it holds the lease for a moment, then lets it expire.
          await environment.aws.dynamodb.send(
            new UpdateItemCommand({
              TableName: environment.checkpointTable,
              Key: { pk: { S: `program#${run.program}` } },
              UpdateExpression: 'SET lease_owner = :rival, lease_expires_at = :expires',
              ExpressionAttributeValues: {
                ':rival': { S: 'rival-invocation' },
                ':expires': { N: String(Date.now() + 1_000) },
              },
            }),
          );
          run.aws.mark('lease taken over');
          return 'forward';
        });
        const loser = await run.invoke();
        expect(loser.outcome, `seed ${seed}`).toMatchObject({ kind: 'error', errorType: 'LeaseLostError' });
        // Stopped at once: no PutEvents started once the refusal was known, beyond the ones
        // already on their way (at most PUBLISH_CONCURRENCY, 8).
        const refused = run.aws.timeline.findIndex((entry) => entry.kind === 'commit-refused');
        const loserEnded = run.aws.timeline.findIndex(
          (entry) => entry.kind === 'mark' && entry.label.startsWith('invocation ended'),
        );
        const sentAfter = run.aws.timeline
          .slice(refused, loserEnded)
          .filter((entry) => entry.kind === 'put-events-requested').length;
        expect(refused, `seed ${seed}`).toBeGreaterThan(0);
        expect(sentAfter, `seed ${seed}`).toBeLessThanOrEqual(8);
        await run.untilCaughtUp();
      }),
  },
  {
    id: 'dynamodb.throttling',
    group: 'DynamoDB',
    fault:
      'UpdateItem (lease and checkpoint writes) refused with ProvisionedThroughputExceededException, 2 to 8 in a row',
    runs: 3,
    run: (environment, seed) =>
      withRun(environment, seed, { events: 60 }, async (run, random) => {
        run.aws.refuseDynamoDb(random.int(2, 8), { operation: 'UpdateItem' });
        await run.untilCaughtUp({ maxInvocations: 8 });
      }),
  },
  {
    id: 'concurrency.simultaneous',
    group: 'Concurrency',
    fault: 'three to five invocations in separate execution environments at the same moment',
    runs: 3,
    run: (environment, seed) =>
      // Several cold starts at once on two cores: a budget that CPU contention cannot eat up.
      withRun(environment, seed, { events: 50, timeoutMs: 12_000 }, async (run, random) => {
        const containers = Array.from({ length: random.int(3, 5) }, () => run.spawnContainer());
        const invocations = await Promise.all(containers.map((container) => run.invoke(container)));
        const summaries = invocations.map((invocation) => FaultRun.summary(invocation));
        const pollers = summaries.filter((summary) => summary?.status === 'completed');
        const outcomes = `seed ${seed}: ${JSON.stringify(invocations.map((i) => i.outcome))}`;
        expect(pollers, outcomes).toHaveLength(1);
        expect(
          summaries.filter((summary) => summary?.status === 'lease-busy'),
          outcomes,
        ).toHaveLength(containers.length - 1);
        // Only the winner polled: every GET /events the bank saw was one of its polls.
        expect(run.banking.pollRequests).toBe(pollers[0]!.polls + pollers[0]!.pollErrors);
        await run.untilCaughtUp();
      }),
  },
  {
    id: 'crash.sigkill',
    group: 'Crash',
    fault:
      'the process killed (SIGKILL) at a seeded point: during a poll, between PutEvents calls, or between a PutEvents and the commit',
    runs: 9,
    run: (environment, seed, bus) =>
      withRun(environment, seed, { events: 0, bus }, async (run, random) => {
        const events = random.int(40, 90);
        run.simulator.generate(events);
        const point = (['during-poll', 'between-putevents', 'before-commit'] as const)[seed % 3]!;
        // The custom bus takes a page of 25 in one request (the classic bus 10): fewer requests.
        const requests = bus === 'custom' ? Math.ceil(events / 25) : 5;
        const at =
          point === 'during-poll'
            ? random.int(1, 2)
            : point === 'between-putevents'
              ? random.int(2, requests)
              : 1;
        let seen = 0;
        let killed = false;
        const kill = async () => {
          killed = true;
          run.aws.mark(`SIGKILL ${point}`);
          await run.lambda.kill('SIGKILL');
        };
        if (point === 'during-poll') {
          run.banking.onRequest(async (path) => {
            if (path === '/events' && ++seen === at && !killed) await kill();
          });
        } else {
          run.aws.intercept(async (call): Promise<'forward' | 'drop'> => {
            const matches =
              point === 'between-putevents' ? call.operation === 'PutEvents' : call.checkpoint !== undefined;
            if (!matches || killed || ++seen !== at) return 'forward';
            await kill();
            return 'drop';
          });
        }
        const crashed = await run.invoke();
        expect(killed, `seed ${seed}: the kill point ${point} #${at} was reached`).toBe(true);
        expect(crashed.outcome).toMatchObject({ kind: 'crash', signal: 'SIGKILL' });
        await run.untilCaughtUp();
      }),
  },
  {
    id: 'timeout.killed-at-budget',
    group: 'Timeout',
    fault:
      'the invocation ends at its timeout with PutEvents in flight (process frozen, killed by the runtime at the budget)',
    runs: 3,
    run: (environment, seed, bus) =>
      withRun(environment, seed, { events: 60, bus }, async (run, random) => {
        // 60 events: 6 PutEvents on the classic bus, 3 on the custom bus (a page of 25 in each).
        const at = random.int(1, bus === 'custom' ? 3 : 4);
        let seen = 0;
        run.aws.intercept((call) => {
          if (call.operation === 'PutEvents' && ++seen === at && run.lambda.pid !== undefined) {
            // Frozen with the request on the wire: only the runtime's timeout ends it.
            process.kill(run.lambda.pid, 'SIGSTOP');
          }
          return 'forward';
        });
        const timedOut = await run.invoke();
        expect(timedOut.outcome.kind).toBe('timeout');
        const { leaseOwner } = await run.item();
        // The dead invocation's lease is still there; it frees itself at its expiry.
        expect(leaseOwner?.startsWith(`${timedOut.requestId}#`)).toBe(true);
        await run.untilCaughtUp();
      }),
  },
  {
    id: 'bad-events.quarantine',
    group: 'Bad events',
    fault:
      'events missing id, sequence_number or type, or with a field of the wrong type, or not an object (3 to 7 per run)',
    runs: 3,
    run: (environment, seed, bus) => {
      let broken = 0;
      return withRun(
        environment,
        seed,
        { events: 70, bus },
        async (run, random) => {
          broken = random.int(3, 7);
          const picked = new Set<number>();
          while (picked.size < broken) picked.add(random.int(1, 70));
          let index = random.int(0, CORRUPTIONS.length - 1);
          for (const sequence of picked) {
            run.banking.corrupt(sequence, CORRUPTIONS[index % CORRUPTIONS.length]!);
            index += 1;
          }
          await run.untilCaughtUp();
        },
        (report, run) => {
          const quarantined = report.delivered.filter((d) => d.detailType === 'invalid_event');
          expect(new Set(quarantined.map((d) => d.detail.fingerprint)).size).toBe(broken);
          for (const { detail } of quarantined) {
            expect(detail).toMatchObject({
              error: { code: 'PAYLOAD_INVALID', message: expect.any(String), field: expect.any(String) },
              raw: expect.anything(),
            });
          }
          expect(metricSum(run, 'InvalidEvents')).toBeGreaterThanOrEqual(broken);
        },
      );
    },
  },
  {
    id: 'oversize.claim-check',
    group: 'Oversize',
    fault:
      'events over MAX_EVENT_ENTRY_BYTES, and events under it that the bus refuses for their size (a bus with a lower cap)',
    runs: 2,
    run: (environment, seed, bus) => {
      const large: string[] = [];
      return withRun(
        environment,
        seed,
        { events: 0, bus, environment: { MAX_EVENT_ENTRY_BYTES: '60000' } },
        async (run, random) => {
          run.aws.limitRequestBytes(30_000);
          for (let i = 0; i < 40; i += 1) {
            if (i === 5 || i === 20 || random.chance(0.1)) {
              // 40 KB: under our limit, over the bus's; 80 KB: over both.
              const size = i === 5 ? 40_000 : i === 20 ? 80_000 : random.chance(0.5) ? 40_000 : 80_000;
              large.push(
                run.simulator.append({
                  type: 'TRANSACTION',
                  data: { transaction_id: `big-${i}`, note: 'x'.repeat(size) },
                }).id,
              );
            } else run.simulator.generate(1);
          }
          await run.untilCaughtUp();
        },
        async (report, run) => {
          const pointers = report.delivered.filter((d) => d.detail.claim_check !== undefined);
          expect(pointers.map((d) => d.detail.id).sort()).toEqual([...new Set(large)].sort());
          for (const { detailType, detail } of pointers) {
            const claim = detail.claim_check as { bucket: string; key: string; sha256: string };
            expect(detailType).toBe('transaction');
            expect(claim.bucket).toBe(run.bucket);
            const object = await environment.s3.send(
              new GetObjectCommand({ Bucket: claim.bucket, Key: claim.key }),
            );
            const body = await object.Body!.transformToString('utf8');
            expect(JSON.parse(body)).toMatchObject({
              id: detail.id,
              sequence_number: detail.sequence_number,
            });
          }
        },
      );
    },
  },
];

/**
 * The scenarios also run on the Custom Event Bus, with their runs there: the publisher's faults.
 * Kept few (each run is a function process or more): the whole addition runs in about a minute.
 */
const CUSTOM_BUS_VARIANTS: ReadonlyArray<{ id: string; runs: number }> = [
  { id: 'eventbridge.partial-failure', runs: 2 },
  { id: 'eventbridge.throttling', runs: 1 },
  { id: 'dynamodb.lease-taken-over', runs: 2 },
  { id: 'crash.sigkill', runs: 3 },
  { id: 'timeout.killed-at-budget', runs: 2 },
  { id: 'bad-events.quarantine', runs: 1 },
  { id: 'oversize.claim-check', runs: 1 },
  { id: 'upstream.reused-id', runs: 1 },
];

function onCustomBus(variant: (typeof CUSTOM_BUS_VARIANTS)[number]): FaultScenario {
  const scenario = SCENARIOS.find((candidate) => candidate.id === variant.id);
  if (scenario === undefined) throw new Error(`No fault scenario ${variant.id}`);
  return {
    id: `custom.${scenario.id}`,
    group: scenario.group,
    fault: `${scenario.fault}, on the custom bus`,
    runs: variant.runs,
    bus: 'custom',
    run: (environment, seed) => scenario.run(environment, seed, 'custom'),
  };
}

export const FAULT_SCENARIOS: readonly FaultScenario[] = [
  ...SCENARIOS,
  ...CUSTOM_BUS_VARIANTS.map(onCustomBus),
];

/**
 * Runs one operator request inside the function, with the secret it already holds: looks an
 * event up, replays a range to its bus, runs the bank checks of `doctor`, or reads the feed for
 * `rewind`. Nothing here takes the lease or writes the checkpoint. The result is plain JSON,
 * every string redacted with the program's client secret before it leaves, and within Lambda's
 * response limit (`operator-answer.ts`: a replay pages by size, a larger answer is stored).
 */
import { checkBank } from '../adapters/banking-http/bank-checks.ts';
import { REDACTED, redact, WITHHELD } from '../adapters/secret-redaction.ts';
import { isUnreadableEvent, OperatorRequestError } from '../core/errors.ts';
import { FeedReader } from '../core/feed-reader.ts';
import type {
  ClaimCheckStore,
  Clock,
  CredentialsProvider,
  CycleLogger,
  EventFeed,
  EventLookup,
  EventPublisher,
} from '../core/ports.ts';
import { PublishPipeline } from '../core/publish-pipeline.ts';
import { type ReplayStep, replayRange } from '../core/range-replay.ts';
import { fastForward } from '../core/start-position.ts';
import { HANDLER_BUS_KINDS } from './bus-kinds.ts';
import { deliverAnswer, type OperatorAnswer, ReplayPage } from './operator-answer.ts';
import type {
  DoctorBankRequest,
  DoctorBankResult,
  EventRequest,
  EventResult,
  FeedLatestRequest,
  FeedLatestResult,
  FeedOldestResult,
  OperatorRequest,
  OperatorResult,
  ReplayRequest,
  ReplayResult,
} from './operator-request.ts';
import type { PollerConfig } from './poller-config.ts';

/** The banking service's feed: polls and single-event lookups. */
export type ProgramFeed = EventFeed & EventLookup;

/** A program's banking service as the function holds it (warm across invocations). */
export interface ProgramUpstream {
  readonly feed: ProgramFeed;
  readonly credentials: CredentialsProvider;
}

export interface OperatorPorts {
  readonly config: PollerConfig;
  /**
   * The secret of `program`: one of the function's own (`config.programSecrets`), else its record's
   * in the programs table, checked to be the deployment's (a program an operator added); `undefined`
   * when the deployment has no such program.
   */
  programSecret(program: string, signal: AbortSignal): Promise<string | undefined>;
  upstream(secretId: string): ProgramUpstream;
  /** A provider that reads the secret afresh: `doctor` checks the secret as it is now. */
  freshCredentials(secretId: string): CredentialsProvider;
  /** The bus without the claim check: replay publishes exactly as the CLI's replay does. */
  readonly bus: EventPublisher;
  readonly clock: Clock;
  readonly logger: CycleLogger;
  /** Epoch ms by which the answer must be on its way (the invocation's deadline less the safety margin). */
  readonly deadline: number;
  /** The claim-check bucket, where an answer too large to return is left. @default none: such an answer says how large it was */
  readonly answers?: ClaimCheckStore;
}

const quiet = { add: () => {} };

/**
 * Runs `request` and returns its JSON-serialisable result.
 *
 * @throws OperatorRequestError when the program is not one of the function's; other errors of the
 *   banking service or the bus (already redacted by their adapters) as thrown.
 */
export async function runOperatorRequest(
  request: OperatorRequest,
  ports: OperatorPorts,
): Promise<OperatorAnswer> {
  const secretId = await ports.programSecret(request.program, budget(ports));
  if (secretId === undefined) {
    throw new OperatorRequestError(
      `Refused operator request: operatorRequest.program "${request.program}" is not one of this function's programs ` +
        `(${[...ports.config.programSecrets.keys()].join(', ')}) nor a record of its programs table; nothing was done`,
      'operatorRequest.program',
    );
  }
  const result =
    request.kind === 'doctor-bank'
      ? await doctorBank(request, secretId, ports)
      : await onFeed(request, ports.upstream(secretId), ports);
  return deliverAnswer(result, { program: request.program, store: ports.answers, signal: budget(ports) });
}

async function onFeed(
  request: Exclude<OperatorRequest, DoctorBankRequest>,
  upstream: ProgramUpstream,
  ports: OperatorPorts,
): Promise<OperatorResult> {
  const result = await runOnFeed(request, upstream.feed, ports);
  return redactStrings(result, await heldSecrets(upstream.credentials));
}

function runOnFeed(
  request: Exclude<OperatorRequest, DoctorBankRequest>,
  feed: ProgramFeed,
  ports: OperatorPorts,
): Promise<OperatorResult> {
  switch (request.kind) {
    case 'event':
      return lookUp(request, feed, ports);
    case 'replay':
      return replay(request, feed, ports);
    case 'feed-latest':
      return feedLatest(request, feed, ports);
    case 'feed-oldest':
      return feedOldest(feed, ports);
  }
}

function budget(ports: OperatorPorts): AbortSignal {
  return AbortSignal.timeout(Math.max(1, ports.deadline - ports.clock.now()));
}

async function lookUp(request: EventRequest, feed: ProgramFeed, ports: OperatorPorts): Promise<EventResult> {
  const signal = budget(ports);
  try {
    const event =
      request.sequence === undefined
        ? await feed.fetchEventById(request.id!, signal)
        : await feed.fetchEventBySequence(request.sequence, signal);
    return event === null ? { kind: 'event', found: false } : { kind: 'event', found: true, event };
  } catch (error) {
    if (isUnreadableEvent(error)) return { kind: 'event', found: 'unreadable', message: error.message };
    throw error;
  }
}

/** Replays chunk by chunk until the range is done or the budget would not cover another poll. */
async function replay(
  request: ReplayRequest,
  feed: ProgramFeed,
  ports: OperatorPorts,
): Promise<ReplayResult> {
  const { clock, config } = ports;
  const pipeline = request.dryRun
    ? undefined
    : new PublishPipeline(
        { publisher: ports.bus, clock, metrics: quiet, logger: ports.logger },
        {
          maxAttempts: config.publishMaxAttempts,
          concurrency: config.publishConcurrency,
          maxRequestsPerSecond: config.maxPutEventsPerSecond,
        },
      );
  const signal = budget(ports);
  // A chunk is one held poll plus lookups and a publish: start one only with a poll's hold to spare.
  const lastStart = ports.deadline - request.holdMs;
  const state = { published: 0, through: request.from - 1, missing: [] as number[], endOfFeed: false };
  const events: ReplayStep['events'][number][] = [];
  const page = new ReplayPage({ kind: 'replay', ...state, eventBus: config.eventBus, events: [] });
  let failure: ReplayResult['failure'];
  try {
    const steps = replayRange(feed, pipeline, {
      from: request.from,
      to: request.to,
      signal,
      pollHoldMs: request.holdMs,
      clock,
    });
    for await (const step of steps) {
      if (step.failure !== undefined) {
        state.published += step.published;
        failure = step.failure;
        break;
      }
      if (step.endOfFeed) {
        state.endOfFeed = true;
        break;
      }
      // What fits of the step, measured before it joins; past a cut, the next request reads (or
      // publishes) the rest again.
      const taken = page.admit(step, request.dryRun);
      state.published += request.dryRun ? taken.events.length : step.published;
      state.missing.push(...taken.missing);
      state.through = taken.through;
      events.push(...taken.events);
      if (taken.full || clock.now() >= lastStart) break;
    }
  } catch (error) {
    // Cut short while reading: the chunk in hand was not published; the CLI asks again from `through`.
    if (!signal.aborted) throw error;
  }
  return {
    kind: 'replay',
    ...state,
    eventBus: config.eventBus,
    ...(request.dryRun ? { events } : {}),
    ...(failure === undefined ? {} : { failure }),
  };
}

async function feedLatest(
  request: FeedLatestRequest,
  feed: ProgramFeed,
  ports: OperatorPorts,
): Promise<FeedLatestResult> {
  const reader = new FeedReader(
    { feed, clock: ports.clock, metrics: quiet, logger: ports.logger },
    { minPollWindowMs: 0, pollBackoff: { baseMs: 500, capMs: 10_000 }, minEmptyPollIntervalMs: 1_000 },
    { deadline: ports.deadline, signal: budget(ports) },
  );
  const landing = await fastForward(reader, {
    from: request.from,
    startedAt: request.startedAt,
    pageLimit: ports.config.pollLimit,
  });
  const { pages, skipped, reached } = landing;
  if (landing.kind === 'landed')
    return {
      kind: 'feed-latest',
      outcome: 'landed',
      reached,
      feedProgramId: landing.feedProgramId,
      pages,
      skipped,
    };
  const lastError = reader.lastError instanceof Error ? reader.lastError.message : undefined;
  return {
    kind: 'feed-latest',
    outcome: 'interrupted',
    reached,
    feedProgramId: null,
    pages,
    skipped,
    ...(lastError === undefined ? {} : { lastError }),
  };
}

async function feedOldest(feed: ProgramFeed, ports: OperatorPorts): Promise<FeedOldestResult> {
  const page = await feed.poll({ after: null, signal: budget(ports) });
  return { kind: 'feed-oldest', oldest: page.events[0]?.sequence_number ?? null };
}

async function doctorBank(
  request: DoctorBankRequest,
  secretId: string,
  ports: OperatorPorts,
): Promise<DoctorBankResult> {
  const credentials = ports.freshCredentials(secretId);
  const timeoutMs = Math.min(request.timeoutMs, Math.max(1, ports.deadline - ports.clock.now()));
  const checks = await checkBank({
    program: request.program,
    secretId,
    credentials,
    timeoutMs,
    entryRules: HANDLER_BUS_KINDS[ports.config.eventBusKind].entryRules,
    cursorParam: ports.config.pollCursorParam,
    limitParam: ports.config.pollLimitParam,
  });
  return redactStrings({ kind: 'doctor-bank', checks }, await heldSecrets(credentials));
}

/** The client secret, if the function holds one for this program (read once, cached). */
async function heldSecrets(credentials: CredentialsProvider): Promise<string[]> {
  try {
    return [(await credentials.get()).clientSecret];
  } catch {
    return [];
  }
}

/**
 * Every string of a JSON value that shows a secret, redacted; the others kept as they are.
 * (`redact` also decodes what it scans: applied to every string it would unescape an event's
 * `detail` text, which the CLI prints byte for byte.)
 */
function redactStrings<T>(value: T, secrets: readonly string[]): T {
  const markers = (text: string) => text.split(REDACTED).length - 1;
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') {
      const redacted = redact(item, secrets);
      return redacted === WITHHELD || markers(redacted) > markers(item) ? redacted : item;
    }
    if (Array.isArray(item)) return item.map(walk);
    if (typeof item === 'object' && item !== null)
      return Object.fromEntries(Object.entries(item).map(([key, entry]) => [key, walk(entry)]));
    return item;
  };
  return walk(value) as T;
}

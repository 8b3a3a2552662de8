/**
 * A banking-service simulator: a real HTTP server on loopback that implements the whole known
 * upstream interface (token endpoint, long poll, SSE stream, single-event lookups), generates
 * realistic events, and lets tests inject faults. Used by the integration tests and by the local mode (`npm start`).
 *
 * @example
 * const simulator = await startSimulator({ seed: 7, maxPollHoldMs: 200 });
 * simulator.generate(25);
 * const [program] = simulator.programs; // clientId 'local-client', clientSecret 'local-secret'
 * // ... point the poller at simulator.url ...
 * await simulator.close();
 */
import { randomInt } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventGenerator } from './event-generator.ts';
import { FaultInjector, type MalformedKind } from './fault-injector.ts';
import type { RecordedRequest } from './http-exchange.ts';
import { type ActiveConnection, createRequestHandler, type SimulatorContext } from './http-routes.ts';
import { type EventInput, ProgramFeed } from './program-feed.ts';
import { type ProgramMisbehaviour, ProgramMisbehaviours } from './program-misbehaviour.ts';
import type { RawEvent } from './raw-event.ts';
import { createRandom, deriveSeed } from './seeded-random.ts';
import type { SimulatorProgram } from './simulator-program.ts';
import { SSE_HEARTBEAT_MS, type StreamShape } from './sse.ts';
import { TokenRegistry } from './token-registry.ts';

export type { MisbehaviourKind, ProgramMisbehaviour } from './program-misbehaviour.ts';
export type { SimulatorProgram } from './simulator-program.ts';

export type { StreamEvent, StreamShape } from './sse.ts';
export type { RawEvent, RecordedRequest };

export interface SimulatorOptions {
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** @default 0 (an ephemeral port) */
  readonly port?: number;
  /**
   * Programs and their client credentials; missing fields are filled in.
   * @default one program: clientId 'local-client', clientSecret 'local-secret', a random programId
   */
  readonly programs?: ReadonlyArray<Partial<SimulatorProgram>>;
  /** After this many seconds a token is refused with 401. @default 3600 */
  readonly tokenLifetimeSeconds?: number;
  /** `GET /events` with nothing new holds until an append or a random timeout in [0, max]. @default 60_000 */
  readonly maxPollHoldMs?: number;
  /** Every answer waits this long first, like a real service's latency (benchmarks). @default 0 */
  readonly responseDelayMs?: number;
  /** Seed for generated data, default program ids and hold timeouts. @default a random seed (see `seed`) */
  readonly seed?: number;
  /** Share of generated events with an undocumented type, such as CARD_STATUS. @default 0.03 */
  readonly unknownTypeRatio?: number;
  /** Generates `eventsPerTick` events for every program each `intervalMs` (local mode). @default false */
  readonly trickle?: { readonly intervalMs: number; readonly eventsPerTick: number } | false;
  /** Interval of the `: ping` comment on open streams. @default 15_000 */
  readonly heartbeatIntervalMs?: number;
  /**
   * How stream payloads write the inner `data.type`: `documented` (the event type, replacing a
   * transaction's own `data.type`, as the interface describes) or `type-preserved` (an event's own
   * `data.type` kept). @default 'documented'
   */
  readonly streamShape?: StreamShape;
  /**
   * Epoch-ms clock for token expiry, `created_dt` and request times. A test seam: advance it to
   * expire tokens without waiting. Hold timeouts and heartbeats still use real timers.
   * @default Date.now
   */
  readonly now?: () => number;
  /**
   * How far the bank's own clock is off ours, in ms (negative: behind): `created_dt` and the
   * transaction timestamps are stamped with `now() + clockOffsetMs`, as a bank whose clock
   * drifted would stamp them. Tokens and request times keep `now`. @default 0
   */
  readonly clockOffsetMs?: number;
}

/** An event to append: its type and data, optionally its id, created_dt and wire text of data. */
export type AppendedEvent = Partial<RawEvent> & {
  readonly type: string;
  readonly data?: Record<string, unknown>;
  readonly dataText?: string;
};

export interface SimulatorFaults {
  /**
   * The next `count` matching requests (exact `path` when given) answer `status` (400-599) with a
   * JSON error body, and `Retry-After` if given. A 401 body says `invalid_token` (`invalid_client`
   * on the token path), like the real refusal.
   */
  failNext(count: number, status: number, options?: { retryAfter?: string; path?: string }): void;
  /** Every token issued so far is refused (401) from now on, and streams opened with one end; new tokens work. */
  revokeTokens(): void;
  /**
   * Cuts the connections of held polls and open streams (a stream in the middle of a message),
   * with no answer and no clean end, as a dropped connection does.
   */
  dropConnections(): void;
  /**
   * The next `count` successful `GET /events` answers have a broken body: `not-json` is a JSON
   * answer cut in half; `bad-schema` is valid JSON whose `data` is an object, not an array.
   */
  malformedNext(count: number, kind: MalformedKind): void;
  /** The next `count` requests (any path) wait `ms` before being handled. */
  delayNext(count: number, ms: number): void;
  /**
   * From now on the bank misbehaves for one program only (`undefined`: behaves again): every
   * request of that program stalls, fails, or is refused as revoked, or its polls ignore `limit`,
   * while the other programs are served as before. See `program-misbehaviour.ts`.
   */
  misbehave(programId: string, misbehaviour: ProgramMisbehaviour | undefined): void;
  /** Drops every pending fault and program misbehaviour (revoked tokens stay revoked). */
  reset(): void;
}

export interface SimulatorStats {
  readonly tokensIssued: number;
  /** `GET /events` requests received, whatever their answer. */
  readonly pollRequests: number;
  /** Polls being held right now (useful to wait until a poll is parked before appending). */
  readonly heldPolls: number;
  readonly openStreams: number;
}

export interface RunningSimulator {
  /** Every access token issued so far: for tests asserting that none leaks into logs or URLs. */
  issuedTokens(): readonly string[];
  /** e.g. `http://127.0.0.1:41234`, no trailing slash. */
  readonly url: string;
  /** The programs and their current client credentials. */
  readonly programs: readonly SimulatorProgram[];
  /** The seed in use, the given one or the one drawn at random, to reproduce a run. */
  readonly seed: number;
  /** Appends `count` realistic events to a program (the first by default) and returns them. */
  generate(count: number, options?: { programId?: string; type?: string }): RawEvent[];
  /**
   * Appends one specific event; the feed assigns its sequence number (and program id). With
   * `dataText`, `data` goes on the wire exactly as that JSON text (for values a JSON round trip
   * would change, such as 9007199254740993 or 12.50); `data` is then parsed from it. An
   * `unlisted` event is left out of polls and streams (they skip its number) while the single-event
   * lookups find it.
   */
  append(event: AppendedEvent, options?: { programId?: string; unlisted?: boolean }): RawEvent;
  /** Leaves the next `count` sequence numbers of a program unused: a gap. Returns the range. */
  skip(count: number, options?: { programId?: string }): { from: number; to: number };
  /**
   * Fills an unused sequence number below the end of the feed with an event, late. With
   * `announce` (default true) the next `GET /events` answer carries it too, whatever its cursor,
   * as an upstream that re-emits late events would; `/event/sequence/:n` finds it either way.
   */
  fill(
    sequenceNumber: number,
    event: AppendedEvent,
    options?: { programId?: string; announce?: boolean },
  ): RawEvent;
  /** The next `GET /events` answer carries this already delivered event again. */
  resend(sequenceNumber: number, options?: { programId?: string }): RawEvent;
  /**
   * Gives a program's client a new secret (the first program by default) and returns it: the
   * token endpoint refuses the old one from now on, while tokens already issued stay valid
   * until they expire, as with a real rotation.
   */
  rotateClientSecret(options?: { programId?: string }): string;
  /** What the feed holds, in poll format and sequence order (the first program by default). */
  events(programId?: string): readonly RawEvent[];
  readonly faults: SimulatorFaults;
  /** Every request in order of arrival. No header value is ever stored. */
  readonly requests: readonly RecordedRequest[];
  readonly stats: SimulatorStats;
  /** Answers held polls (empty), ends streams, closes every connection and the server. Idempotent. */
  close(): Promise<void>;
}

/** Independent PRNG streams derived from the seed (see `deriveSeed`); programs use FIRST_PROGRAM_STREAM + index. */
const PROGRAM_IDS_STREAM = 0;
const HOLD_TIMEOUT_STREAM = 1;
const FIRST_PROGRAM_STREAM = 2;

function requirePositive(name: string, value: number, allowZero = false): void {
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new RangeError(
      `SimulatorOptions.${name} must be a ${allowZero ? 'non-negative' : 'positive'} number, got ${value}`,
    );
  }
}

function resolvePrograms(
  given: ReadonlyArray<Partial<SimulatorProgram>> | undefined,
  seed: number,
): SimulatorProgram[] {
  const random = createRandom(deriveSeed(seed, PROGRAM_IDS_STREAM));
  const programs = (given ?? [{}]).map((partial, index) => {
    const suffix = index === 0 ? '' : `-${index + 1}`;
    return Object.freeze({
      programId: partial.programId ?? random.uuid(),
      clientId: partial.clientId ?? `local-client${suffix}`,
      clientSecret: partial.clientSecret ?? `local-secret${suffix}`,
    });
  });
  if (programs.length === 0) throw new RangeError('SimulatorOptions.programs must hold at least one program');
  for (const key of ['programId', 'clientId'] as const) {
    // A set, not indexOf: a fleet's thousands of programs are checked in linear time.
    const seen = new Set<string>();
    const duplicate = programs.find((program) => seen.size === seen.add(program[key]).size)?.[key];
    if (duplicate !== undefined) {
      throw new RangeError(
        `SimulatorOptions.programs: ${key} '${duplicate}' is used by two programs; make it unique`,
      );
    }
  }
  return programs;
}

/** What the feed stores for an event given by a test: a fresh id unless given, `data` parsed from `dataText`. */
function eventInput(event: AppendedEvent, generator: EventGenerator): EventInput {
  if (event.data === undefined && event.dataText === undefined) {
    throw new RangeError('An appended event needs data or dataText');
  }
  // A copy, so freezing the stored event never freezes the caller's object.
  const data =
    event.data === undefined
      ? (JSON.parse(event.dataText!) as Record<string, unknown>)
      : structuredClone(event.data);
  return {
    id: event.id ?? generator.nextId(),
    created_dt: event.created_dt,
    type: event.type,
    data,
    dataText: event.dataText,
  };
}

/** Starts the simulator and resolves once it listens. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const host = options.host ?? '127.0.0.1';
  const tokenLifetimeSeconds = options.tokenLifetimeSeconds ?? 3600;
  const maxPollHoldMs = options.maxPollHoldMs ?? 60_000;
  const unknownTypeRatio = options.unknownTypeRatio ?? 0.03;
  const heartbeatMs = options.heartbeatIntervalMs ?? SSE_HEARTBEAT_MS;
  const now = options.now ?? Date.now;
  const clockOffsetMs = options.clockOffsetMs ?? 0;
  if (!Number.isSafeInteger(clockOffsetMs)) {
    throw new RangeError(`SimulatorOptions.clockOffsetMs must be an integer, got ${clockOffsetMs}`);
  }
  // The bank's clock: what it stamps its events with.
  const bankNow = clockOffsetMs === 0 ? now : () => now() + clockOffsetMs;
  const seed = options.seed ?? randomInt(0, 2 ** 32 - 1);
  requirePositive('tokenLifetimeSeconds', tokenLifetimeSeconds);
  requirePositive('maxPollHoldMs', maxPollHoldMs, true);
  requirePositive('responseDelayMs', options.responseDelayMs ?? 0, true);
  requirePositive('heartbeatIntervalMs', heartbeatMs);
  if (!(unknownTypeRatio >= 0 && unknownTypeRatio <= 1)) {
    throw new RangeError(`SimulatorOptions.unknownTypeRatio must be within [0, 1], got ${unknownTypeRatio}`);
  }
  if (!Number.isInteger(seed)) throw new RangeError(`SimulatorOptions.seed must be an integer, got ${seed}`);
  const trickle = options.trickle ?? false;
  if (trickle) {
    requirePositive('trickle.intervalMs', trickle.intervalMs);
    if (!Number.isInteger(trickle.eventsPerTick) || trickle.eventsPerTick < 1) {
      throw new RangeError(
        `SimulatorOptions.trickle.eventsPerTick must be a positive integer, got ${trickle.eventsPerTick}`,
      );
    }
  }

  const programs = resolvePrograms(options.programs, seed);
  // Each program draws from its own stream: its events do not depend on other programs' activity.
  const generators = new Map(
    programs.map((program, index) => [
      program.programId,
      new EventGenerator({
        random: createRandom(deriveSeed(seed, FIRST_PROGRAM_STREAM + index)),
        unknownTypeRatio,
        now: bankNow,
      }),
    ]),
  );
  const feeds = new Map(
    programs.map((program) => [program.programId, new ProgramFeed(program.programId, bankNow)]),
  );
  let rotations = 0;
  const context: SimulatorContext & { programsByClientId: Map<string, SimulatorProgram> } = {
    programsByClientId: new Map(programs.map((program) => [program.clientId, program])),
    feeds,
    tokens: new TokenRegistry(tokenLifetimeSeconds * 1000, now),
    faults: new FaultInjector(),
    misbehaviours: new ProgramMisbehaviours(),
    requests: [],
    counters: { pollRequests: 0 },
    active: new Set<ActiveConnection>(),
    holdRandom: createRandom(deriveSeed(seed, HOLD_TIMEOUT_STREAM)),
    maxPollHoldMs,
    responseDelayMs: options.responseDelayMs ?? 0,
    heartbeatMs,
    streamShape: options.streamShape ?? 'documented',
    tokenLifetimeSeconds,
    now,
    lifecycle: { closing: false },
  };

  const programFor = (programId: string | undefined): { feed: ProgramFeed; generator: EventGenerator } => {
    const id = programId ?? programs[0]!.programId;
    const feed = feeds.get(id);
    const generator = generators.get(id);
    if (feed === undefined || generator === undefined) {
      // A few known ids, not a fleet's thousands.
      const known = programs.slice(0, 5).map((p) => p.programId);
      const more = programs.length > known.length ? ` and ${programs.length - known.length} more` : '';
      throw new RangeError(`Unknown programId '${id}'; known: ${known.join(', ')}${more}`);
    }
    return { feed, generator };
  };

  const generate = (
    count: number,
    generateOptions: { programId?: string; type?: string } = {},
  ): RawEvent[] => {
    if (!Number.isInteger(count) || count < 0) {
      throw new RangeError(`generate: count must be a non-negative integer, got ${count}`);
    }
    const { feed, generator } = programFor(generateOptions.programId);
    const appended: RawEvent[] = [];
    for (let i = 0; i < count; i += 1) appended.push(feed.append(generator.next(generateOptions.type)));
    return appended;
  };

  const server = createServer({ keepAlive: true }, createRequestHandler(context));
  server.on('clientError', (_error, socket) => {
    // Malformed HTTP or a reset connection: answer if the socket still can, never crash.
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let trickleTimer: NodeJS.Timeout | undefined;
  if (trickle) {
    trickleTimer = setInterval(() => {
      for (const program of programs) generate(trickle.eventsPerTick, { programId: program.programId });
    }, trickle.intervalMs);
    // A forgotten simulator must not keep a test process alive.
    trickleTimer.unref();
  }

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      context.lifecycle.closing = true;
      clearInterval(trickleTimer);
      for (const connection of [...context.active]) connection.shutdown();
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // One turn for the answers just written to reach their sockets, then cut what is left
      // (keep-alive sockets, requests mid-body) so close() is prompt.
      await new Promise((resolve) => setImmediate(resolve));
      server.closeAllConnections();
      await serverClosed;
    })();
    return closed;
  };

  const faults: SimulatorFaults = {
    failNext: (count, status, failOptions) => context.faults.failNext(count, status, failOptions),
    revokeTokens: () => {
      context.tokens.revokeAll();
      for (const connection of [...context.active]) connection.recheckToken?.();
    },
    dropConnections: () => {
      for (const connection of [...context.active]) connection.drop?.();
    },
    malformedNext: (count, kind) => context.faults.malformedNext(count, kind),
    delayNext: (count, ms) => context.faults.delayNext(count, ms),
    misbehave: (programId, misbehaviour) => {
      programFor(programId);
      context.misbehaviours.set(programId, misbehaviour);
      // A program whose access is withdrawn loses its open streams at once, as revokeTokens does.
      if (misbehaviour?.kind === 'revoked')
        for (const connection of [...context.active]) connection.recheckToken?.();
    },
    reset: () => {
      context.faults.reset();
      context.misbehaviours.clear();
    },
  };

  return {
    url,
    get programs() {
      return Object.freeze([...programs]);
    },
    seed,
    generate,
    append: (event, appendOptions = {}) => {
      const { feed, generator } = programFor(appendOptions.programId ?? event.program_id);
      const appended = feed.append(eventInput(event, generator), { unlisted: appendOptions.unlisted });
      generator.observe(appended);
      return appended;
    },
    skip: (count, skipOptions = {}) => {
      if (!Number.isInteger(count) || count < 1) {
        throw new RangeError(`skip: count must be a positive integer, got ${count}`);
      }
      return programFor(skipOptions.programId).feed.skip(count);
    },
    fill: (sequenceNumber, event, fillOptions = {}) => {
      const { feed, generator } = programFor(fillOptions.programId ?? event.program_id);
      const filled = feed.fill(sequenceNumber, eventInput(event, generator), fillOptions.announce ?? true);
      generator.observe(filled);
      return filled;
    },
    resend: (sequenceNumber, resendOptions = {}) =>
      programFor(resendOptions.programId).feed.resend(sequenceNumber),
    rotateClientSecret: (rotateOptions = {}) => {
      const index =
        rotateOptions.programId === undefined
          ? 0
          : programs.findIndex((p) => p.programId === rotateOptions.programId);
      const current = programs[index];
      if (current === undefined) throw new RangeError(`Unknown programId '${rotateOptions.programId}'`);
      rotations += 1;
      const rotated = Object.freeze({
        ...current,
        clientSecret: `${current.clientSecret}-rotated-${rotations}`,
      });
      programs[index] = rotated;
      context.programsByClientId.set(rotated.clientId, rotated);
      return rotated.clientSecret;
    },
    events: (programId) => programFor(programId).feed.all(),
    faults,
    get requests() {
      return context.requests;
    },
    issuedTokens: () => context.tokens.issuedTokens(),
    get stats(): SimulatorStats {
      let heldPolls = 0;
      let openStreams = 0;
      for (const connection of context.active) {
        if (connection.kind === 'poll') heldPolls += 1;
        else if (connection.kind === 'stream') openStreams += 1;
      }
      return {
        tokensIssued: context.tokens.issued,
        pollRequests: context.counters.pollRequests,
        heldPolls,
        openStreams,
      };
    },
    close,
  };
}

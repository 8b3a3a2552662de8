import { describe, expect, it } from 'vitest';
import type { BankingEvent, FeedPage } from '../../../functions/core/banking-event.ts';
import type {
  BankingCredentials,
  ClaimCheckLocation,
  ClaimCheckStore,
  EntryOutcome,
  PollRequest,
} from '../../../functions/core/ports.ts';
import { jsonBytes, LAMBDA_RESPONSE_MAX_BYTES } from '../../../functions/poller/operator-answer.ts';
import {
  type OperatorPorts,
  type ProgramFeed,
  runOperatorRequest,
} from '../../../functions/poller/operator-dispatch.ts';
import type { ReplayResult } from '../../../functions/poller/operator-request.ts';
import { loadPollerConfig } from '../../../functions/poller/poller-config.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import { InMemoryPublisher, makeEvent, RecordingLogger } from '../../support/in-memory-ports.ts';

const CLIENT_SECRET = 'cl1ent-s3cret-value';

/** Events 1..count in pages of `pageSize`, answered at once; lookups by number and id. */
function feedOf(events: readonly BankingEvent[], pageSize = 3): ProgramFeed {
  return {
    async poll(request: PollRequest): Promise<FeedPage> {
      const page = events.filter((event) => event.sequence_number > (request.after ?? 0)).slice(0, pageSize);
      return { events: page, lastSequenceNumber: page.at(-1)?.sequence_number ?? null };
    },
    async fetchEventBySequence(sequence: number) {
      return events.find((event) => event.sequence_number === sequence) ?? null;
    },
    async fetchEventById(id: string) {
      return events.find((event) => event.id === id) ?? null;
    },
  };
}

/** A bus whose every PutEvents "takes" `msPerSend` of the fake clock. */
class SlowBus extends InMemoryPublisher {
  constructor(
    private readonly clock: FakeClock,
    private readonly msPerSend: number,
  ) {
    super();
  }
  override async send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]> {
    this.clock.advance(this.msPerSend);
    return super.send(batch, signal);
  }
}

/** The claim-check bucket in memory. */
class MemoryAnswers implements ClaimCheckStore {
  readonly objects = new Map<string, string>();
  async put(key: string, body: string): Promise<ClaimCheckLocation> {
    this.objects.set(key, body);
    return { bucket: 'claims', key };
  }
}

function portsFor(
  feed: ProgramFeed,
  options: { clock: FakeClock; bus?: InMemoryPublisher; budgetMs: number; answers?: ClaimCheckStore },
): OperatorPorts {
  const credentials = {
    get: async (): Promise<BankingCredentials> => ({
      baseUrl: 'https://bank.example',
      clientId: 'client',
      clientSecret: CLIENT_SECRET,
    }),
    refresh: async (): Promise<BankingCredentials> => credentials.get(),
  };
  const config = loadPollerConfig({
    SECRET_ID: 'arn:secret:default',
    CHECKPOINT_TABLE: 't',
    EVENT_BUS_NAME: 'bus',
  });
  return {
    config,
    programSecret: async (program) => config.programSecrets.get(program),
    upstream: () => ({ feed, credentials }),
    freshCredentials: () => credentials,
    bus: options.bus ?? new InMemoryPublisher(),
    clock: options.clock,
    logger: new RecordingLogger(),
    deadline: options.clock.now() + options.budgetMs,
    ...(options.answers === undefined ? {} : { answers: options.answers }),
  };
}

describe('runOperatorRequest', () => {
  it('stops a replay between chunks once another held poll would not fit, and says how far it got', async () => {
    const clock = new FakeClock();
    const bus = new SlowBus(clock, 1_000);
    const events = Array.from({ length: 12 }, (_, index) => makeEvent(index + 1));
    const ports = portsFor(feedOf(events), { clock, bus, budgetMs: 2_500 });
    const request = { version: 1, kind: 'replay', program: 'default', holdMs: 1_000, dryRun: false } as const;

    const first = await runOperatorRequest({ ...request, from: 1, to: 12 }, ports);
    const second = await runOperatorRequest(
      { ...request, from: 7, to: 12 },
      { ...ports, deadline: clock.now() + 10_000 },
    );

    // 1..3 at 1 s, 4..6 at 2 s: past 2.5 s − 1 s of hold, so no third chunk in this invocation.
    expect(first).toMatchObject({
      kind: 'replay',
      published: 6,
      through: 6,
      endOfFeed: false,
      eventBus: 'bus',
    });
    expect(second).toMatchObject({ published: 6, through: 12 });
    expect(bus.batches).toEqual([
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
      [10, 11, 12],
    ]);
  });

  it('answers a lookup with the event, and with found: false for none', async () => {
    const events = [makeEvent(1), makeEvent(2)];
    const ports = portsFor(feedOf(events), { clock: new FakeClock(), budgetMs: 5_000 });

    const bySequence = await runOperatorRequest(
      { version: 1, kind: 'event', program: 'default', sequence: 2 },
      ports,
    );
    const byId = await runOperatorRequest(
      { version: 1, kind: 'event', program: 'default', id: events[0]!.id },
      ports,
    );
    const none = await runOperatorRequest(
      { version: 1, kind: 'event', program: 'default', sequence: 9 },
      ports,
    );

    expect(bySequence).toEqual({ kind: 'event', found: true, event: events[1] });
    expect(byId).toEqual({ kind: 'event', found: true, event: events[0] });
    expect(none).toEqual({ kind: 'event', found: false });
  });

  it('redacts the client secret from every string of a result', async () => {
    const leaky = makeEvent(1, { data: { note: `echo ${CLIENT_SECRET}` } });
    const ports = portsFor(feedOf([leaky]), { clock: new FakeClock(), budgetMs: 5_000 });

    const result = await runOperatorRequest(
      { version: 1, kind: 'event', program: 'default', sequence: 1 },
      ports,
    );

    expect(JSON.stringify(result)).not.toContain(CLIENT_SECRET);
  });

  it('refuses a program the function does not poll, before reading anything', async () => {
    let polled = false;
    const feed = {
      ...feedOf([]),
      poll: async (): Promise<FeedPage> => {
        polled = true;
        return { events: [], lastSequenceNumber: null };
      },
    };
    const ports = portsFor(feed, { clock: new FakeClock(), budgetMs: 5_000 });

    await expect(
      runOperatorRequest({ version: 1, kind: 'feed-oldest', program: 'cards' }, ports),
    ).rejects.toMatchObject({
      code: 'OPERATOR_REQUEST_INVALID',
      context: { field: 'operatorRequest.program' },
    });
    expect(polled).toBe(false);
  });

  it('pages a dry run by size: 100 events of 50 KB come back in answers within the limit, each event once', async () => {
    const events = Array.from({ length: 100 }, (_, index) =>
      makeEvent(index + 1, { data: { note: 'n'.repeat(50 * 1024) } }),
    );
    const ports = portsFor(feedOf(events, 100), { clock: new FakeClock(), budgetMs: 60_000 });
    const request = {
      version: 1,
      kind: 'replay',
      program: 'default',
      to: 100,
      holdMs: 1_000,
      dryRun: true,
    } as const;

    const answers: ReplayResult[] = [];
    for (let from = 1; from <= 100 && answers.length < 10; ) {
      const answer = (await runOperatorRequest({ ...request, from }, ports)) as ReplayResult;
      answers.push(answer);
      from = answer.through + 1;
    }

    expect(answers.length).toBeGreaterThan(1);
    for (const answer of answers) expect(jsonBytes(answer)).toBeLessThanOrEqual(LAMBDA_RESPONSE_MAX_BYTES);
    expect(answers.flatMap((answer) => answer.events!)).toEqual(events);
    expect(answers.map((answer) => answer.published)).toEqual(answers.map((answer) => answer.events!.length));
  });

  it('leaves a lookup too large to return in the claim-check bucket, and says how large without one', async () => {
    const large = makeEvent(1, { data: { note: 'x'.repeat(4 * 1024 * 1024) } });
    const answers = new MemoryAnswers();
    const clock = new FakeClock();
    const request = { version: 1, kind: 'event', program: 'default', sequence: 1 } as const;

    const stored = await runOperatorRequest(
      request,
      portsFor(feedOf([large]), { clock, budgetMs: 5_000, answers }),
    );
    const unstored = await runOperatorRequest(request, portsFor(feedOf([large]), { clock, budgetMs: 5_000 }));

    expect(stored).toMatchObject({ kind: 'stored-answer', answers: 'event', stored: { bucket: 'claims' } });
    const { key } = (stored as { stored: { key: string } }).stored;
    expect(JSON.parse(answers.objects.get(key)!)).toEqual({ kind: 'event', found: true, event: large });
    expect(unstored).toEqual({
      kind: 'oversize-answer',
      answers: 'event',
      oversize: {
        bytes: jsonBytes({ kind: 'event', found: true, event: large }),
        maxBytes: LAMBDA_RESPONSE_MAX_BYTES,
      },
    });
  });

  it("answers an event's detail byte for byte, escapes and percent signs included", async () => {
    const event = makeEvent(1, { data: { note: 'a "quoted" word, 100%25 and \u00e9 \\ done' } });
    const ports = portsFor(feedOf([event]), { clock: new FakeClock(), budgetMs: 5_000 });

    const answer = await runOperatorRequest(
      { version: 1, kind: 'event', program: 'default', sequence: 1 },
      ports,
    );

    expect(answer).toEqual({ kind: 'event', found: true, event });
  });
});

/**
 * No credential in any error: every error class the poller can raise, produced by the real code
 * path that raises it while a client secret, a token, an Authorization value and a base URL with
 * `user:password@` are in play, is logged through the real Powertools Logger the way the handler
 * logs failures, and the output is scanned. Powertools prints an error's cause chain with all of
 * its fields, so a secret anywhere in an error, its context or its causes would show here.
 */

import { generateKeyPairSync } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { ProgramSecretScope } from '../../../functions/adapters/aws/program-secret-scope.ts';
import { SecretsManagerCredentialsProvider } from '../../../functions/adapters/aws/secrets-manager-credentials.ts';
import { BankingEventFeed } from '../../../functions/adapters/banking-http/banking-event-feed.ts';
import { checkBankTls } from '../../../functions/adapters/banking-http/client-certificate.ts';
import { ClientCredentialsTokenProvider } from '../../../functions/adapters/banking-http/token-cache.ts';
import { MemoryCheckpointStore } from '../../../functions/adapters/local/memory-checkpoint-store.ts';
import { MemoryProgramRegistry } from '../../../functions/adapters/local/memory-program-registry.ts';
import { StaticCredentialsProvider } from '../../../functions/adapters/local/static-credentials.ts';
import { parseBankingCredentials, parseBaseUrl } from '../../../functions/core/banking-credentials.ts';
import * as errors from '../../../functions/core/errors.ts';
import { eventFailure } from '../../../functions/core/event-model.ts';
import { parseProgramRecord } from '../../../functions/core/fleet/program-record.ts';
import { seedPlan } from '../../../functions/core/fleet/seed-plan.ts';
import { runPollCycle } from '../../../functions/core/poll-cycle.ts';
import { parseScheduledInvocation } from '../../../functions/poller/invocation-input.ts';
import { parseOperatorRequest } from '../../../functions/poller/operator-request.ts';
import { parseProgramSettings } from '../../../functions/settings/program-settings.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import {
  InMemoryFeed,
  InMemoryPublisher,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
} from '../../support/in-memory-ports.ts';
import { json, type Responder, startScriptedServer } from '../../support/scripted-http-server.ts';

const CLIENT_SECRET = 'cl1ent-S3CRET-value';
const TOKEN = 'acc3ss-T0KEN-value';
const URL_PASSWORD = 'url-PASSW0RD-value';
const KEY_PASSPHRASE = 'k3y-PASSPHRASE-value';
/** An encrypted client key, and the base64 body of a PEM block standing for any key material. */
const ENCRYPTED_KEY = generateKeyPairSync('ec', {
  namedCurve: 'P-256',
  privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: KEY_PASSPHRASE },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
}).privateKey;
const KEY_MATERIAL = 'MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgKEYMATERIAL';
const FORBIDDEN = [
  CLIENT_SECRET,
  encodeURIComponent(CLIENT_SECRET),
  TOKEN,
  URL_PASSWORD,
  `Bearer ${TOKEN}`,
  KEY_PASSPHRASE,
  KEY_MATERIAL,
  ...ENCRYPTED_KEY.split('\n').filter((line) => line.length > 40),
];

/** Runs `action`, which must fail, and returns what it threw. */
async function produce(label: string, action: () => unknown): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error(`${label}: expected an error`);
}

/** A banking service that echoes what it was sent: secrets in error bodies are the worst case. */
function echoing(status: number, extra: Record<string, unknown> = {}): Responder {
  return (request, response) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        error: 'invalid_client',
        error_description: `got ${request.body} with ${request.headers.authorization ?? 'no header'}`,
        ...extra,
      }),
    );
  };
}

function issuing(token: unknown): Responder {
  return json(200, { access_token: token, expires_in: 3600 });
}

async function feedAgainst(
  eventsAnswer: Responder,
  tokenAnswer: Responder = issuing(TOKEN),
  options: { readonly maxPageBytes?: number } = {},
) {
  const server = await startScriptedServer(eventsAnswer, { routes: { '/oauth2/token': tokenAnswer } });
  const credentials = new StaticCredentialsProvider({
    baseUrl: server.baseUrl,
    clientId: 'client-1',
    clientSecret: CLIENT_SECRET,
  });
  const dispatcher = new Agent();
  const tokens = new ClientCredentialsTokenProvider({ credentials, dispatcher });
  const feed = new BankingEventFeed({
    entryRules: CLASSIC_BUS_ENTRY_RULES,
    credentials,
    tokens,
    dispatcher,
    maxPageBytes: options.maxPageBytes,
  });
  return {
    feed,
    close: async () => {
      await dispatcher.destroy();
      await server.close();
    },
  };
}

async function poll(eventsAnswer: Responder, tokenAnswer?: Responder): Promise<void> {
  const { feed, close } = await feedAgainst(eventsAnswer, tokenAnswer);
  try {
    await feed.poll({ after: 1, signal: AbortSignal.timeout(10_000) });
  } finally {
    await close();
  }
}

function cycleSetup() {
  const clock = new FakeClock();
  const feed = new InMemoryFeed(clock, [makeEvent(1), makeEvent(2)]);
  const publisher = new InMemoryPublisher();
  const checkpoints = new MemoryCheckpointStore({ now: () => clock.now() });
  return {
    clock,
    feed,
    publisher,
    checkpoints,
    deps: {
      feed,
      publisher,
      checkpoints,
      clock,
      metrics: new RecordingMetrics(),
      logger: new RecordingLogger(),
      random: () => 0.5,
    },
  };
}
const invocation = { program: 'default', owner: 'req-1', remainingMs: 60_000 };

const SCENARIOS: ReadonlyArray<readonly [string, () => unknown]> = [
  [
    'client_key that does not parse',
    () =>
      checkBankTls({
        clientCertificate: `-----BEGIN CERTIFICATE-----\n${KEY_MATERIAL}\n-----END CERTIFICATE-----`,
        clientKey: `-----BEGIN PRIVATE KEY-----\n${KEY_MATERIAL}\n-----END PRIVATE KEY-----`,
      }),
  ],
  [
    'client_key pasted as client_certificate',
    () =>
      checkBankTls({
        clientCertificate: `-----BEGIN CERTIFICATE-----\n${KEY_MATERIAL}\n-----END CERTIFICATE-----`,
        clientKey: ENCRYPTED_KEY,
        clientKeyPassphrase: KEY_PASSPHRASE,
      }),
  ],
  [
    'client_key_passphrase that does not decrypt client_key',
    () =>
      checkBankTls({
        clientCertificate: 'unused',
        clientKey: ENCRYPTED_KEY,
        clientKeyPassphrase: `${KEY_PASSPHRASE}-wrong`,
      }),
  ],
  [
    'base_url with user:password@',
    () => parseBaseUrl(`https://user:${URL_PASSWORD}@bank.example.com`, 'secret s'),
  ],
  [
    'base_url with user:password@ that is not a URL',
    () => parseBaseUrl(`https://user:${URL_PASSWORD}@bank example.com`, 'secret s'),
  ],
  [
    'secret value that is not JSON',
    () => parseBankingCredentials(`{"client_secret": "${CLIENT_SECRET}", oops}`, 'secret s'),
  ],
  [
    'secret naming a plain-http host',
    () =>
      parseBankingCredentials(
        JSON.stringify({ base_url: 'http://bank.example.com', client_id: 'c', client_secret: CLIENT_SECRET }),
        'secret s',
      ),
  ],
  [
    'secret that cannot be read',
    () =>
      new SecretsManagerCredentialsProvider({
        secretId: 'banking',
        cache: new Map(),
        client: {
          send: async () => {
            throw Object.assign(new Error('User is not authorized'), {
              name: 'AccessDeniedException',
              $metadata: { httpStatusCode: 400 },
            });
          },
        } as unknown as SecretsManagerClient,
      }).get(),
  ],
  [
    'token endpoint refusing the credentials, echoing them',
    () => poll(json(200, { data: [] }), echoing(401)),
  ],
  ['token endpoint failing, echoing the request', () => poll(json(200, { data: [] }), echoing(500))],
  [
    'token endpoint answering without a usable token',
    () => poll(json(200, { data: [] }), issuing({ value: TOKEN })),
  ],
  ['feed refusing a fresh token twice', () => poll(echoing(401))],
  ['feed failing, echoing the Authorization header', () => poll(echoing(500))],
  ['feed answering a client error, echoing the Authorization header', () => poll(echoing(400))],
  ['feed answering broken JSON that holds the token', () => poll(json(200, `{"data": [{"note": "${TOKEN}"`))],
  [
    'a page too long to read at once whose first event, holding the token, does not end in what was read',
    async () => {
      const page = JSON.stringify({ data: [{ id: 'e-1', note: `${TOKEN} ${'x'.repeat(2_000)}` }] });
      const { feed, close } = await feedAgainst(json(200, page), issuing(TOKEN), { maxPageBytes: 1_024 });
      try {
        await feed.poll({ after: 1, signal: AbortSignal.timeout(10_000) });
      } finally {
        await close();
      }
    },
  ],
  [
    'an event the bus would refuse, holding the token, looked up by id',
    async () => {
      const refused = {
        id: 'e-1',
        program_id: 'p-1',
        sequence_number: 1,
        created_dt: '2026-11-26T09:00:00Z',
        type: `T${'x'.repeat(128)}`,
        data: { note: TOKEN },
      };
      const { feed, close } = await feedAgainst(json(200, refused));
      try {
        await feed.fetchEventById('e-1', AbortSignal.timeout(10_000));
      } finally {
        await close();
      }
    },
  ],
  [
    'an event held for a sequence number implausibly far past the one before it',
    () => {
      throw new errors.SequenceJumpError(Number.MAX_SAFE_INTEGER, 3, 100_000, 'e-1');
    },
  ],
  [
    'a RangeError while processing one event',
    () => {
      throw eventFailure(
        new RangeError('Maximum call stack size exceeded'),
        { source: 'GET /events' },
        'data[0]',
      );
    },
  ],
  [
    'feed unreachable',
    async () => {
      const server = await startScriptedServer(json(200, {}));
      await server.close();
      const credentials = new StaticCredentialsProvider({
        baseUrl: server.baseUrl,
        clientId: 'c',
        clientSecret: CLIENT_SECRET,
      });
      const feed = new BankingEventFeed({
        entryRules: CLASSIC_BUS_ENTRY_RULES,
        credentials,
        tokens: new ClientCredentialsTokenProvider({ credentials }),
      });
      await feed.poll({ after: null, signal: AbortSignal.timeout(10_000) });
    },
  ],
  [
    'request cut short by the deadline',
    async () => {
      const { feed, close } = await feedAgainst(() => {});
      try {
        await feed.poll({ after: null, signal: AbortSignal.timeout(200) });
      } finally {
        await close();
      }
    },
  ],
  [
    'feed ignoring the cursor',
    async () => {
      const { deps, feed } = cycleSetup();
      await runPollCycle(deps, invocation);
      for (let i = 0; i < 100; i += 1)
        feed.script({ page: { events: [makeEvent(2)], lastSequenceNumber: 2 } });
      await runPollCycle(deps, { ...invocation, owner: 'req-2' });
    },
  ],
  [
    'event too large',
    async () => {
      const { deps, feed } = cycleSetup();
      feed.append(makeEvent(3, { data: { note: 'x'.repeat(300 * 1024) } }));
      await runPollCycle(deps, invocation);
    },
  ],
  [
    'entries the bus kept rejecting',
    async () => {
      const { deps, publisher } = cycleSetup();
      publisher.rejectSequence(2);
      await runPollCycle(deps, invocation);
    },
  ],
  [
    'events of another program',
    async () => {
      const { deps, feed } = cycleSetup();
      await runPollCycle(deps, invocation);
      feed.append(makeEvent(3, { program_id: 'program-2' }));
      await runPollCycle(deps, { ...invocation, owner: 'req-2' });
    },
  ],
  [
    'start position "latest" cut short by the deadline',
    async () => {
      const { deps, feed } = cycleSetup();
      feed.script({ page: { events: [makeEvent(1), makeEvent(2)], lastSequenceNumber: 2 } });
      for (let i = 0; i < 50; i += 1) {
        feed.script({
          error: new errors.UpstreamHttpError('busy', { status: 503, retryable: true, retryAfterMs: 5_000 }),
        });
      }
      await runPollCycle(deps, {
        ...invocation,
        // No allowance: makeEvent's events, a second older than the clock, are backlog to walk.
        startPosition: { position: { kind: 'latest' }, pageLimit: 2, clockSkewAllowanceMs: 0 },
      });
    },
  ],
  [
    'lease lost',
    async () => {
      const { checkpoints } = cycleSetup();
      await checkpoints.commit({ owner: 'nobody', sequenceNumber: 1, feedProgramId: 'p' });
    },
  ],
  [
    'operator request refused, its fields holding a secret',
    () =>
      parseOperatorRequest({
        operatorRequest: { version: 1, kind: CLIENT_SECRET, program: 'default', [TOKEN]: URL_PASSWORD },
      }),
  ],
  [
    'invocation refused, its keys and values holding a secret',
    () => parseScheduledInvocation({ program: 'default', [CLIENT_SECRET]: TOKEN, [URL_PASSWORD]: 1 }),
  ],
  [
    'program record refused, its secretId holding a secret',
    () =>
      parseProgramRecord(
        {
          name: 'cards',
          secretId: `${CLIENT_SECRET} ${TOKEN}`,
          state: 'active',
          owner: 'operator',
          revision: 1,
        },
        'programs table item "cards"',
      ),
  ],
  [
    'program setting refused, its value a secret',
    () => parseProgramSettings('cards', { pollCursorParam: `${CLIENT_SECRET}/${TOKEN}` }),
  ],
  [
    'program secret outside the deployment',
    () =>
      new ProgramSecretScope({ prefix: 'bep/Prod/', stackSecrets: [] }).check(
        'cards',
        `other/${CLIENT_SECRET}`,
      ),
  ],
  [
    'program record written over another revision',
    async () => {
      const registry = new MemoryProgramRegistry();
      await registry.put(
        { name: 'cards', secretId: 'bep/Prod/cards', state: 'active', owner: 'operator', settings: {} },
        7,
      );
    },
  ],
  [
    'stack program an operator added',
    () =>
      seedPlan(
        {
          records: [
            {
              name: 'cards',
              secretId: 'bep/Prod/cards',
              state: 'active',
              owner: 'operator',
              settings: {},
              revision: 3,
            },
          ],
          refused: [],
        },
        [{ name: 'cards', secretId: 'bep/Prod/cards' }],
      ),
  ],
  [
    'checkpoint moved backwards',
    async () => {
      const { checkpoints } = cycleSetup();
      await checkpoints.acquireLease({ owner: 'a', expiresAt: Date.now() + 60_000, now: Date.now() });
      await checkpoints.commit({ owner: 'a', sequenceNumber: 5, feedProgramId: 'p' });
      await checkpoints.commit({ owner: 'a', sequenceNumber: 4, feedProgramId: 'p' });
    },
  ],
];

describe('errors logged through Powertools Logger', () => {
  let written: string[];

  beforeAll(() => {
    written = [];
    for (const stream of [process.stdout, process.stderr]) {
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
        written.push(String(chunk));
        return true;
      });
    }
  });

  afterAll(() => vi.restoreAllMocks());

  it('cover every error class of the poller', async () => {
    const classes = Object.values(errors).filter(
      (value): value is typeof errors.PollerError =>
        typeof value === 'function' && value.prototype instanceof errors.PollerError,
    );
    const thrown = await Promise.all(SCENARIOS.map(([label, action]) => produce(label, action)));
    const seen = new Set(thrown.map((error) => (error as object).constructor));

    expect(classes.length).toBeGreaterThan(5);
    expect(classes.filter((errorClass) => !seen.has(errorClass)).map((c) => c.name)).toEqual([]);
  });

  it.each(SCENARIOS)('%s: logged with its cause chain, it shows no credential', async (label, action) => {
    const error = await produce(label, action);
    written.length = 0;
    const logger = new Logger({ serviceName: 'hygiene', logLevel: 'DEBUG' });

    logger.error('Poll cycle failed', { error });
    logger.error('Poll cycle failed', error as Error);

    const output = written.join('');
    expect(output).toContain((error as Error).name);
    for (const secret of FORBIDDEN) expect(output).not.toContain(secret);
    expect(output).not.toMatch(/authorization["']?\s*[:=]\s*["']?(Bearer|Basic)\s/i);
  });
});

import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../functions/core/errors.ts';
import {
  loadPollerConfig,
  resolveInvocationTarget,
  resolveWorkerInvocation,
} from '../../../functions/poller/poller-config.ts';

const base = { SECRET_ID: 'arn:secret:a', CHECKPOINT_TABLE: 'checkpoints', EVENT_BUS_NAME: 'bus' };

describe('loadPollerConfig', () => {
  it('applies documented defaults', () => {
    expect(loadPollerConfig(base)).toMatchObject({
      eventSource: 'banking.events',
      defaultProgram: 'default',
      pollLimit: 100,
      pollCursorParam: 'last_sequence_number',
      pollLimitParam: 'limit',
      safetyMarginMs: 10_000,
      credentialsTtlSeconds: 300,
      publishMaxAttempts: 5,
    });
  });

  it.each(['SECRET_ID', 'CHECKPOINT_TABLE', 'EVENT_BUS_NAME'])('names a missing %s', (variable) => {
    const env: Record<string, string> = { ...base };
    delete env[variable];
    expect(() => loadPollerConfig(env)).toThrow(ConfigurationError);
    expect(() => loadPollerConfig(env)).toThrow(new RegExp(`Environment variable ${variable} is required`));
  });

  it("reads the function's memory as Lambda sets it, and names a value it could not be", () => {
    expect(loadPollerConfig({ ...base, AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512' }).functionMemoryMb).toBe(512);
    expect(loadPollerConfig(base).functionMemoryMb).toBeUndefined();
    expect(() => loadPollerConfig({ ...base, AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '64' })).toThrow(
      'Environment variable AWS_LAMBDA_FUNCTION_MEMORY_SIZE must be an integer from 128 to 10240, got "64"',
    );
  });

  it('names a malformed number and its range', () => {
    expect(() => loadPollerConfig({ ...base, POLL_LIMIT: '0' })).toThrow(
      'Environment variable POLL_LIMIT must be an integer from 1 to 1000, got "0"',
    );
    expect(() => loadPollerConfig({ ...base, SAFETY_MARGIN_MS: 'ten' })).toThrow(/SAFETY_MARGIN_MS/);
  });

  it.each(['1e3', '0x10', '10.5', ' '])('takes digits only for a number, not %j', (raw) => {
    const parse = () => loadPollerConfig({ ...base, POLL_LIMIT: raw });

    if (raw.trim() === '') expect(parse().pollLimit).toBe(100);
    else
      expect(parse).toThrow(
        `Environment variable POLL_LIMIT must be an integer from 1 to 1000, got "${raw}"`,
      );
  });

  it('refuses a page size parameter named like the cursor, naming both variables', () => {
    expect(() =>
      loadPollerConfig({ ...base, POLL_CURSOR_PARAM: 'after', POLL_LIMIT_PARAM: 'after' }),
    ).toThrow('Environment variable POLL_LIMIT_PARAM must differ from POLL_CURSOR_PARAM ("after")');
  });

  it('reads the feed mode, stream and gap repair settings, with their defaults', () => {
    expect(loadPollerConfig(base)).toMatchObject({
      feedMode: 'poll',
      streamRecovery: 'page',
      streamLingerMs: 100,
      streamCursorParam: 'last_sequence_number',
      gapRepairMaxLookups: 100,
      gapRepairGraceSeconds: 300,
    });
    expect(
      loadPollerConfig({
        ...base,
        FEED_MODE: 'stream',
        STREAM_RECOVERY: 'lookup',
        STREAM_LINGER_MS: '0',
        STREAM_CURSOR_PARAM: 'from',
        GAP_REPAIR_MAX_LOOKUPS: '0',
        GAP_REPAIR_GRACE_SECONDS: '60',
      }),
    ).toMatchObject({
      feedMode: 'stream',
      streamRecovery: 'lookup',
      streamLingerMs: 0,
      streamCursorParam: 'from',
      gapRepairMaxLookups: 0,
      gapRepairGraceSeconds: 60,
    });
  });

  it('names a feed mode it does not know and the ones it does', () => {
    expect(() => loadPollerConfig({ ...base, FEED_MODE: 'sse' })).toThrow(
      'Environment variable FEED_MODE must be "poll" or "stream", got "sse"',
    );
    expect(() => loadPollerConfig({ ...base, STREAM_RECOVERY: 'guess' })).toThrow(
      /STREAM_RECOVERY must be "page" or "lookup"/,
    );
    expect(() => loadPollerConfig({ ...base, STREAM_LINGER_MS: '5000' })).toThrow(/STREAM_LINGER_MS/);
  });

  it('reads the claim check: no bucket and 1,000,000 bytes by default, at most the bus cap of 1 MiB', () => {
    expect(loadPollerConfig(base)).toMatchObject({
      claimCheckBucket: undefined,
      maxEventEntryBytes: 1_000_000,
    });
    expect(
      loadPollerConfig({ ...base, CLAIM_CHECK_BUCKET: ' claims ', MAX_EVENT_ENTRY_BYTES: '262144' }),
    ).toMatchObject({ claimCheckBucket: 'claims', maxEventEntryBytes: 262_144 });
    expect(() => loadPollerConfig({ ...base, MAX_EVENT_ENTRY_BYTES: '2000000' })).toThrow(
      'Environment variable MAX_EVENT_ENTRY_BYTES must be an integer from 1024 to 1048576, got "2000000"',
    );
  });

  it('refuses a cursor parameter name that could inject into the query string', () => {
    expect(() => loadPollerConfig({ ...base, POLL_CURSOR_PARAM: 'a&token=x' })).toThrow(/POLL_CURSOR_PARAM/);
  });

  it('binds the default program to SECRET_ID and every other program to its PROGRAM_SECRETS entry', () => {
    const config = loadPollerConfig({
      ...base,
      DEFAULT_PROGRAM: 'main',
      PROGRAM_SECRETS: '{"loans": "arn:secret:b", "cards": "arn:secret:c"}',
    });

    expect([...config.programSecrets]).toEqual([
      ['main', 'arn:secret:a'],
      ['loans', 'arn:secret:b'],
      ['cards', 'arn:secret:c'],
    ]);
  });

  it.each([
    ['not JSON', '{loans: b}', /PROGRAM_SECRETS is not valid JSON/],
    ['an array', '["arn:secret:b"]', /PROGRAM_SECRETS is not a JSON object/],
    ['a program without a secret', '{"loans": ""}', /names program "loans" without a secret id/],
    ['a bad program name', '{"a b": "arn:secret:b"}', /program "a b" must be letters/],
    ['the default program bound elsewhere', '{"default": "arn:secret:b"}', /binds the default program/],
  ])('refuses PROGRAM_SECRETS holding %s, naming the variable', (_label, value, message) => {
    expect(() => loadPollerConfig({ ...base, PROGRAM_SECRETS: value })).toThrow(message);
    expect(() => loadPollerConfig({ ...base, PROGRAM_SECRETS: value })).toThrow(ConfigurationError);
  });
});

describe('loadPollerConfig on the custom bus', () => {
  const busArn = 'arn:aws:events:eu-west-1:123456789012:event-busv2/bank-events/abcdefghijklmnopqrstuvwxy';

  it('reads the bus kind and the grouping, classic and program by default', () => {
    expect(loadPollerConfig(base)).toMatchObject({ eventBusKind: 'classic', eventGroupBy: 'program' });
    expect(
      loadPollerConfig({
        ...base,
        EVENT_BUS_KIND: 'custom',
        EVENT_BUS_NAME: ` ${busArn} `,
        EVENT_GROUP_BY: 'account',
      }),
    ).toMatchObject({ eventBusKind: 'custom', eventBus: busArn, eventGroupBy: 'account' });
  });

  it.each([
    ['a bus name', 'bank-events'],
    ['a classic bus ARN', 'arn:aws:events:eu-west-1:123456789012:event-bus/bank-events'],
    ['an ARN without the bus id', 'arn:aws:events:eu-west-1:123456789012:event-busv2/bank-events'],
  ])('refuses %s in EVENT_BUS_NAME, naming the variable and the expected form', (_label, value) => {
    const load = () => loadPollerConfig({ ...base, EVENT_BUS_KIND: 'custom', EVENT_BUS_NAME: value });

    expect(load).toThrow(ConfigurationError);
    expect(load).toThrow(
      /^Environment variable EVENT_BUS_NAME must be the ARN of a Custom Event Bus, arn:aws:events:/,
    );
    expect(() => loadPollerConfig({ ...base, EVENT_BUS_NAME: value })).not.toThrow();
  });

  it('refuses a grouping it does not know, naming the variable', () => {
    expect(() => loadPollerConfig({ ...base, EVENT_GROUP_BY: 'customer' })).toThrow(/EVENT_GROUP_BY/);
  });
});

describe('resolveInvocationTarget', () => {
  const config = loadPollerConfig({
    ...base,
    DEFAULT_PROGRAM: 'main',
    PROGRAM_SECRETS: '{"card-program": "arn:secret:c"}',
  });

  it('defaults to DEFAULT_PROGRAM and SECRET_ID for an empty event', () => {
    expect(resolveInvocationTarget({}, config)).toEqual({ program: 'main', secretId: 'arn:secret:a' });
  });

  it("takes the program from the schedule payload and the program's own secret from the configuration", () => {
    expect(resolveInvocationTarget({ program: 'card-program' }, config)).toEqual({
      program: 'card-program',
      secretId: 'arn:secret:c',
    });
  });

  it('refuses a program the function does not know, before any call', () => {
    expect(() => resolveInvocationTarget({ program: 'loans' }, config)).toThrow(
      /event\.program "loans" is not one of this function's programs \(main, card-program\)/,
    );
  });

  it("refuses a secretId that is not the program's own: another feed would move this checkpoint", () => {
    expect(() => resolveInvocationTarget({ program: 'main', secretId: 'arn:secret:c' }, config)).toThrow(
      /event\.secretId is not the secret of program "main"/,
    );
    expect(resolveInvocationTarget({ program: 'card-program', secretId: 'arn:secret:c' }, config)).toEqual({
      program: 'card-program',
      secretId: 'arn:secret:c',
    });
  });
});

describe('resolveWorkerInvocation', () => {
  it('takes the workers numbered below WORKER_COUNT, one worker by default', () => {
    const four = loadPollerConfig({ ...base, WORKER_COUNT: '4' });

    expect(loadPollerConfig(base).workerCount).toBe(1);
    expect(resolveWorkerInvocation(0, loadPollerConfig(base))).toBe(0);
    expect(resolveWorkerInvocation(3, four)).toBe(3);
  });

  it('refuses a worker at or past WORKER_COUNT, naming both: no program is assigned to it', () => {
    const four = loadPollerConfig({ ...base, WORKER_COUNT: '4' });

    expect(() => resolveWorkerInvocation(4, four)).toThrow(ConfigurationError);
    expect(() => resolveWorkerInvocation(4, four)).toThrow(/event\.worker 4 .*WORKER_COUNT is 4/);
  });

  it('names a worker count out of range and the range', () => {
    expect(() => loadPollerConfig({ ...base, WORKER_COUNT: '0' })).toThrow(
      'Environment variable WORKER_COUNT must be an integer from 1 to 100, got "0"',
    );
  });
});

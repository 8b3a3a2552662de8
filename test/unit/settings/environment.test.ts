import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../functions/core/errors.ts';
import { readEnvironment, writeEnvironment } from '../../../functions/settings/environment.ts';
import { SETTINGS } from '../../../functions/settings/settings.ts';

const DEPLOYED = {
  DEFAULT_PROGRAM: 'cards',
  SECRET_ID: 'arn:secret:cards',
  PROGRAM_SECRETS: undefined,
  PROGRAMS_TABLE: 'programs',
  SECRETS_PREFIX: 'banking-events-poller/Prod/',
  CHECKPOINT_TABLE: 'checkpoints',
  EVENT_BUS_NAME: 'bus',
  EVENT_BUS_KIND: undefined,
  LEASE_WAIT_MS: '20000',
  CLAIM_CHECK_BUCKET: 'claims',
  PROGRAM_METRICS: undefined,
};

/** Values as the construct resolves them from props, every one off its default. */
const STREAM_VALUES = {
  eventSource: 'bank.feed',
  metricsNamespace: 'Payments/Poller',
  pollLimit: 250,
  pollCursorParam: 'after',
  pollLimitParam: 'page.size',
  startPosition: 1200,
  safetyMarginMs: 20_000,
  publishConcurrency: 3,
  maxPutEventsPerSecond: 40,
  feedMode: 'stream',
  streamRecovery: 'lookup',
  streamLingerMs: 0,
  streamCursorParam: 'from',
  gapRepairMaxLookups: 0,
  gapRepairGraceSeconds: 60,
  maxEventEntryBytes: 262_144,
  workerCount: 4,
  maxConcurrentPrograms: 20,
} as const;

describe('writeEnvironment, then readEnvironment', () => {
  it('gives the handler back every value the construct resolved', () => {
    const values = readEnvironment(writeEnvironment(STREAM_VALUES, DEPLOYED));
    // Powertools reads the namespace itself (the next test).
    const { metricsNamespace: _powertools, ...handlerValues } = STREAM_VALUES;

    expect(values).toMatchObject({ ...handlerValues, defaultProgram: 'cards', leaseWaitMs: 20_000 });
    expect(values).toMatchObject({
      secretId: 'arn:secret:cards',
      checkpointTable: 'checkpoints',
      eventBus: 'bus',
      programsTable: 'programs',
      secretsPrefix: 'banking-events-poller/Prod/',
    });
  });

  it('writes the fixed variables Powertools reads, and leaves the handler-only ones to their defaults', () => {
    const environment = writeEnvironment(STREAM_VALUES, DEPLOYED);

    expect(environment).toMatchObject({
      POWERTOOLS_SERVICE_NAME: 'banking-events-poller',
      POWERTOOLS_LOG_LEVEL: 'INFO',
      POWERTOOLS_METRICS_NAMESPACE: 'Payments/Poller',
    });
    expect(Object.keys(environment)).not.toContain('MIN_POLL_WINDOW_MS');
    expect(readEnvironment(environment).minPollWindowMs).toBe(SETTINGS.minPollWindowMs.default);
  });

  it('leaves out what has no value, and the stream settings outside stream mode', () => {
    const environment = writeEnvironment(
      { ...STREAM_VALUES, feedMode: 'poll', maxPutEventsPerSecond: undefined },
      DEPLOYED,
    );

    expect(Object.keys(environment).filter((name) => name.startsWith('STREAM_'))).toEqual([]);
    expect(environment).not.toHaveProperty('PUBLISH_MAX_REQUESTS_PER_SECOND');
    expect(environment).not.toHaveProperty('PROGRAM_SECRETS');
  });

  it('writes the custom bus variables for the custom bus only, so a classic environment stays as it was', () => {
    const classic = writeEnvironment(
      { ...STREAM_VALUES, eventBusKind: 'classic', eventGroupBy: 'account' },
      DEPLOYED,
    );
    const custom = writeEnvironment(
      { ...STREAM_VALUES, eventBusKind: 'custom', eventGroupBy: 'account' },
      { ...DEPLOYED, EVENT_BUS_NAME: 'arn:aws:events:eu-west-1:1:event-busv2/b/x', EVENT_BUS_KIND: 'custom' },
    );

    expect(classic).not.toHaveProperty('EVENT_BUS_KIND');
    expect(classic).not.toHaveProperty('EVENT_GROUP_BY');
    expect(custom).toMatchObject({ EVENT_BUS_KIND: 'custom', EVENT_GROUP_BY: 'account' });
    expect(readEnvironment(custom)).toMatchObject({ eventBusKind: 'custom', eventGroupBy: 'account' });
    expect(readEnvironment(classic)).toMatchObject({ eventBusKind: 'classic', eventGroupBy: 'program' });
  });
});

describe('readEnvironment', () => {
  const required = { SECRET_ID: 's', CHECKPOINT_TABLE: 't', EVENT_BUS_NAME: 'b' };

  it('takes the default for a variable unset or blank', () => {
    expect(readEnvironment({ ...required, GAP_REPAIR_GRACE_SECONDS: '  ' }).gapRepairGraceSeconds).toBe(300);
  });

  it('names the variable and the expected form of a bad value', () => {
    const read = () => readEnvironment({ ...required, LEASE_CHECK_INTERVAL_MS: '5' });

    expect(read).toThrow(ConfigurationError);
    expect(read).toThrow(
      'Environment variable LEASE_CHECK_INTERVAL_MS must be an integer from 10 to 10000, got "5"',
    );
  });
});

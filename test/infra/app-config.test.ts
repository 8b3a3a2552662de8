import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../functions/core/errors.ts';
import { DEFAULT_CONTEXT, parseAppConfig } from '../../infra/app-config.ts';
import { cdkJsonContext } from './support/poller-app-fixture.ts';

/** The error's message, or a failure when nothing was thrown. */
function errorOf(context: Record<string, unknown>): ConfigurationError {
  try {
    parseAppConfig(context);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error('parseAppConfig accepted an invalid context');
}

describe('parseAppConfig', () => {
  it('gives the documented defaults for an empty context', () => {
    const config = parseAppConfig({});

    expect(config).toEqual({
      stackName: 'BankingEventsPoller',
      programs: [{ name: 'default' }],
      secretsPrefix: undefined,
      workerCount: 1,
      maxConcurrentPrograms: 50,
      createProgramSecrets: true,
      perProgramAlarms: undefined,
      eventSource: 'banking.events',
      scheduleRateMinutes: 1,
      routes: { account_status: {}, transaction: {} },
      lagThresholdSeconds: 300,
      alarmEmail: undefined,
      archiveRetentionDays: 30,
      logRetentionDays: 30,
      eventBusName: 'banking-events',
      existingEventBusArn: undefined,
      eventBusKind: 'classic',
      eventGroupBy: 'program',
      busRetentionDays: 14,
      metricsNamespace: 'BankingEventsPoller',
      tracing: false,
      pollCursorParam: 'last_sequence_number',
      pollLimitParam: 'limit',
      publishConcurrency: 8,
      maxPutEventsPerSecond: undefined,
      startPosition: 'beginning',
      startClockSkewAllowanceSeconds: 600,
      feedMode: 'poll',
      streamRecovery: 'page',
      streamLingerMs: 100,
      streamCursorParam: 'last_sequence_number',
      gapRepairMaxLookups: 100,
      gapRepairGraceSeconds: 300,
      maxSequenceJump: 100_000,
      maxEventEntryBytes: 1_000_000,
      claimCheckRetentionDays: 30,
      exampleSubscriber: false,
    });
    expect(Object.isFrozen(config.programs[0])).toBe(true);
  });

  it('agrees with the context in cdk.json, which spells out every default in the settings order', () => {
    const context = cdkJsonContext();

    for (const [key, value] of Object.entries(DEFAULT_CONTEXT)) expect(context[key], key).toEqual(value);
    expect(Object.keys(context).filter((key) => key in DEFAULT_CONTEXT)).toEqual(
      Object.keys(DEFAULT_CONTEXT),
    );
    expect(parseAppConfig(context)).toEqual(parseAppConfig({}));
  });

  it('takes every default from the settings table, in the form cdk.json spells it', () => {
    expect(DEFAULT_CONTEXT).toMatchObject({
      scheduleRate: 'rate(1 minute)',
      programs: [{ name: 'default' }],
      routes: { account_status: {}, transaction: {} },
      maxPutEventsPerSecond: 0,
      alarmEmail: '',
      eventBusName: 'banking-events',
      maxEventEntryBytes: 1_000_000,
    });
  });

  it('accepts -c overrides, which arrive as strings, including JSON for structured keys', () => {
    const config = parseAppConfig({
      lagThresholdSeconds: '600',
      archiveRetentionDays: '0',
      tracing: 'true',
      scheduleRate: 'rate(2 minutes)',
      alarmEmail: 'oncall@example.com',
      programs: '[{"name":"cards"},{"name":"loans","secretName":"prod/banking/loans"}]',
      routes: '{"transaction":{"retryAttempts":10,"maxEventAgeSeconds":3600}}',
      pollCursorParam: 'after',
      pollLimitParam: 'page.size',
      publishConcurrency: '4',
      maxPutEventsPerSecond: '200',
      startPosition: '1200',
      exampleSubscriber: 'true',
    });

    expect(config).toMatchObject({
      exampleSubscriber: true,
      publishConcurrency: 4,
      maxPutEventsPerSecond: 200,
      lagThresholdSeconds: 600,
      archiveRetentionDays: 0,
      tracing: true,
      scheduleRateMinutes: 2,
      alarmEmail: 'oncall@example.com',
      programs: [{ name: 'cards' }, { name: 'loans', secretName: 'prod/banking/loans' }],
      routes: { transaction: { retryAttempts: 10, maxEventAgeSeconds: 3600 } },
      pollCursorParam: 'after',
      pollLimitParam: 'page.size',
      startPosition: 1200,
    });
    expect(parseAppConfig({ startPosition: 'latest' }).startPosition).toBe('latest');
    expect(
      parseAppConfig({
        eventBusKind: 'custom',
        eventGroupBy: 'account',
        busRetentionDays: '30',
        routes: '{"account_status":{"ordered":true},"transaction":{"ordered":false}}',
      }),
    ).toMatchObject({
      eventBusKind: 'custom',
      eventGroupBy: 'account',
      busRetentionDays: 30,
      routes: { account_status: { ordered: true }, transaction: { ordered: false } },
    });
    expect(
      parseAppConfig({
        feedMode: 'stream',
        streamRecovery: 'lookup',
        streamLingerMs: '0',
        streamCursorParam: 'from',
        gapRepairMaxLookups: '0',
        gapRepairGraceSeconds: '60',
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

  it('uses an existing bus instead of creating one when its ARN is given and the name is cleared', () => {
    const arn = 'arn:aws:events:eu-west-1:123456789012:event-bus/shared';

    const config = parseAppConfig({ existingEventBusArn: arn, eventBusName: '' });

    expect(config.existingEventBusArn).toBe(arn);
    expect(config.eventBusName).toBeUndefined();
  });

  it.each([
    ['lagThresholdSeconds', 'soon', /"lagThresholdSeconds" must be an integer, 60 or more, got "soon"/],
    ['scheduleRate', 'rate(30 seconds)', /"scheduleRate" must be "rate\(1 minute\)" or "rate\(N minutes\)"/],
    ['scheduleRate', 'rate(1 minutes)', /"scheduleRate"/],
    ['scheduleRate', 'rate(15 minutes)', /N from 2 to 14/],
    ['logRetentionDays', 10, /"logRetentionDays" must be one of 1, 3, 5, 7, 14, 30/],
    ['archiveRetentionDays', -1, /"archiveRetentionDays" must be an integer from 0/],
    ['alarmEmail', 'not-an-address', /"alarmEmail" must be an email address, or "" for none/],
    [
      'eventSource',
      'aws.banking',
      /"eventSource" must be an EventBridge source .* \(not starting with "aws."\)/,
    ],
    ['tracing', 'yes', /"tracing" must be true or false, got "yes"/],
    ['exampleSubscriber', 'on', /"exampleSubscriber" must be true or false, got "on"/],
    [
      'startPosition',
      'earliest',
      /"startPosition" must be "beginning", "latest", or a sequence number .*, got "earliest"/,
    ],
    ['startPosition', 0, /"startPosition" must be/],
    ['feedMode', 'sse', /"feedMode" must be "poll" or "stream", got "sse"/],
    ['streamRecovery', 'guess', /"streamRecovery" must be "page" or "lookup", got "guess"/],
    ['streamLingerMs', 5000, /"streamLingerMs" must be an integer from 0 to 1000/],
    ['gapRepairGraceSeconds', 90_000, /"gapRepairGraceSeconds" must be an integer from 0 to 86400/],
    ['programs', [], /"programs" must be a non-empty array/],
    ['programs', '[{"name":', /"programs" is not valid JSON/],
    ['programs', [{ name: 'has space' }], /"programs\[0\]\.name" must be letters, digits/],
    ['programs', [{ name: 'a' }, { name: 'A' }], /"programs\[1\]\.name" repeats program "A"/],
    ['programs', [{ name: 'a', secretArn: 'arn:x', secretName: 'y' }], /"programs\[0\]" sets both secretArn/],
    [
      'programs',
      [{ name: 'a', secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:a' }],
      /complete/,
    ],
    ['programs', [{ name: 'a', secret: 'x' }], /"programs\[0\]\.secret" is not a program setting/],
    [
      'programs',
      [{ name: 'a', secretKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab' }],
      /"programs\[0\]\.secretKeyArn" is the key of an existing secret; set secretArn or secretName too/,
    ],
    [
      'programs',
      [{ name: 'a', secretName: 'prod/a', secretKeyArn: 'alias/banking' }],
      /"programs\[0\]\.secretKeyArn" must be a KMS key ARN/,
    ],
    [
      'routes',
      { Transaction: {} },
      /"routes\.Transaction" is not an event type: use the lower-case detail-type/,
    ],
    [
      'routes',
      { transaction: { retryAttempts: 500 } },
      /"routes\.transaction\.retryAttempts" must be an integer from 0 to 185/,
    ],
    [
      'routes',
      { transaction: { maxEventAgeSeconds: 10 } },
      /"routes\.transaction\.maxEventAgeSeconds" must be an integer from 60/,
    ],
    ['routes', { transaction: { dlq: false } }, /"routes\.transaction\.dlq" is not a route setting/],
    ['routes', { transaction: { ordered: 'yes' } }, /"routes\.transaction\.ordered" must be true or false/],
    ['eventBusKind', 'v2', /"eventBusKind" must be "classic" or "custom"/],
    ['busRetentionDays', '400', /"busRetentionDays" must be an integer from 1 to 365/],
    [
      'existingEventBusArn',
      'banking-events',
      /"existingEventBusArn" must be the ARN of an existing event bus/,
    ],
    [
      'pollCursorParam',
      'last sequence',
      /"pollCursorParam" must be a query parameter name: a letter or "_", then letters, digits, "_", "\." or "-", at most 64, got "last sequence"/,
    ],
    ['pollCursorParam', '', /"pollCursorParam" must be a query parameter name/],
    ['pollCursorParam', 'after&limit=1', /"pollCursorParam" must be a query parameter name/],
    ['pollLimitParam', '1limit', /"pollLimitParam" must be a query parameter name.*got "1limit"/],
    ['publishConcurrency', '0', /"publishConcurrency" must be an integer from 1 to 50/],
    [
      'maxPutEventsPerSecond',
      '-5',
      /"maxPutEventsPerSecond" must be an integer from 1 to 10000, or 0 for no cap, got "-5"/,
    ],
    ['pollLimitParam', 'x'.repeat(65), /"pollLimitParam" must be a query parameter name/],
    [
      'pollLimitParam',
      'last_sequence_number',
      /"pollLimitParam" must differ from pollCursorParam \("last_sequence_number"\)/,
    ],
  ])('rejects %s = %j with a message naming the key', (key, value, message) => {
    const error = errorOf({ [key]: value });

    expect(error.message).toMatch(message);
    expect(error.message).toMatch(/fix it in cdk\.json or with -c key=value/);
    expect(error.code).toBe('CONFIGURATION_INVALID');
  });

  it('rejects an existing bus ARN while a name for a new bus is still set', () => {
    const error = errorOf({ existingEventBusArn: 'arn:aws:events:eu-west-1:123456789012:event-bus/shared' });

    expect(error.message).toMatch(
      /"eventBusName" names a bus to create; set it to "" when existingEventBusArn is set/,
    );
  });

  it('reports a misspelt key instead of ignoring it', () => {
    const error = errorOf({ lagThreshold: 600 });

    expect(error.message).toMatch(
      /"lagThreshold" is not a setting of this app; the settings are stackName, programs/,
    );
  });

  it('leaves CDK feature flags and CLI keys alone', () => {
    expect(() =>
      parseAppConfig({
        '@aws-cdk/core:target-partitions': ['aws'],
        'aws:cdk:bundling-stacks': [],
        'cli-telemetry': false,
      }),
    ).not.toThrow();
  });

  it('lists every invalid key at once', () => {
    const error = errorOf({ lagThresholdSeconds: 0, tracing: 'maybe', logRetentionDays: 2 });

    expect(error.message.split('\n').filter((line) => line.startsWith('  - '))).toHaveLength(3);
    expect(error.context.keys).toBe('lagThresholdSeconds,logRetentionDays,tracing');
  });
});

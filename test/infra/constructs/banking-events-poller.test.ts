/**
 * The construct embedded by another app: several programs, existing resources, caller-built
 * targets, an alarm strategy, and the props it refuses with a message that says what to fix.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import { computeDeadline } from '../../../functions/core/cycle-budget.ts';
import { loadPollerConfig } from '../../../functions/poller/poller-config.ts';
import {
  AlarmActions,
  BankingEventsPoller,
  type BankingEventsPollerProps,
  type IAlarmActionStrategy,
} from '../../../infra/constructs/index.ts';
import { PREBUILT_HANDLER_DIR, prebuiltHandlerCode } from '../../../infra/constructs/poller-code.ts';
import { cdkJsonContext, logicalIdOf, REPO_ROOT } from '../support/poller-app-fixture.ts';

const LOANS_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/banking/loans-AbC123';
const SHARED_BUS_ARN = 'arn:aws:events:eu-west-1:123456789012:event-bus/shared';

/** A stack with the repository's feature flags and bundling skipped (nothing here looks at the bundle). */
function newStack(): Stack {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  return new Stack(app, 'Host', { env: { account: '123456789012', region: 'eu-west-1' } });
}

type Json = Record<string, unknown>;

describe('an embedding with two programs, existing resources and its own targets', () => {
  let stack: Stack;
  let poller: BankingEventsPoller;
  let template: Template;
  let consumer: lambda.Function;

  beforeAll(() => {
    stack = newStack();
    consumer = new lambda.Function(stack, 'Consumer', {
      runtime: lambda.Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('export const handler = async () => {};'),
    });
    poller = new BankingEventsPoller(stack, 'Poller', {
      programs: [
        { name: 'cards' },
        {
          name: 'loans',
          existingSecret: secretsmanager.Secret.fromSecretCompleteArn(stack, 'Loans', LOANS_SECRET_ARN),
        },
      ],
      existingEventBus: events.EventBus.fromEventBusArn(stack, 'Shared', SHARED_BUS_ARN),
      existingCheckpointTable: dynamodb.Table.fromTableName(stack, 'Checkpoints', 'poller-checkpoints'),
      scheduleInterval: Duration.minutes(2),
      memorySize: 512,
      pollCursorParam: 'after_sequence',
      pollLimitParam: 'page.size',
      tracing: true,
      metricsNamespace: 'Payments/Poller',
      lagThreshold: Duration.minutes(10),
      stallAfter: Duration.minutes(10),
      archiveRetention: Duration.days(0),
      alarmEmail: 'oncall@example.com',
      routes: {
        transaction: {
          targets: (options) => [new targets.LambdaFunction(consumer, options)],
          retryAttempts: 3,
          maxEventAge: Duration.hours(1),
        },
        'card.issued': {},
      },
    });
    template = Template.fromStack(stack);
  });

  it('schedules its one worker every 2 minutes, naming no program: the worker reads them from the programs table', () => {
    template.resourceCountIs('AWS::Scheduler::Schedule', 1);
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(2 minutes)',
      Target: Match.objectLike({ Input: JSON.stringify({ worker: 0 }) }),
    });
    expect(poller.schedules.get('cards')).toBe(poller.workerSchedules[0]);
    expect(poller.schedules.get('loans')).toBe(poller.workerSchedules[0]);
  });

  it('binds each program to its secret in the function, the first program being the default', () => {
    const cards = { Ref: logicalIdOf(stack, poller.secrets.get('cards')!) };

    template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 135,
      MemorySize: 512,
      TracingConfig: { Mode: 'Active' },
      Environment: {
        Variables: Match.objectLike({
          SECRET_ID: cards,
          PROGRAM_SECRETS: JSON.stringify({ loans: LOANS_SECRET_ARN }),
          DEFAULT_PROGRAM: 'cards',
          CHECKPOINT_TABLE: 'poller-checkpoints',
          EVENT_BUS_NAME: SHARED_BUS_ARN, // the ARN: an imported bus may be in another account
          POWERTOOLS_METRICS_NAMESPACE: 'Payments/Poller',
          POLL_CURSOR_PARAM: 'after_sequence',
          POLL_LIMIT_PARAM: 'page.size',
        }),
      },
    });
  });

  it('creates neither a bus nor a checkpoint table (only the programs table), and archives the existing bus indefinitely', () => {
    template.resourceCountIs('AWS::Events::EventBus', 0);
    expect(Object.keys(template.findResources('AWS::DynamoDB::Table'))).toEqual([
      logicalIdOf(stack, poller.programsTable),
    ]);
    template.hasResourceProperties('AWS::Events::Archive', { SourceArn: SHARED_BUS_ARN, RetentionDays: 0 });
  });

  it('grants item access on the existing table, PutEvents on the existing bus and reads of both secrets', () => {
    const statements = [
      {
        Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        Resource: 'arn:aws:dynamodb:eu-west-1:123456789012:table/poller-checkpoints',
      },
      { Action: 'events:PutEvents', Resource: SHARED_BUS_ARN },
      // One statement for both secrets and those under the prefix: @aws-cdk/aws-iam:minimizePolicies merges them.
      {
        Action: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
        Resource: [
          'arn:aws:secretsmanager:eu-west-1:123456789012:secret:banking-events-poller/Host/*',
          LOANS_SECRET_ARN,
          { Ref: logicalIdOf(stack, poller.secrets.get('cards')!) },
        ],
      },
    ];
    for (const statement of statements) {
      template.hasResourceProperties('AWS::IAM::Policy', {
        PolicyDocument: { Statement: Match.arrayWith([{ Effect: 'Allow', ...statement }]) },
      });
    }
  });

  it('builds caller targets with the route DLQ and retry policy', () => {
    const route = poller.routing!.routes.find((candidate) => candidate.name === 'transaction')!;

    expect(route.queue).toBeUndefined();
    template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: 'shared',
      EventPattern: { source: ['banking.events'], 'detail-type': ['transaction'] },
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [logicalIdOf(stack, consumer), 'Arn'] },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [logicalIdOf(stack, route.deadLetterQueue), 'Arn'] } },
          RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 3 },
        }),
      ],
    });
  });

  it('routes every type not named, including types with dots, to the catch-all', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['banking.events'],
        'detail-type': [{ 'anything-but': ['transaction', 'card.issued', 'invalid_event'] }],
      },
    });
  });

  it('keeps one set of custom-metric alarms per program, on its Program dimension', () => {
    for (const program of ['cards', 'loans']) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'Payments/Poller',
        MetricName: 'LagSeconds',
        Dimensions: [
          { Name: 'Program', Value: program },
          { Name: 'service', Value: 'banking-events-poller' },
        ],
        Threshold: 600,
      });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'CycleDurationMs',
        Dimensions: Match.arrayWith([{ Name: 'Program', Value: program }]),
        EvaluationPeriods: 10,
        DatapointsToAlarm: 10,
      });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'Payments/Poller',
        MetricName: 'GapsUnfilled',
        Dimensions: Match.arrayWith([{ Name: 'Program', Value: program }]),
        Period: 120,
      });
    }
    expect(poller.alarms.lagAlarms.size).toBe(2);
    expect(poller.alarms.sequenceGapsAlarms.size).toBe(2);
  });

  it('subscribes the on-call address to the alarm topic', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
    });
  });
});

interface AlarmProperties {
  readonly Namespace: string;
  readonly MetricName: string;
  readonly Statistic: string;
  readonly Period: number;
  readonly EvaluationPeriods: number;
  readonly DatapointsToAlarm?: number;
  readonly TreatMissingData: string;
}

/** Alarms of one synthesized stack by metric name (the per-stack and the default program's ones). */
function alarmsByMetric(template: Template): Map<string, AlarmProperties> {
  const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as {
    Properties: AlarmProperties;
  }[];
  return new Map(alarms.map(({ Properties }) => [Properties.MetricName, Properties]));
}

describe('alarms on a schedule slower than a minute', () => {
  // The handler flushes its metrics once per invocation: one data point per program per tick.
  const PER_INVOCATION = ['LagSeconds', 'FailedEntries', 'GapsUnfilled', 'Errors', 'Throttles'];

  it.each([1, 5, 14])(
    'every %i minute(s): alarms on per-invocation metrics use the interval as period',
    (minutes) => {
      const stack = newStack();
      new BankingEventsPoller(stack, 'Poller', {
        scheduleInterval: Duration.minutes(minutes),
        alarmActions: AlarmActions.none(),
      });
      const alarms = alarmsByMetric(Template.fromStack(stack));

      for (const metric of PER_INVOCATION) {
        // A period shorter than a tick is mostly empty; empty periods do not breach, so N-of-M never fires.
        expect(alarms.get(metric)?.Period, metric).toBe(minutes * 60);
      }
      expect(alarms.get('LagSeconds')).toMatchObject({ EvaluationPeriods: 3, DatapointsToAlarm: 3 });
      for (const metric of ['FailedEntries', 'Errors', 'Throttles']) {
        expect(alarms.get(metric), metric).toMatchObject({ EvaluationPeriods: 5, DatapointsToAlarm: 3 });
      }
      expect(alarms.get('GapsUnfilled')).toMatchObject({
        Statistic: 'Sum',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
      // Stall counts missing minutes as breaching: one-minute periods over max(5 min, 2 ticks).
      const stallMinutes = Math.max(5, 2 * minutes);
      expect(alarms.get('CycleDurationMs')).toMatchObject({
        Statistic: 'SampleCount',
        Period: 60,
        EvaluationPeriods: stallMinutes,
        DatapointsToAlarm: stallMinutes,
        TreatMissingData: 'breaching',
      });
    },
  );
});

describe('stall window', () => {
  // One CycleDurationMs per run, in the minute the run ends; ends jitter across minute boundaries.
  it.each([
    [1, 2],
    [5, 6],
    [14, 15],
  ])('every %i minute(s): accepts %i minutes, one tick and a minute', (interval, stall) => {
    const stack = newStack();
    new BankingEventsPoller(stack, 'Poller', {
      scheduleInterval: Duration.minutes(interval),
      stallAfter: Duration.minutes(stall),
      alarmActions: AlarmActions.none(),
    });

    expect(alarmsByMetric(Template.fromStack(stack)).get('CycleDurationMs')).toMatchObject({
      Period: 60,
      EvaluationPeriods: stall,
      DatapointsToAlarm: stall,
    });
  });
});

/** The function's environment as the template has it (strings only). */
function environmentOf(props: BankingEventsPollerProps): Record<string, string> {
  const stack = newStack();
  new BankingEventsPoller(stack, 'Poller', props);
  const [fn] = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function')) as {
    Properties: { Environment: { Variables: Record<string, unknown> } };
  }[];
  return Object.fromEntries(
    Object.entries(fn!.Properties.Environment.Variables).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

describe('publishing', () => {
  it('publishes 8 PutEvents at a time without a rate cap by default', () => {
    const environment = environmentOf({});

    expect(environment).toMatchObject({ PUBLISH_CONCURRENCY: '8' });
    expect(environment).not.toHaveProperty('PUBLISH_MAX_REQUESTS_PER_SECOND');
  });

  it('passes a concurrency and a PutEvents cap to the handler', () => {
    expect(environmentOf({ publishConcurrency: 4, maxPutEventsPerSecond: 100 })).toMatchObject({
      PUBLISH_CONCURRENCY: '4',
      PUBLISH_MAX_REQUESTS_PER_SECOND: '100',
    });
  });

  it.each<[string, BankingEventsPollerProps, RegExp]>([
    ['no concurrency', { publishConcurrency: 0 }, /publishConcurrency must be an integer from 1 to 50/],
    ['a concurrency the handler refuses', { publishConcurrency: 51 }, /publishConcurrency must be/],
    [
      'a cap of zero',
      { maxPutEventsPerSecond: 0 },
      /maxPutEventsPerSecond must be an integer from 1 to 10000/,
    ],
  ])('refuses %s', (_name, props, message) => {
    expect(() => new BankingEventsPoller(newStack(), 'Poller', props)).toThrow(message);
  });
});

describe('query parameter names', () => {
  it('tells the handler its defaults when none are given: the names the FEED_CURSOR_IGNORED error says to check', () => {
    expect(environmentOf({})).toMatchObject({
      POLL_CURSOR_PARAM: 'last_sequence_number',
      POLL_LIMIT_PARAM: 'limit',
      START_POSITION: 'beginning',
    });
  });

  it.each([
    ['latest', 'latest'],
    [1200, '1200'],
  ] as const)(
    'passes the start position %j to the handler, which reads it back',
    (startPosition, variable) => {
      const env = environmentOf({ startPosition });

      expect(env.START_POSITION).toBe(variable);
      expect(
        loadPollerConfig({ ...env, SECRET_ID: 's', CHECKPOINT_TABLE: 't', EVENT_BUS_NAME: 'b' })
          .startPosition,
      ).toBe(startPosition);
    },
  );

  it('passes the clock skew allowance of latest to the handler in seconds, which reads it back', () => {
    const env = environmentOf({ startPosition: 'latest', startClockSkewAllowance: Duration.minutes(30) });

    expect(env.START_CLOCK_SKEW_ALLOWANCE_SECONDS).toBe('1800');
    expect(
      loadPollerConfig({ ...env, SECRET_ID: 's', CHECKPOINT_TABLE: 't', EVENT_BUS_NAME: 'b' })
        .startClockSkewAllowanceSeconds,
    ).toBe(1800);
  });

  // Both take the rule from the settings table; they must accept exactly the same names.
  it.each([
    ['after', true],
    ['_cursor', true],
    ['page.size-v2_x', true],
    ['a'.repeat(64), true],
    ['a'.repeat(65), false],
    ['1st', false],
    ['.dot', false],
    ['with space', false],
    ['a&b=c', false],
    ['séquence', false],
  ])('agrees with the handler on %j (valid: %s)', (name, valid) => {
    const handlerAccepts = (variable: string) => {
      try {
        loadPollerConfig({ SECRET_ID: 's', CHECKPOINT_TABLE: 't', EVENT_BUS_NAME: 'b', [variable]: name });
        return true;
      } catch {
        return false;
      }
    };
    const constructAccepts = (props: BankingEventsPollerProps) => {
      try {
        environmentOf(props);
        return true;
      } catch {
        return false;
      }
    };

    expect(handlerAccepts('POLL_CURSOR_PARAM')).toBe(valid);
    expect(handlerAccepts('POLL_LIMIT_PARAM')).toBe(valid);
    expect(constructAccepts({ pollCursorParam: name })).toBe(valid);
    expect(constructAccepts({ pollLimitParam: name })).toBe(valid);
    expect(constructAccepts({ feedMode: 'stream', streamCursorParam: name })).toBe(valid);
    if (valid) {
      const env = environmentOf({ pollCursorParam: name, pollLimitParam: `${name.slice(0, 63)}2` });
      expect(
        loadPollerConfig({ ...env, SECRET_ID: 's', CHECKPOINT_TABLE: 't', EVENT_BUS_NAME: 'b' }),
      ).toMatchObject({
        pollCursorParam: name,
        pollLimitParam: `${name.slice(0, 63)}2`,
      });
    }
  });
});

describe('feed mode and gap repair', () => {
  it('polls by default, with gap repair on and no stream setting', () => {
    const env = environmentOf({});

    expect(env).toMatchObject({
      FEED_MODE: 'poll',
      GAP_REPAIR_MAX_LOOKUPS: '100',
      GAP_REPAIR_GRACE_SECONDS: '300',
    });
    expect(Object.keys(env).filter((name) => name.startsWith('STREAM_'))).toEqual([]);
  });

  it('passes the stream settings, which the handler reads back', () => {
    const env = environmentOf({
      feedMode: 'stream',
      streamRecovery: 'lookup',
      streamLinger: Duration.millis(0),
      streamCursorParam: 'from',
      gapRepair: { maxLookups: 0, gracePeriod: Duration.minutes(10) },
    });

    expect(
      loadPollerConfig({ ...env, SECRET_ID: 's', CHECKPOINT_TABLE: 't', EVENT_BUS_NAME: 'b' }),
    ).toMatchObject({
      feedMode: 'stream',
      streamRecovery: 'lookup',
      streamLingerMs: 0,
      streamCursorParam: 'from',
      gapRepairMaxLookups: 0,
      gapRepairGraceSeconds: 600,
    });
  });
});

describe('function code', () => {
  /** Synthesizes one poller into a fresh directory, bundling for real; the function's asset directory. */
  function synthesizedCode(props: BankingEventsPollerProps) {
    const outdir = mkdtempSync(path.join(tmpdir(), 'poller-code-'));
    const app = new App({ outdir, context: { ...cdkJsonContext(), 'aws:cdk:enable-asset-metadata': true } });
    const stack = new Stack(app, 'Host');
    const poller = new BankingEventsPoller(stack, 'Poller', props);
    const assembly = app.synth();
    const template = assembly.getStackArtifact(stack.artifactId).template as {
      Resources: Record<string, { Type: string; Metadata?: Record<string, string>; Properties: Json }>;
    };
    const logicalId = logicalIdOf(stack, poller.pollerFunction);
    const resource = template.Resources[logicalId]!;
    return {
      poller,
      logicalId,
      handler: resource.Properties.Handler,
      codeDir: path.join(assembly.directory, resource.Metadata!['aws:asset:path']!),
      dispose: () => rmSync(outdir, { recursive: true, force: true }),
    };
  }

  it('is the handler prebuilt into the package by default: nothing is bundled at synth', () => {
    const synth = synthesizedCode({});
    try {
      expect(synth.poller.pollerFunction).not.toBeInstanceOf(nodejs.NodejsFunction);
      expect(synth.handler).toBe('index.handler');
      expect(readFileSync(path.join(synth.codeDir, 'index.mjs'))).toEqual(
        readFileSync(path.join(PREBUILT_HANDLER_DIR, 'index.mjs')),
      );
    } finally {
      synth.dispose();
    }
  });

  it('names the missing prebuilt handler and the ways out', () => {
    const missing = path.join(tmpdir(), 'no-such-package', 'dist/assets/poller');

    expect(() => prebuiltHandlerCode(missing)).toThrow(
      `The prebuilt poller handler is missing (${path.join(missing, 'index.mjs')}): in a clone of ` +
        'banking-events-poller run `npm run build`; in an app, reinstall the package. Or give the ' +
        'construct an `entry` to bundle a handler yourself.',
    );
  });

  it('is bundled from `entry` when one is given, under the same logical id', () => {
    // NodejsFunction bundles entries inside the project only (.local/ is ignored by git).
    mkdirSync(path.join(REPO_ROOT, '.local'), { recursive: true });
    const dir = mkdtempSync(path.join(REPO_ROOT, '.local', 'custom-entry-'));
    const entry = path.join(dir, 'custom-handler.ts');
    writeFileSync(entry, "export const handler = async (): Promise<string> => 'custom build';\n");
    const prebuilt = synthesizedCode({});
    const custom = synthesizedCode({ entry });
    try {
      expect(custom.poller.pollerFunction).toBeInstanceOf(nodejs.NodejsFunction);
      expect(custom.logicalId).toBe(prebuilt.logicalId);
      expect(custom.handler).toBe('index.handler');
      expect(readFileSync(path.join(custom.codeDir, 'index.mjs'), 'utf8')).toContain('custom build');
    } finally {
      prebuilt.dispose();
      custom.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('function timeout and the hand-over to the next tick', () => {
  const OVERLAP_MS = 5_000;

  /** The default timeout the construct picks, and whether the handler (computeDeadline) overlaps the next tick. */
  function defaultTimeout(intervalMinutes: number, safetyMarginSeconds: number) {
    const poller = new BankingEventsPoller(newStack(), 'Poller', {
      scheduleInterval: Duration.minutes(intervalMinutes),
      safetyMargin: Duration.seconds(safetyMarginSeconds),
    });
    const timeoutMs = poller.pollerFunction.timeout!.toMilliseconds();
    const marginMs = safetyMarginSeconds * 1000;
    const nextTickMs = intervalMinutes * 60_000;
    return {
      seconds: timeoutMs / 1000,
      overlaps: computeDeadline(0, timeoutMs, marginMs) >= nextTickMs + OVERLAP_MS,
      oneSecondLessOverlaps: computeDeadline(0, timeoutMs - 1000, marginMs) >= nextTickMs + OVERLAP_MS,
    };
  }

  it.each<[number, number, number]>([
    [1, 10, 75],
    [1, 18, 83],
    [1, 30, 87],
    [2, 10, 135],
    [2, 60, 167],
    [14, 10, 855],
  ])(
    'every %i minute(s) with a %i s margin: %i s, the shortest that polls 5 s past the next tick',
    (intervalMinutes, marginSeconds, expected) => {
      const timeout = defaultTimeout(intervalMinutes, marginSeconds);

      expect(timeout.seconds).toBe(expected);
      expect(timeout.overlaps).toBe(true);
      expect(timeout.oneSecondLessOverlaps).toBe(false);
    },
  );

  it('tells the handler to wait for the lease until a crashed predecessor would have lost it', () => {
    // Timeout 75 s + 5 s of lease skew, counted from the next tick 60 s after the predecessor's start.
    expect(environmentOf({})).toMatchObject({ LEASE_WAIT_MS: '20000' });
  });

  it.each<[string, BankingEventsPollerProps, RegExp]>([
    [
      'a timeout whose capped margin stops polling at the next tick',
      { safetyMargin: Duration.seconds(30), functionTimeout: Duration.seconds(80) },
      /stops polling 60 s after it starts .*no later than the next tick at 60 s: runs would not overlap.*at least 87 s/,
    ],
    [
      'a timeout that stops polling before the next tick',
      { functionTimeout: Duration.seconds(65) },
      /stops polling 55 s .*feed would go unpolled between them.*at least 75 s/,
    ],
    [
      'a timeout that polls more than half an interval past the next tick',
      { functionTimeout: Duration.seconds(120) },
      /keeps polling until 110 s, more than half an interval after the next tick.*Use 75 s/,
    ],
    [
      'an overlap of half the interval',
      { handoverOverlap: Duration.seconds(30) },
      /handoverOverlap must be more than 0 and less than half the scheduleInterval/,
    ],
  ])('refuses %s', (_name, props, message) => {
    expect(() => new BankingEventsPoller(newStack(), 'Poller', props)).toThrow(message);
  });

  it('accepts a longer overlap and derives the timeout and the lease wait from it', () => {
    const environment = environmentOf({ handoverOverlap: Duration.seconds(10) });

    expect(environment.LEASE_WAIT_MS).toBe('25000');
    const poller = new BankingEventsPoller(newStack(), 'Poller', { handoverOverlap: Duration.seconds(10) });
    expect(poller.pollerFunction.timeout?.toSeconds()).toBe(80);
  });
});

describe('alarm actions', () => {
  it('are left to the strategy given, and no topic is created', () => {
    const stack = newStack();
    const seen: cloudwatch.Alarm[] = [];
    const recording: IAlarmActionStrategy = { addActions: (alarm) => seen.push(alarm) };

    const poller = new BankingEventsPoller(stack, 'Poller', { alarmActions: recording });

    expect(poller.alarmTopic).toBeUndefined();
    expect(seen).toEqual(poller.alarms.alarms);
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::SNS::Topic', 0);
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm')) as {
      Properties: Json;
    }[]) {
      expect(alarm.Properties.AlarmActions).toBeUndefined();
    }
  });

  it('can notify an existing topic, on ALARM only', () => {
    const stack = newStack();
    const topic = sns.Topic.fromTopicArn(stack, 'Pager', 'arn:aws:sns:eu-west-1:123456789012:pager');

    new BankingEventsPoller(stack, 'Poller', {
      alarmActions: AlarmActions.notifySns(topic, { onOk: false }),
    });

    Template.fromStack(stack).hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: ['arn:aws:sns:eu-west-1:123456789012:pager'],
      OKActions: Match.absent(),
    });
  });
});

describe('invalid props', () => {
  const consumer = (stack: Stack) =>
    lambda.Function.fromFunctionArn(
      stack,
      'Consumer',
      'arn:aws:lambda:eu-west-1:123456789012:function:consumer',
    );

  it.each<[string, (stack: Stack) => BankingEventsPollerProps, RegExp]>([
    [
      'a bus name with an existing bus',
      (stack) => ({
        existingEventBus: events.EventBus.fromEventBusArn(stack, 'B', SHARED_BUS_ARN),
        eventBusName: 'x',
      }),
      /eventBusName names a bus this construct creates; leave it out when passing existingEventBus/,
    ],
    [
      'an alarm strategy with an email',
      () => ({ alarmActions: AlarmActions.none(), alarmEmail: 'a@example.com' }),
      /alarmActions replaces the alarm topic; leave out alarmTopic and alarmEmail/,
    ],
    [
      'an email with an existing topic',
      (stack) => ({
        alarmTopic: sns.Topic.fromTopicArn(stack, 'T', 'arn:aws:sns:eu-west-1:123456789012:t'),
        alarmEmail: 'a@example.com',
      }),
      /alarmEmail subscribes to the topic this construct creates/,
    ],
    ['no program', () => ({ programs: [] }), /programs must name at least one program/],
    [
      'a program name with a space',
      () => ({ programs: [{ name: 'my program' }] }),
      /program name "my program" must be/,
    ],
    [
      'programs that differ in punctuation only',
      () => ({ programs: [{ name: 'a-b' }, { name: 'a_b' }] }),
      /too alike/,
    ],
    [
      'a 90-second interval',
      () => ({ scheduleInterval: Duration.seconds(90) }),
      /whole minutes from 1 to 14/,
    ],
    [
      'a 15-minute interval',
      () => ({ scheduleInterval: Duration.minutes(15) }),
      /whole minutes from 1 to 14/,
    ],
    ['a timeout over 15 minutes', () => ({ functionTimeout: Duration.minutes(16) }), /at most 900 s/],
    [
      'a timeout within the margin',
      () => ({ functionTimeout: Duration.seconds(10) }),
      /longer than safetyMargin/,
    ],
    [
      'a stall window shorter than a tick',
      () => ({ scheduleInterval: Duration.minutes(5), stallAfter: Duration.minutes(2) }),
      /stallAfter/,
    ],
    [
      'a stall window of exactly one 5-minute tick',
      () => ({ scheduleInterval: Duration.minutes(5), stallAfter: Duration.minutes(5) }),
      /stallAfter must be whole minutes and at least scheduleInterval \+ 1 minute: set it to 6 minutes or more, or leave it out/,
    ],
    [
      'a stall window of exactly one 1-minute tick',
      () => ({ stallAfter: Duration.minutes(1) }),
      /stallAfter .* set it to 2 minutes or more/,
    ],
    [
      'a cursor parameter with a space',
      () => ({ pollCursorParam: 'last sequence' }),
      /pollCursorParam must be a query parameter name: a letter or "_", then letters, digits, "_", "\." or "-", at most 64; got "last sequence"/,
    ],
    [
      'an empty cursor parameter',
      () => ({ pollCursorParam: '' }),
      /pollCursorParam must be a query parameter/,
    ],
    [
      'a limit parameter starting with a digit',
      () => ({ pollLimitParam: '2limit' }),
      /pollLimitParam must be a query parameter name.*got "2limit"/,
    ],
    [
      'a limit parameter named like the cursor',
      () => ({ pollLimitParam: 'last_sequence_number' }),
      /pollLimitParam must differ from pollCursorParam \("last_sequence_number"\): one names the cursor, the other the page size/,
    ],
    ['a page of 5000 events', () => ({ pollLimit: 5000 }), /pollLimit must be an integer from 1 to 1000/],
    [
      'a start position of 0',
      () => ({ startPosition: 0 }),
      /startPosition must be "beginning", "latest", or a sequence number \(the first event to publish, 1 or more\); got 0/,
    ],
    [
      'a lag threshold under a minute',
      () => ({ lagThreshold: Duration.seconds(30) }),
      /lagThreshold must be a Duration of whole seconds, 60 or more; got 30 seconds/,
    ],
    [
      'an upper-case event type',
      () => ({ routes: { Transaction: {} } }),
      /Route "Transaction": an event type is the lower-case detail-type/,
    ],
    [
      'types alike but for punctuation',
      () => ({ routes: { 'a.b': {}, a_b: {} } }),
      /differ only in punctuation/,
    ],
    [
      'too many retries',
      () => ({ routes: { transaction: { retryAttempts: 200 } } }),
      /retryAttempts must be an integer from 0 to 185/,
    ],
    [
      'a 30-second event age',
      () => ({ routes: { transaction: { maxEventAge: Duration.seconds(30) } } }),
      /between 1 minute and 24 hours/,
    ],
    [
      'a targets() with no target',
      () => ({ routes: { transaction: { targets: () => [] } } }),
      /returned no target/,
    ],
    [
      'a stream setting in poll mode',
      () => ({ streamRecovery: 'lookup' }),
      /streamRecovery applies to feedMode 'stream' only; feedMode is 'poll'/,
    ],
    [
      'a linger over a second',
      () => ({ feedMode: 'stream', streamLinger: Duration.seconds(2) }),
      /streamLinger must be a Duration of whole milliseconds from 0 to 1000; got 2000 milliseconds/,
    ],
    [
      'a negative lookup budget',
      () => ({ gapRepair: { maxLookups: -1 } }),
      /gapRepair.maxLookups must be an integer from 0 to 10000; got -1/,
    ],
    [
      'a grace period over the feed retention',
      () => ({ gapRepair: { gracePeriod: Duration.hours(25) } }),
      /gapRepair.gracePeriod must be a Duration of whole seconds from 0 to 86400; got 90000 seconds/,
    ],
  ])('rejects %s', (_name, props, message) => {
    const stack = newStack();

    expect(() => new BankingEventsPoller(stack, 'Poller', props(stack))).toThrow(message);
  });

  it('rejects at synth a caller target built without the route DLQ and retry policy', () => {
    const stack = newStack();
    new BankingEventsPoller(stack, 'Poller', {
      routes: { transaction: { targets: () => [new targets.LambdaFunction(consumer(stack))] } },
    });

    expect(() => Template.fromStack(stack)).toThrow(
      /Route "transaction": target Target0 has no dead-letter queue or retry policy; build it with the RouteTargetOptions/,
    );
  });
});

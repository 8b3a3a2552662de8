/**
 * Alarms that name the program: per program for a few programs (today's, unchanged), one per
 * condition over every program for more (Metrics Insights grouped by `Program`), each worker's
 * stall alarm, and the function told which of its metrics carry `Program` to match.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { METRIC_PLANS } from '../../../functions/adapters/observability/metric-plan.ts';
import { METRIC_NAMES, type MetricName } from '../../../functions/core/ports.ts';
import { PER_PROGRAM_ALARMS_UP_TO, resolveAlarmPlan } from '../../../infra/constructs/alarm-plan.ts';
import {
  AlarmActions,
  BankingEventsPoller,
  type BankingEventsPollerProps,
  PollerAlarms,
  PollerMetrics,
} from '../../../infra/constructs/index.ts';
import { USAGE } from '../../../scripts/cost-model.ts';
import { cdkJsonContext, REPO_ROOT } from '../support/poller-app-fixture.ts';

type Json = Record<string, unknown>;

interface AlarmProperties {
  readonly MetricName?: string;
  readonly Dimensions?: { Name: string; Value: string }[];
  readonly Metrics?: { Id: string; Expression?: string; Period?: number; ReturnData?: boolean }[];
  readonly Threshold: number;
  readonly ComparisonOperator: string;
  readonly EvaluationPeriods: number;
  readonly DatapointsToAlarm?: number;
  readonly TreatMissingData: string;
  readonly AlarmDescription: string;
}

function newStack(): Stack {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  return new Stack(app, 'Host', { env: { account: '123456789012', region: 'eu-west-1' } });
}

const programs = (count: number) => Array.from({ length: count }, (_, i) => ({ name: `p${i}` }));

function synth(props: BankingEventsPollerProps) {
  const stack = newStack();
  const poller = new BankingEventsPoller(stack, 'Poller', { alarmActions: AlarmActions.none(), ...props });
  const template = Template.fromStack(stack);
  const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map(
    (resource) => (resource as { Properties: AlarmProperties }).Properties,
  );
  const [fn] = Object.values(template.findResources('AWS::Lambda::Function')) as {
    Properties: { Environment: { Variables: Record<string, unknown> } };
  }[];
  return { poller, template, alarms, environment: fn!.Properties.Environment.Variables };
}

/** The Metrics Insights query of an alarm, if it has one. */
const queryOf = (alarm: AlarmProperties): string | undefined => alarm.Metrics?.[0]?.Expression;
/** Alarms on one program's own dimension. */
const perProgram = (alarms: readonly AlarmProperties[]) =>
  alarms.filter((alarm) => alarm.Dimensions?.some((dimension) => dimension.Name === 'Program'));
/** The metric an alarm's `SELECT <fn>(<metric>)` reads. */
const queriedMetric = (query: string): string => /^SELECT [A-Z]+\("(\w+)"\)/.exec(query)![1]!;

/** Every metric line of the dashboard's widgets: `[namespace, name, dim, value, …, options]` or `[options]`. */
function dashboardLines(template: Template): unknown[][] {
  const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard')) as {
    Properties: { DashboardBody: { 'Fn::Join': [string, unknown[]] } };
  }[];
  // References (regions, names) become placeholders: only the lines' shapes matter here.
  const text = dashboard!.Properties.DashboardBody['Fn::Join'][1]
    .map((part) => (typeof part === 'string' ? part : 'REF'))
    .join('');
  const body = JSON.parse(text) as { widgets: { properties: { metrics?: unknown[][] } }[] };
  return body.widgets.flatMap((widget) => widget.properties.metrics ?? []);
}

describe('the alarm plan', () => {
  it.each([
    [1, false, undefined, { perProgram: true, perCondition: false, programMetrics: 'all' }],
    [
      PER_PROGRAM_ALARMS_UP_TO,
      false,
      undefined,
      { perProgram: true, perCondition: false, programMetrics: 'all' },
    ],
    [
      PER_PROGRAM_ALARMS_UP_TO + 1,
      false,
      undefined,
      { perProgram: false, perCondition: true, programMetrics: 'alarmed' },
    ],
    [1, true, undefined, { perProgram: true, perCondition: true, programMetrics: 'all' }],
    [
      PER_PROGRAM_ALARMS_UP_TO + 1,
      true,
      undefined,
      { perProgram: false, perCondition: true, programMetrics: 'alarmed' },
    ],
    [1, true, true, { perProgram: true, perCondition: true, programMetrics: 'all' }],
    [40, false, true, { perProgram: true, perCondition: false, programMetrics: 'all' }],
    [2, false, false, { perProgram: false, perCondition: true, programMetrics: 'alarmed' }],
  ] as const)(
    '%i program(s) in props, registry %s, perProgramAlarms %s: %o',
    (count, registry, perProgramAlarms, expected) => {
      expect(resolveAlarmPlan({ programs: count, registry, perProgramAlarms })).toEqual(expected);
    },
  );
});

describe(`up to ${PER_PROGRAM_ALARMS_UP_TO} programs: the alarms of today, and the registry's programs alarmed per condition`, () => {
  it('alarms each program of the props on its own dimension, every program per condition, and sends every metric with Program', () => {
    const { alarms, environment, poller } = synth({ programs: programs(PER_PROGRAM_ALARMS_UP_TO) });

    expect(perProgram(alarms)).toHaveLength(USAGE.perProgramAlarms.value * PER_PROGRAM_ALARMS_UP_TO);
    expect(alarms.filter((alarm) => queryOf(alarm) !== undefined)).toHaveLength(USAGE.conditionAlarms.value);
    expect(environment).not.toHaveProperty('PROGRAM_METRICS');
    expect(poller.alarms.conditionAlarms).toBeDefined();
    expect(poller.alarms.workerStallAlarms).toHaveLength(1);
  });

  it('leaves the programs with alarms of their own out of the alarms over every program: one page per condition', () => {
    const { alarms } = synth({ programs: programs(2) });
    const queries = alarms.flatMap((alarm) => queryOf(alarm) ?? []);

    expect(queries).toHaveLength(USAGE.conditionAlarms.value);
    for (const query of queries) {
      expect(query).toMatch(
        /^SELECT (MAX|SUM)\("\w+"\) FROM SCHEMA\("BankingEventsPoller", "Program", "service"\) WHERE "service" = 'banking-events-poller' AND "Program" != 'p0' AND "Program" != 'p1' GROUP BY "Program" ORDER BY (MAX|SUM)\(\) DESC$/,
      );
    }
  });
});

describe('perProgramAlarms', () => {
  it(`is off by default above ${PER_PROGRAM_ALARMS_UP_TO} programs, and on when asked, beside the alarms over every program`, () => {
    const count = PER_PROGRAM_ALARMS_UP_TO + 1;
    const byDefault = synth({ programs: programs(count) });
    const asked = synth({ programs: programs(count), perProgramAlarms: true });

    expect(perProgram(byDefault.alarms)).toEqual([]);
    expect(perProgram(asked.alarms)).toHaveLength(USAGE.perProgramAlarms.value * count);
    expect(asked.poller.alarms.lagAlarms.size).toBe(count);
    expect(asked.environment).not.toHaveProperty('PROGRAM_METRICS');
    const queries = asked.alarms.flatMap((alarm) => queryOf(alarm) ?? []);
    expect(queries).toHaveLength(USAGE.conditionAlarms.value);
    for (const query of queries) expect(query).toContain(`AND "Program" != 'p${count - 1}' GROUP BY`);
  });

  it('can be turned off for a few programs: every program is then alarmed per condition only', () => {
    const off = synth({ programs: programs(2), perProgramAlarms: false });

    expect(perProgram(off.alarms)).toEqual([]);
    expect(off.environment).toMatchObject({ PROGRAM_METRICS: 'alarmed' });
    for (const query of off.alarms.flatMap((alarm) => queryOf(alarm) ?? []))
      expect(query).not.toContain('!=');
  });

  it('queries every program when leaving them all out would pass the 2,048 characters of a query', () => {
    const long = Array.from({ length: 30 }, (_, i) => ({
      name: `${'p'.repeat(60)}${String(i).padStart(4, '0')}`,
    }));
    const { alarms } = synth({ programs: long, perProgramAlarms: true });
    const queries = alarms.flatMap((alarm) => queryOf(alarm) ?? []);

    expect(perProgram(alarms)).toHaveLength(USAGE.perProgramAlarms.value * long.length);
    expect(queries).toHaveLength(USAGE.conditionAlarms.value);
    for (const query of queries) {
      expect(query).not.toContain('!=');
      expect(query.length).toBeLessThanOrEqual(2048);
    }
  });
});

describe('more programs: one alarm per condition, each program a contributor', () => {
  const many = synth({ programs: programs(PER_PROGRAM_ALARMS_UP_TO + 1) });

  it('has no alarm of one program, and tells the function to send only what the alarms read', () => {
    expect(perProgram(many.alarms)).toEqual([]);
    expect(many.environment).toMatchObject({ PROGRAM_METRICS: 'alarmed' });
  });

  it('queries every program at once, grouped and ordered so that each is a contributor', () => {
    const queries = many.alarms.flatMap((alarm) => queryOf(alarm) ?? []);

    expect(queries.map(queriedMetric).sort()).toEqual(
      [
        'FailedEntries',
        'GapsUnfilled',
        'LagSeconds',
        'LeaseBusy',
        'OversizePages',
        'SequenceJumpsHeld',
        'StalledRuns',
      ].sort(),
    );
    for (const query of queries) {
      expect(query).toMatch(
        /^SELECT (MAX|SUM)\("\w+"\) FROM SCHEMA\("BankingEventsPoller", "Program", "service"\) WHERE "service" = 'banking-events-poller' GROUP BY "Program" ORDER BY (MAX|SUM)\(\) DESC$/,
      );
    }
  });

  it('alarms on each condition with the thresholds and periods of a program of its own', () => {
    const byMetric = new Map(
      many.alarms.flatMap((alarm) => (queryOf(alarm) ? [[queriedMetric(queryOf(alarm)!), alarm]] : [])),
    );

    expect(byMetric.get('LagSeconds')).toMatchObject({
      Metrics: [expect.objectContaining({ Period: 60, ReturnData: true })],
      Threshold: 300,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      TreatMissingData: 'notBreaching',
    });
    for (const metric of ['FailedEntries', 'LeaseBusy']) {
      expect(byMetric.get(metric), metric).toMatchObject({
        Threshold: 1,
        EvaluationPeriods: 5,
        DatapointsToAlarm: 3,
        TreatMissingData: 'notBreaching',
      });
    }
    expect(byMetric.get('GapsUnfilled')).toMatchObject({ Threshold: 1, EvaluationPeriods: 1 });
    // As a program's own SequenceJumps alarm: in alarm while any jump awaits a decision.
    expect(byMetric.get('SequenceJumpsHeld')).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
      AlarmDescription: expect.stringMatching(/Runbook: docs\/runbook\.md#alarm-sequence-jumps$/),
    });
    expect(queryOf(byMetric.get('SequenceJumpsHeld')!)).toMatch(/^SELECT MAX\("SequenceJumpsHeld"\) /);
    // A bank that ignores `limit` may do so in one poll only (a backlog read at once): one page pages.
    expect(byMetric.get('OversizePages')).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
      AlarmDescription: expect.stringMatching(
        /^A program's feed answered a page with more events than the poll asked for.*Runbook: docs\/runbook\.md#alarm-oversize-pages$/,
      ),
    });
    expect(queryOf(byMetric.get('OversizePages')!)).toMatch(/^SELECT SUM\("OversizePages"\) /);
    // Five one-minute periods (stallAfter 5 minutes), a run in four of them: one may hold no run.
    expect(byMetric.get('StalledRuns')).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 5,
      DatapointsToAlarm: 4,
      TreatMissingData: 'notBreaching',
    });
  });

  it('reads only metrics the handler sends with Program under PROGRAM_METRICS=alarmed', () => {
    for (const alarm of many.alarms) {
      const query = queryOf(alarm);
      if (query === undefined) continue;
      const metric = queriedMetric(query) as MetricName;
      expect(METRIC_NAMES).toContain(metric);
      expect(METRIC_PLANS[metric].ofProgram, metric).not.toBe(false);
    }
  });

  it('links every alarm to its section of the runbook', () => {
    const runbook = readFileSync(path.join(REPO_ROOT, 'docs/runbook.md'), 'utf8');
    for (const alarm of many.alarms) {
      const anchor = /Runbook: docs\/runbook\.md#(alarm-[a-z-]+)$/.exec(alarm.AlarmDescription)?.[1];
      expect(anchor, alarm.AlarmDescription).toBeDefined();
      expect(runbook, `docs/runbook.md has no anchor ${anchor}`).toContain(`<a id="${anchor}"></a>`);
    }
  });

  it('keeps the number of alarms whatever the number of programs, as docs/cost.md counts them', () => {
    const more = synth({ programs: programs(60) });
    const queryAlarms = many.alarms.filter((alarm) => queryOf(alarm) !== undefined);

    expect(more.alarms).toHaveLength(many.alarms.length);
    expect(queryAlarms).toHaveLength(USAGE.conditionAlarms.value);
    // One worker by default: its stall alarm.
    expect(many.alarms.length - queryAlarms.length - 1).toBe(USAGE.stackAlarms.value);
  });

  it('alarms on a broken order over every program on the custom bus', () => {
    const custom = synth({ programs: programs(8), eventBusKind: 'custom' });

    expect(custom.alarms.flatMap((alarm) => queryOf(alarm) ?? []).map(queriedMetric)).toContain(
      'OrderBroken',
    );
    expect(custom.poller.alarms.conditionAlarms?.orderBroken).toBeDefined();
    expect(custom.poller.alarms.orderBrokenAlarms.size).toBe(0);
  });

  it('reads at most the 3 hours of a Metrics Insights alarm, whatever the stall window', () => {
    const long = synth({ programs: programs(8), stallAfter: Duration.hours(6) });
    const stall = long.alarms.find((alarm) => queryOf(alarm)?.includes('"StalledRuns"'));

    expect(stall).toMatchObject({ EvaluationPeriods: 180, DatapointsToAlarm: 179 });
  });

  it('counts unfilled gaps as soon as skipped without gap repair', () => {
    const noRepair = synth({ programs: programs(8), gapRepair: { maxLookups: 0 } });

    expect(noRepair.alarms.flatMap((alarm) => queryOf(alarm) ?? []).map(queriedMetric)).toContain(
      'SequenceGaps',
    );
  });

  it('shows the worst programs on the dashboard from the same queries, and no line per program', () => {
    const lines = dashboardLines(many.template);
    const expressions = lines.flatMap((line) => {
      const options = line.at(-1) as { expression?: string } | undefined;
      return options?.expression === undefined ? [] : [options.expression];
    });

    for (const metric of [
      'LagSeconds',
      'StalledRuns',
      'FailedEntries',
      'LeaseBusy',
      'CycleFailures',
      'SequenceJumpsHeld',
      'OversizePages',
    ]) {
      expect(expressions, metric).toContainEqual(
        expect.stringMatching(
          new RegExp(`^SELECT (MAX|SUM)\\("${metric}"\\) .* GROUP BY "Program" ORDER BY .* LIMIT 10$`),
        ),
      );
    }
    expect(expressions).toContainEqual(expect.stringContaining('GROUP BY "Worker"'));
    expect(lines.filter((line) => line.includes('Program'))).toEqual([]);
    // Today's dashboard, by contrast, has a line per program, and the worst of every program below
    // (programs the CLI adds have no line of their own).
    const few = synth({ programs: programs(2) });
    const fewLines = dashboardLines(few.template);
    expect(fewLines.filter((line) => line.includes('Program')).length).toBeGreaterThan(0);
    expect(
      fewLines.flatMap((line) => (line.at(-1) as { expression?: string } | undefined)?.expression ?? []),
    ).toContainEqual(
      expect.stringMatching(/^SELECT SUM\("StalledRuns"\) .* GROUP BY "Program" .* LIMIT 10$/),
    );
  });
});

describe("each worker's stall alarm", () => {
  function alarmsWith(workers: number, stallAfter = Duration.minutes(5)) {
    const stack = newStack();
    const fn = lambda.Function.fromFunctionName(stack, 'Fn', 'poller');
    new PollerAlarms(stack, 'Alarms', {
      programs: [],
      perProgramAlarms: false,
      perConditionAlarms: true,
      workers,
      metrics: new PollerMetrics('BankingEventsPoller'),
      pollerFunction: fn,
      scheduleDeadLetterQueue: new sqs.Queue(stack, 'Dlq'),
      routes: [],
      scheduleInterval: Duration.minutes(1),
      lagThreshold: Duration.minutes(5),
      lagPeriods: 3,
      gapRepair: true,
      stallAfter,
      alarmActions: AlarmActions.none(),
      runbookUrl: 'docs/runbook.md',
    });
    return Template.fromStack(stack);
  }

  it('counts the runs each worker finishes, missing data breaching, like a program of its own', () => {
    const template = alarmsWith(3);

    for (const worker of ['0', '1', '2']) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'WorkerDurationMs',
        Dimensions: [
          { Name: 'Worker', Value: worker },
          { Name: 'service', Value: 'banking-events-poller' },
        ],
        Statistic: 'SampleCount',
        Period: 60,
        Threshold: 1,
        ComparisonOperator: 'LessThanThreshold',
        EvaluationPeriods: 5,
        DatapointsToAlarm: 5,
        TreatMissingData: 'breaching',
        AlarmDescription: Match.stringLikeRegexp('Runbook: docs/runbook.md#alarm-worker-stall$'),
      });
    }
    expect(
      Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter(
        (alarm) => (alarm as { Properties: Json }).Properties.MetricName === 'WorkerDurationMs',
      ),
    ).toHaveLength(3);
  });

  it('has none without workers', () => {
    const template = alarmsWith(0);

    expect(JSON.stringify(template.toJSON())).not.toContain('WorkerDurationMs');
  });
});

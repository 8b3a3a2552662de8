import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  METRIC_PLANS,
  PROGRAM_LAG_FLOOR_SECONDS,
} from '../../../../functions/adapters/observability/metric-plan.ts';
import { PowertoolsMetricsSink } from '../../../../functions/adapters/observability/powertools-metrics-sink.ts';
import { METRIC_NAMES } from '../../../../functions/core/ports.ts';
import { SETTINGS } from '../../../../functions/settings/settings.ts';
import type { IntegerKind } from '../../../../functions/settings/value-kinds.ts';

type Emf = Record<string, unknown> & { _aws: { CloudWatchMetrics: Array<{ Dimensions: string[][] }> } };

/** Runs `act` with a real Powertools Metrics instance and returns the EMF documents it printed. */
function captureEmf(act: (metrics: Metrics) => void): Emf[] {
  const lines: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    act(new Metrics({ namespace: 'Test', serviceName: 'banking-events-poller' }));
  } finally {
    vi.restoreAllMocks();
  }
  return lines.filter((line) => line.includes('"_aws"')).map((line) => JSON.parse(line) as Emf);
}

const dimensionsOf = (document: Emf): string[][] => document._aws.CloudWatchMetrics[0]!.Dimensions;

/** The metric names a document holds (its keys that are neither dimensions nor `_aws`). */
function metricNamesOf(document: Emf): string[] {
  const dimensions = new Set(dimensionsOf(document).flat());
  return Object.keys(document).filter((key) => key !== '_aws' && !dimensions.has(key));
}

afterEach(() => vi.restoreAllMocks());

describe('PowertoolsMetricsSink, every metric of a program with its Program (plan all)', () => {
  it('writes one EMF document per flush: counts summed, gauges at their maximum', () => {
    const emf = captureEmf((metrics) => {
      const sink = new PowertoolsMetricsSink(metrics);
      sink.add('EventsPublished', 'Count', 10);
      sink.add('EventsPublished', 'Count', 5);
      sink.add('LagSeconds', 'Seconds', 30);
      sink.add('LagSeconds', 'Seconds', 0);
      sink.add('CheckpointSequence', 'None', 41);
      sink.add('CheckpointSequence', 'None', 57);
      sink.add('CycleDurationMs', 'Milliseconds', 55_000);
      sink.flush({ program: 'cards', plan: 'all' });
    });

    expect(emf).toHaveLength(1);
    expect(emf[0]).toMatchObject({
      Program: 'cards',
      service: 'banking-events-poller',
      EventsPublished: 15,
      LagSeconds: 30,
      CheckpointSequence: 57,
    });
  });

  it('keeps the Program dimension on every metric of a long catch-up (hundreds of pages)', () => {
    const emf = captureEmf((metrics) => {
      const sink = new PowertoolsMetricsSink(metrics);
      for (let page = 1; page <= 250; page += 1) {
        sink.add('EventsPublished', 'Count', 100);
        sink.add('LagSeconds', 'Seconds', 250 - page);
        sink.add('CheckpointSequence', 'None', page * 100);
      }
      sink.add('CycleDurationMs', 'Milliseconds', 55_000);
      sink.flush({ program: 'cards', plan: 'all' });
    });

    expect(emf).toHaveLength(1);
    expect(dimensionsOf(emf[0]!)).toEqual([['service', 'Program']]);
    expect(emf[0]).toMatchObject({
      EventsPublished: 25_000,
      CheckpointSequence: 25_000,
      CycleDurationMs: 55_000,
    });
  });

  it('sends no count of 0, and every gauge whatever its value', () => {
    const [document] = captureEmf((metrics) => {
      const sink = new PowertoolsMetricsSink(metrics);
      sink.add('PollRequests', 'Count', 3);
      sink.add('FailedEntries', 'Count', 0);
      sink.add('EventsPublished', 'Count', 0);
      sink.add('LagSeconds', 'Seconds', 0);
      sink.add('ClientCertificateDaysLeft', 'Count', 0);
      sink.add('CycleDurationMs', 'Milliseconds', 1_000);
      sink.flush({ program: 'cards', plan: 'all' });
    });

    expect(metricNamesOf(document!).sort()).toEqual(
      ['ClientCertificateDaysLeft', 'CycleDurationMs', 'LagSeconds', 'PollRequests'].sort(),
    );
    expect(document).toMatchObject({ LagSeconds: 0, ClientCertificateDaysLeft: 0 });
  });

  it('counts a run without a healthy cycle in StalledRuns, and a healthy one not', () => {
    const emf = captureEmf((metrics) => {
      const stalled = new PowertoolsMetricsSink(metrics);
      stalled.add('LeaseBusy', 'Count', 1);
      stalled.flush({ program: 'cards', plan: 'all' });
      const healthy = new PowertoolsMetricsSink(metrics);
      healthy.add('CycleDurationMs', 'Milliseconds', 60_000);
      healthy.flush({ program: 'loans', plan: 'all' });
      // Not reached: nothing added at all, and still a run of the program.
      new PowertoolsMetricsSink(metrics).flush({ program: 'savings', plan: 'all' });
    });

    expect(emf).toEqual([
      expect.objectContaining({ Program: 'cards', LeaseBusy: 1, StalledRuns: 1 }),
      expect.not.objectContaining({ StalledRuns: expect.anything() }),
      expect.objectContaining({ Program: 'savings', StalledRuns: 1 }),
    ]);
    expect(emf[1]).toMatchObject({ Program: 'loans', CycleDurationMs: 60_000 });
  });

  it("keeps concurrent programs' values and dimensions apart on one Metrics", () => {
    const emf = captureEmf((metrics) => {
      const cards = new PowertoolsMetricsSink(metrics);
      const loans = new PowertoolsMetricsSink(metrics);
      cards.add('EventsPublished', 'Count', 7);
      loans.add('EventsPublished', 'Count', 2);
      cards.add('CycleDurationMs', 'Milliseconds', 1);
      loans.add('CycleDurationMs', 'Milliseconds', 2);
      loans.flush({ program: 'loans', plan: 'all' });
      cards.add('EventsPublished', 'Count', 1);
      cards.flush({ program: 'cards', plan: 'all' });
    });

    expect(emf).toEqual([
      expect.objectContaining({ Program: 'loans', EventsPublished: 2 }),
      expect.objectContaining({ Program: 'cards', EventsPublished: 8 }),
    ]);
    expect(emf.map(dimensionsOf)).toEqual([[['service', 'Program']], [['service', 'Program']]]);
  });
});

describe('PowertoolsMetricsSink, a fleet: what the per-condition alarms read (plan alarmed)', () => {
  /** One run of a program in trouble: every metric the handler emits, none at 0. */
  function troubledRun(metrics: Metrics, lagSeconds: number, certificateDays: number): void {
    const sink = new PowertoolsMetricsSink(metrics);
    for (const name of METRIC_NAMES) {
      if (name !== 'CycleDurationMs')
        sink.add(name, METRIC_PLANS[name].kind === 'count' ? 'Count' : 'None', 2);
    }
    sink.add('LagSeconds', 'Seconds', lagSeconds);
    sink.add('ClientCertificateDaysLeft', 'Count', certificateDays);
    sink.flush({ program: 'cards', plan: 'alarmed' });
  }

  it("sends everything once for the deployment, and the program's own copy only of what the alarms read", () => {
    const [deployment, program, ...rest] = captureEmf((metrics) => troubledRun(metrics, 600, 10));

    expect(rest).toEqual([]);
    expect(dimensionsOf(deployment!)).toEqual([['service']]);
    expect(deployment).not.toHaveProperty('Program');
    expect(metricNamesOf(deployment!)).not.toContain('CheckpointSequence');
    expect(metricNamesOf(deployment!)).toEqual(
      expect.arrayContaining(['EventsPublished', 'PollErrors', 'LagSeconds']),
    );
    expect(dimensionsOf(program!)).toEqual([['service', 'Program']]);
    expect(program).toMatchObject({ Program: 'cards', LagSeconds: 600, ClientCertificateDaysLeft: 10 });
    expect(metricNamesOf(program!).sort()).toEqual(
      [
        'ClientCertificateDaysLeft',
        'CycleFailures',
        'FailedEntries',
        'GapsUnfilled',
        'LagSeconds',
        'LeaseBusy',
        'OrderBroken',
        'OversizePages',
        'SequenceGaps',
        'SequenceJumpsHeld',
        'StalledRuns',
      ].sort(),
    );
  });

  it(`sends a program's lag from ${PROGRAM_LAG_FLOOR_SECONDS} s and its certificate from 30 days left, for the deployment always`, () => {
    const [deployment, program] = captureEmf((metrics) =>
      troubledRun(metrics, PROGRAM_LAG_FLOOR_SECONDS - 1, 31),
    );
    const [, atTheFloor] = captureEmf((metrics) => troubledRun(metrics, PROGRAM_LAG_FLOOR_SECONDS, 30));

    expect(deployment).toMatchObject({
      LagSeconds: PROGRAM_LAG_FLOOR_SECONDS - 1,
      ClientCertificateDaysLeft: 31,
    });
    expect(metricNamesOf(program!)).not.toContain('LagSeconds');
    expect(metricNamesOf(program!)).not.toContain('ClientCertificateDaysLeft');
    expect(atTheFloor).toMatchObject({
      Program: 'cards',
      LagSeconds: PROGRAM_LAG_FLOOR_SECONDS,
      ClientCertificateDaysLeft: 30,
    });
  });

  it('sends a program its held sequence jumps with its Program from one, none at 0', () => {
    const sent = (held: number) =>
      captureEmf((metrics) => {
        const sink = new PowertoolsMetricsSink(metrics);
        sink.add('PollRequests', 'Count', 1);
        // A healthy cycle, so no StalledRuns of its own.
        sink.add('CycleDurationMs', 'Milliseconds', 60_000);
        sink.add('SequenceJumpsHeld', 'None', held);
        sink.flush({ program: 'cards', plan: 'alarmed' });
      });

    expect(sent(0).filter((document) => 'Program' in document)).toEqual([]);
    expect(sent(1).filter((document) => 'Program' in document)).toEqual([
      expect.objectContaining({ Program: 'cards', SequenceJumpsHeld: 1 }),
    ]);
  });

  it('sends nothing of a healthy caught-up program but the deployment-wide copy', () => {
    const emf = captureEmf((metrics) => {
      const sink = new PowertoolsMetricsSink(metrics);
      sink.add('PollRequests', 'Count', 3);
      sink.add('LagSeconds', 'Seconds', 0);
      sink.add('CheckpointSequence', 'None', 41);
      sink.add('CycleDurationMs', 'Milliseconds', 60_000);
      sink.flush({ program: 'cards', plan: 'alarmed' });
    });

    expect(emf).toHaveLength(1);
    expect(dimensionsOf(emf[0]!)).toEqual([['service']]);
    expect(metricNamesOf(emf[0]!).sort()).toEqual(['CycleDurationMs', 'LagSeconds', 'PollRequests']);
  });

  it("sends a worker's own metrics with its Worker, never a Program or StalledRuns", () => {
    const emf = captureEmf((metrics) => {
      const sink = new PowertoolsMetricsSink(metrics);
      sink.add('WorkerDurationMs', 'Milliseconds', 64_000);
      sink.add('ProgramsNotReached', 'Count', 3);
      sink.add('ProgramRecordsRefused', 'Count', 0);
      sink.flush({ worker: 4, plan: 'alarmed' });
    });

    expect(emf).toHaveLength(1);
    expect(dimensionsOf(emf[0]!)).toEqual([['service', 'Worker']]);
    expect(emf[0]).toMatchObject({ Worker: '4', WorkerDurationMs: 64_000, ProgramsNotReached: 3 });
    expect(metricNamesOf(emf[0]!).sort()).toEqual(['ProgramsNotReached', 'WorkerDurationMs']);
  });
});

describe('the metric plan', () => {
  it("floors a program's lag at the smallest lag threshold a deployment may set", () => {
    expect(PROGRAM_LAG_FLOOR_SECONDS).toBe((SETTINGS.lagThresholdSeconds.kind as IntegerKind).min);
  });
});

import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PowertoolsMetricsSink } from '../../../../functions/adapters/observability/powertools-metrics-sink.ts';

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

afterEach(() => vi.restoreAllMocks());

describe('PowertoolsMetricsSink', () => {
  it('writes one EMF document per flush: counts summed, gauges at their maximum', () => {
    const emf = captureEmf((metrics) => {
      metrics.setDefaultDimensions({ Program: 'cards' });
      const sink = new PowertoolsMetricsSink(metrics);
      sink.add('EventsPublished', 'Count', 10);
      sink.add('EventsPublished', 'Count', 5);
      sink.add('LagSeconds', 'Seconds', 30);
      sink.add('LagSeconds', 'Seconds', 0);
      sink.add('CheckpointSequence', 'None', 41);
      sink.add('CheckpointSequence', 'None', 57);
      sink.flush();
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
      metrics.setDefaultDimensions({ Program: 'cards' });
      const sink = new PowertoolsMetricsSink(metrics);
      for (let page = 1; page <= 250; page += 1) {
        sink.add('EventsPublished', 'Count', 100);
        sink.add('LagSeconds', 'Seconds', 250 - page);
        sink.add('CheckpointSequence', 'None', page * 100);
      }
      sink.add('CycleDurationMs', 'Milliseconds', 55_000);
      sink.flush();
    });

    expect(emf).toHaveLength(1);
    expect(emf[0]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'Program']]);
    expect(emf[0]).toMatchObject({
      EventsPublished: 25_000,
      CheckpointSequence: 25_000,
      CycleDurationMs: 55_000,
    });
  });
});

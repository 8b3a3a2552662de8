/**
 * What the shipped function sends CloudWatch, read off its output under the runtime harness: under
 * `PROGRAM_METRICS=alarmed` (a fleet's per-condition alarms) a program's own metrics only while
 * something is wrong, everything once for the deployment; under the default `all` every metric
 * with its `Program`; and a run without a healthy cycle counted in `StalledRuns` either way.
 */
import { describe, expect, it } from 'vitest';
import { emfDocuments, summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';

const scenarios = usePollerScenarios(3_500);
const scenario = scenarios.start;

type Emf = Record<string, unknown> & { _aws: { CloudWatchMetrics: { Dimensions: string[][] }[] } };

const documents = (stdout: string): Emf[] => emfDocuments(stdout) as Emf[];
const dimensionsOf = (document: Emf): string[][] => document._aws.CloudWatchMetrics[0]!.Dimensions;
const ofProgram = (document: Emf): boolean => dimensionsOf(document).flat().includes('Program');

describe('PROGRAM_METRICS=alarmed: a fleet', () => {
  it("sends a healthy program's run for the deployment only: no metric of its own", async () => {
    const s = await scenario({ environment: { PROGRAM_METRICS: 'alarmed' } });
    s.simulator.generate(5);

    const invocation = await s.invoke();

    expect(summaryOf(invocation)).toMatchObject({ status: 'completed', published: 5 });
    const emf = documents(invocation.stdout);
    expect(emf.filter(ofProgram)).toEqual([]);
    expect(emf).toHaveLength(1);
    expect(dimensionsOf(emf[0]!)).toEqual([['service']]);
    expect(emf[0]).toMatchObject({ EventsPublished: 5, CycleDurationMs: expect.any(Number) });
    expect(emf[0]).not.toHaveProperty('CheckpointSequence');
    expect(emf[0]).not.toHaveProperty('StalledRuns');
  });

  it('names a run that failed with its Program, in StalledRuns, beside the deployment-wide counts', async () => {
    const s = await scenario({ environment: { PROGRAM_METRICS: 'alarmed' } });
    s.simulator.generate(2);
    s.simulator.faults.malformedNext(1, 'bad-schema');

    const failed = await s.invoke();

    expect(failed.outcome).toMatchObject({ kind: 'error', errorType: 'PayloadValidationError' });
    const emf = documents(failed.stdout);
    const [program, ...others] = emf.filter(ofProgram);
    expect(others).toEqual([]);
    expect(dimensionsOf(program!)).toEqual([['service', 'Program']]);
    expect(program).toMatchObject({ Program: s.program, StalledRuns: 1 });
    expect(program).not.toHaveProperty('PollRequests');
    expect(emf.filter((document) => !ofProgram(document))).toEqual([
      expect.objectContaining({ PollRequests: 1, StalledRuns: 1 }),
    ]);
  });
});

describe('PROGRAM_METRICS unset (all): a few programs, each with its own alarms', () => {
  it('sends every metric of the run with its Program, a failed run counted in StalledRuns', async () => {
    const s = await scenario();
    s.simulator.generate(2);
    s.simulator.faults.malformedNext(1, 'bad-schema');

    const failed = await s.invoke();
    const healthy = await s.invoke();

    expect(documents(failed.stdout)).toEqual([
      expect.objectContaining({ Program: s.program, PollRequests: 1, StalledRuns: 1 }),
    ]);
    expect(summaryOf(healthy).published).toBe(2);
    const [metrics, ...rest] = documents(healthy.stdout);
    expect(rest).toEqual([]);
    expect(metrics).toMatchObject({
      Program: s.program,
      EventsPublished: 2,
      CycleDurationMs: expect.any(Number),
    });
    expect(metrics).not.toHaveProperty('StalledRuns');
  });
});

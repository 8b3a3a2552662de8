/**
 * The full fault matrix (`npm run test:faults`): every scenario of `fault-scenarios.ts`, each run
 * `runs` times with its own seed (printed in every assertion message), through the shipped
 * artifact. With FAULT_MATRIX_REPORT set, the figures of every run (events, lost, duplicates; on
 * the custom bus also the re-sends it de-duplicated) are written there as JSON;
 * docs/reliability.md is written from them.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, describe, it } from 'vitest';
import { useFaultEnvironment } from '../support/fault-run.ts';
import { FAULT_SCENARIOS, type ScenarioResult } from '../support/fault-scenarios.ts';

const environment = useFaultEnvironment();
/** FAULT_MATRIX_SEED shifts every seed, to explore; the default reproduces the recorded report. */
const BASE_SEED = Number(process.env.FAULT_MATRIX_SEED ?? 20_000);
const results = new Map<string, (ScenarioResult & { readonly seed: number })[]>();

afterAll(() => {
  const path = process.env.FAULT_MATRIX_REPORT;
  if (path === undefined) return;
  const rows = FAULT_SCENARIOS.map((scenario) => {
    const runs = results.get(scenario.id) ?? [];
    return {
      id: scenario.id,
      group: scenario.group,
      fault: scenario.fault,
      bus: scenario.bus ?? 'classic',
      planned: scenario.runs,
      runs: runs.length,
      events: runs.reduce((sum, run) => sum + run.events, 0),
      lost: runs.reduce((sum, run) => sum + run.lost, 0),
      maxDuplicates: runs.reduce((max, run) => Math.max(max, run.duplicates), 0),
      // Custom bus: the most re-sent entries one run's bus answered DEDUPLICATED (and delivered once).
      ...(scenario.bus === 'custom'
        ? { maxDeduplicated: runs.reduce((max, run) => Math.max(max, run.deduplicated ?? 0), 0) }
        : {}),
      // The seeds of the runs that passed; a planned run missing here failed (its seed is in its test name).
      seeds: runs.map((run) => run.seed).sort((a, b) => a - b),
    };
  });
  writeFileSync(
    path,
    `${JSON.stringify({ baseSeed: BASE_SEED, at: new Date().toISOString(), rows }, null, 2)}\n`,
  );
});

function seedOf(id: string, run: number): number {
  const offset = FAULT_SCENARIOS.findIndex((scenario) => scenario.id === id) * 100;
  return BASE_SEED + offset + run;
}

for (const scenario of FAULT_SCENARIOS) {
  describe(`${scenario.group}: ${scenario.id}`, () => {
    it.concurrent.each(
      Array.from({ length: scenario.runs }, (_, run) => [run + 1, seedOf(scenario.id, run)]),
    )('run %i (seed %i): nothing lost', async (_run, seed) => {
      const result = await scenario.run(environment, seed);
      const runs = results.get(scenario.id) ?? [];
      runs.push({ ...result, seed });
      results.set(scenario.id, runs);
    });
  });
}

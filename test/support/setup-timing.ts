/**
 * One line per global setup step with its time (`setup: npm run build 4.2 s`), so a run's log
 * says what the time before the first test went to.
 */
export async function timedSetup<T>(label: string, work: () => T | Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  console.log(`setup: ${label} ${((performance.now() - started) / 1_000).toFixed(1)} s`);
  return result;
}

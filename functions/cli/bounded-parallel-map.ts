/**
 * Runs `work` over `items` with at most `limit` at once and gives the results in the items'
 * order: a command covering a thousand programs finishes in minutes, not an hour, without
 * opening a thousand requests at once.
 */
export async function boundedParallelMap<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a whole number of at least 1, got ${limit}`);
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

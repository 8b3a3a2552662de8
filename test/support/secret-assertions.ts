import { inspect } from 'node:util';
import { expect } from 'vitest';

/**
 * Asserts that nothing a log line could show of `error` (its message, its context as JSON, its
 * inspected form with the cause chain) contains a string or matches a pattern in `secrets`.
 */
export function expectNoSecretShown(error: unknown, secrets: readonly (string | RegExp)[]): void {
  const shown = [
    (error as Error).message,
    JSON.stringify((error as { context?: unknown }).context ?? {}),
    inspect(error, { depth: 5 }),
  ].join('\n');
  for (const secret of secrets) {
    if (typeof secret === 'string') expect(shown).not.toContain(secret);
    else expect(shown).not.toMatch(secret);
  }
}

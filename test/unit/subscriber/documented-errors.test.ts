import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string): string => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

describe("the subscriber kit's errors", () => {
  it('are each listed, with their code, in docs/subscribers.md', () => {
    const codes = [...read('functions/subscriber/errors.ts').matchAll(/super\(\s*'([A-Z_]+)'/g)].map(
      ([, code]) => code!,
    );
    const page = read('docs/subscribers.md');
    const listed = [...page.matchAll(/^\| `(\w+)` \(`([A-Z_]+)`\) \|/gm)].map(([, , code]) => code!);

    expect(codes).toContain('EVENT_UNSAFE_INTEGER');
    expect(listed.sort()).toEqual(codes.sort());
  });
});

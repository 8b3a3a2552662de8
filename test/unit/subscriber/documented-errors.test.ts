import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string): string => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

describe("the subscriber kit's errors", () => {
  it('are each listed, with their code, in the README\'s "Write a subscriber" section', () => {
    const codes = [...read('functions/subscriber/errors.ts').matchAll(/super\(\s*'([A-Z_]+)'/g)].map(
      ([, code]) => code!,
    );
    const readme = read('README.md');
    const section = readme.slice(readme.indexOf('## Write a subscriber'), readme.indexOf('## Deploy'));
    const listed = [...section.matchAll(/^\| `(\w+)` \(`([A-Z_]+)`\) \|/gm)].map(([, , code]) => code!);

    expect(codes).toContain('EVENT_UNSAFE_INTEGER');
    expect(listed.sort()).toEqual(codes.sort());
  });
});

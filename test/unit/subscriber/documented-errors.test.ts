import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SUBSCRIBER_ERRORS } from '../../../functions/subscriber/errors.ts';

const read = (path: string): string => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

describe("the subscriber kit's errors", () => {
  it('are each listed, by class and code, in docs/subscribers.md', () => {
    const errors = SUBSCRIBER_ERRORS.map((errorClass) => `${errorClass.name} ${errorClass.code}`);
    const page = read('docs/subscribers.md');
    const listed = [...page.matchAll(/^\| `(\w+)` \(`([A-Z_]+)`\) \|/gm)].map(
      ([, name, code]) => `${name} ${code}`,
    );

    expect(listed.sort()).toEqual(errors.sort());
  });
});

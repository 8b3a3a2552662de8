import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EVENT_SCHEMA_DEFINITIONS } from '../../../functions/event-schema/event-json-schema.ts';
import { renderEventTypes } from '../../../scripts/event-types-renderer.ts';

const GENERATED = new URL('../../../functions/event-schema/event-types.generated.ts', import.meta.url);

describe('generated event types', () => {
  it('are exactly what the schema renders to (run npm run generate:types after changing the schema)', () => {
    expect(readFileSync(GENERATED, 'utf8')).toBe(renderEventTypes(EVENT_SCHEMA_DEFINITIONS));
  });

  it('follow a change of the schema: a new enum value and a new required member show in the types', () => {
    const changed = {
      ...EVENT_SCHEMA_DEFINITIONS,
      TransactionStatus: { type: 'string' as const, enum: ['PENDING', 'COMPLETE', 'ERROR', 'REVERSED'] },
      ClaimCheck: {
        ...EVENT_SCHEMA_DEFINITIONS.ClaimCheck,
        required: [...(EVENT_SCHEMA_DEFINITIONS.ClaimCheck?.required ?? []), 'region'],
        properties: {
          ...EVENT_SCHEMA_DEFINITIONS.ClaimCheck?.properties,
          region: { type: 'string' as const },
        },
      },
    };

    const rendered = renderEventTypes(changed);

    expect(rendered).not.toBe(renderEventTypes(EVENT_SCHEMA_DEFINITIONS));
    expect(rendered).toContain(
      "export type TransactionStatus = 'PENDING' | 'COMPLETE' | 'ERROR' | 'REVERSED';",
    );
    expect(rendered).toMatch(/export interface ClaimCheck \{[^}]*readonly region: string;/);
  });

  it('renders optional members, nullable types, arrays and open payloads as the schema says', () => {
    const rendered = renderEventTypes({
      Sample: {
        type: 'object',
        required: ['id', 'seen'],
        properties: {
          id: { type: ['string', 'null'] },
          seen: { type: 'array', items: { type: ['integer', 'null'] } },
          note: { type: 'string', description: 'Free text' },
          'odd-name': { $ref: '#/definitions/Other' },
          anything: {},
        },
        additionalProperties: true,
      },
    });

    expect(rendered).toContain('  readonly id: string | null;\n');
    expect(rendered).toContain('  readonly seen: readonly (number | null)[];\n');
    expect(rendered).toContain('  /** Free text */\n  readonly note?: string;\n');
    expect(rendered).toContain("  readonly 'odd-name'?: Other;\n");
    expect(rendered).toContain('  readonly anything?: unknown;\n');
    expect(rendered).toContain('  readonly [field: string]: unknown;\n');
  });

  it('refuses a reference it cannot resolve to a definition name', () => {
    expect(() => renderEventTypes({ Bad: { $ref: 'http://example.com/schema.json' } })).toThrow(
      /Unsupported \$ref http:\/\/example.com\/schema.json/,
    );
  });
});

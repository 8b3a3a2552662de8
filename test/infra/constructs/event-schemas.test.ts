import { describe, expect, it } from 'vitest';
import { EventGenerator } from '../../../functions/simulator/event-generator.ts';
import { createRandom } from '../../../functions/simulator/seeded-random.ts';
import { eventJsonSchema } from '../../../infra/constructs/event-schemas.ts';

interface PropertySchema {
  readonly type?: string;
  readonly enum?: readonly string[];
}

function dataProperties(eventType: string): Record<string, PropertySchema> {
  const schema = eventJsonSchema('banking.events', eventType) as {
    definitions: Record<string, { properties: { data: { properties?: Record<string, PropertySchema> } } }>;
  };
  const detail = Object.values(schema.definitions)[0]!;
  return detail.properties.data.properties ?? {};
}

describe('event JSON Schemas', () => {
  it('describe the documented data fields of account_status and transaction events', () => {
    expect(dataProperties('account_status').status?.enum).toEqual(['PENDING', 'OPEN', 'FROZEN', 'CLOSED']);
    expect(dataProperties('transaction').type?.enum).toEqual([
      'card',
      'fee',
      'inbound',
      'intra',
      'outbound',
      'system',
    ]);
    expect(dataProperties('transaction').amount?.type).toBe('number');
  });

  it('leave data of an unknown type open', () => {
    expect(dataProperties('card_status')).toEqual({});
  });

  it('accept the data of realistic generated events: every field typed as the schema says', () => {
    const generator = new EventGenerator({ random: createRandom(3), unknownTypeRatio: 0, now: Date.now });
    for (let i = 0; i < 500; i += 1) {
      const event = generator.next();
      const properties = dataProperties(event.type.toLowerCase());
      for (const [field, value] of Object.entries(event.data)) {
        const property = properties[field];
        if (property === undefined) continue;
        if (property.enum !== undefined) expect(property.enum, `${event.type}.${field}`).toContain(value);
        if (property.type === 'string') expect(typeof value, `${event.type}.${field}`).toBe('string');
        if (property.type === 'number') expect(typeof value, `${event.type}.${field}`).toBe('number');
      }
    }
  });
});

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  EVENT_SCHEMA_DEFINITIONS,
  type JsonSchema,
} from '../../../functions/event-schema/event-json-schema.ts';
import { EventGenerator } from '../../../functions/simulator/event-generator.ts';
import { createRandom } from '../../../functions/simulator/seeded-random.ts';
import { eventJsonSchema } from '../../../infra/constructs/event-schemas.ts';
import { delivered, PROGRAM_ID, pointerOf, published } from '../../support/published-events.ts';
import { REPO_ROOT } from '../support/poller-app-fixture.ts';

const SOURCE = 'banking.events';
const CHECKER = path.join(REPO_ROOT, 'test/infra/support/json_schema_check.py');

function dataProperties(eventType: string): Readonly<Record<string, JsonSchema>> {
  const schema = eventJsonSchema(SOURCE, eventType);
  const detailName = eventType === 'transaction' ? 'TransactionDetail' : 'AccountStatusDetail';
  const data = schema.definitions?.[detailName]?.properties?.data;
  const dataName = data?.$ref?.replace('#/definitions/', '');
  return (dataName === undefined ? data : schema.definitions?.[dataName])?.properties ?? {};
}

/** The enum a property has, directly or through its `$ref`. */
function enumOf(property: JsonSchema | undefined): readonly string[] | undefined {
  if (property?.$ref === undefined) return property?.enum;
  return EVENT_SCHEMA_DEFINITIONS[property.$ref.replace('#/definitions/', '')]?.enum;
}

/** Each instance's first error by the reference draft-4 validator (Python `jsonschema`), or null. */
function validate(schema: JsonSchema, instances: readonly unknown[]): (string | null)[] {
  const run = spawnSync('python3', [CHECKER], {
    input: JSON.stringify({ schema, instances }),
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`json_schema_check.py failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as (string | null)[];
}

describe('event JSON Schemas', () => {
  it('describe the documented data fields of account_status and transaction events', () => {
    expect(enumOf(dataProperties('account_status').status)).toEqual(['PENDING', 'OPEN', 'FROZEN', 'CLOSED']);
    expect(enumOf(dataProperties('transaction').type)).toEqual([
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
    const schema = eventJsonSchema(SOURCE, 'card_status');

    expect(schema.definitions?.UnknownEventDetail?.properties?.data).toMatchObject({
      type: 'object',
      additionalProperties: true,
    });
    expect(schema.definitions?.UnknownEventDetail?.properties?.data?.properties).toBeUndefined();
  });

  it('accept the data of realistic generated events: every field typed as the schema says', () => {
    const generator = new EventGenerator({ random: createRandom(3), unknownTypeRatio: 0, now: Date.now });
    for (let i = 0; i < 500; i += 1) {
      const event = generator.next();
      const properties = dataProperties(event.type.toLowerCase());
      for (const [field, value] of Object.entries(event.data)) {
        const property = properties[field];
        if (property === undefined) continue;
        const allowed = enumOf(property);
        if (allowed !== undefined) expect(allowed, `${event.type}.${field}`).toContain(value);
        if (property.type === 'string') expect(typeof value, `${event.type}.${field}`).toBe('string');
        if (property.type === 'number') expect(typeof value, `${event.type}.${field}`).toBe('number');
      }
    }
  });
});

describe('registry documents, held against what the poller publishes (reference draft-4 validator)', () => {
  const generator = new EventGenerator({ random: createRandom(11), unknownTypeRatio: 0, now: Date.now });
  const raw = Array.from({ length: 40 }, (_, index) => ({
    ...generator.next(),
    program_id: PROGRAM_ID,
    sequence_number: index + 1,
  }));
  const events = published(raw);
  // The handler's quarantine: one without an id, one with a sequence number it cannot read.
  const broken = published([
    { ...raw[0], id: undefined, sequence_number: 41 },
    { ...raw[1], id: 'b-1', sequence_number: 'forty-two' },
  ]);

  it.each(['account_status', 'transaction'])('%s: accepts every published event and its pointer', (type) => {
    const ofType = events.filter((event) => event.type === type);
    const instances = [...ofType, ...ofType.map((event) => pointerOf(event))].map((event) =>
      delivered(event),
    );

    expect(ofType.length).toBeGreaterThan(3);
    expect(validate(eventJsonSchema(SOURCE, type), instances)).toEqual(instances.map(() => null));
  });

  it('invalid_event: accepts quarantined events and their pointers', () => {
    const instances = [...broken, ...broken.map((event) => pointerOf(event))].map((event) =>
      delivered(event),
    );

    expect(broken.map((event) => event.type)).toEqual(['invalid_event', 'invalid_event']);
    expect(validate(eventJsonSchema(SOURCE, 'invalid_event'), instances)).toEqual([null, null, null, null]);
  });

  it('refuses what the poller never publishes, naming the field', () => {
    const transaction = delivered(events.find((event) => event.type === 'transaction')!);
    const detail = transaction.detail as Record<string, unknown>;
    const mutations = [
      { ...transaction, detail: { ...detail, sequence_number: '12' } },
      { ...transaction, detail: { ...detail, data: { ...(detail.data as object), status: 'LOST' } } },
      { ...transaction, source: 'payments.other' },
      { ...transaction, detail: { ...detail, id: undefined } },
    ];

    const errors = validate(eventJsonSchema(SOURCE, 'transaction'), mutations);

    // A detail that is neither the type's own nor a pointer fails the oneOf at `detail`.
    expect(errors).toEqual([
      expect.stringMatching(/^detail: /),
      expect.stringMatching(/^detail: /),
      expect.stringMatching(/^source: 'payments.other' is not one of/),
      expect.stringMatching(/^detail: /),
    ]);
  });
});

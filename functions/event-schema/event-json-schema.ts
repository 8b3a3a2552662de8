/**
 * The one JSON Schema source of the events the poller publishes: the construct puts
 * `eventJsonSchema(source, type)` in the EventBridge schema registry, the subscriber kit validates
 * incoming events against the same definitions, and `scripts/generate-event-types.ts` renders
 * the kit's TypeScript types from them (a test regenerates them and expects no diff). Pure data
 * and functions, no AWS import: the construct and the kit both load it.
 *
 * JSON Schema draft 4 (what the registry's `JSONSchemaDraft4` takes), in the subset the kit's
 * validator and the type generator understand: `type` (one or a list), `enum`, `properties`,
 * `required`, `additionalProperties` (boolean), `items`, `minimum`, `minLength`, `pattern`,
 * `format: date-time`, `$ref` to `#/definitions/…` and `oneOf`.
 */
import { KNOWN_EVENT_TYPES } from '../core/banking-event.ts';
import { INVALID_EVENT_TYPE } from '../core/invalid-event.ts';
import { pascalCase } from '../core/name-rules.ts';

export type JsonSchemaType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array' | 'null';

/** A JSON Schema (draft 4) in the subset this module uses; `x-` keys are EventBridge's annotations. */
export interface JsonSchema {
  readonly $schema?: string;
  readonly title?: string;
  readonly description?: string;
  readonly type?: JsonSchemaType | readonly JsonSchemaType[];
  readonly enum?: readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean;
  readonly items?: JsonSchema;
  readonly minimum?: number;
  readonly minLength?: number;
  readonly pattern?: string;
  readonly format?: 'date-time';
  readonly $ref?: string;
  readonly oneOf?: readonly JsonSchema[];
  readonly definitions?: Readonly<Record<string, JsonSchema>>;
  readonly [annotation: `x-${string}`]: unknown;
}

/**
 * Every detail-type with a schema of its own, the ones the registry holds: the two the banking
 * interface documents, and the poller's quarantine. Any other type stays valid (the list grows).
 */
export const SCHEMA_EVENT_TYPES = [...KNOWN_EVENT_TYPES, INVALID_EVENT_TYPE] as const;

/** `status` of an account_status event, as documented. */
export const ACCOUNT_STATUSES = ['PENDING', 'OPEN', 'FROZEN', 'CLOSED'] as const;
/** `data.type` of a transaction, as documented. */
export const TRANSACTION_TYPES = ['card', 'fee', 'inbound', 'intra', 'outbound', 'system'] as const;
/** `data.status` of a transaction, as documented. */
export const TRANSACTION_STATUSES = ['PENDING', 'COMPLETE', 'ERROR'] as const;

const SHA256_HEX = '^[0-9a-f]{64}$';
const ref = (name: string): JsonSchema => ({ $ref: `#/definitions/${name}` });

/** The members every bank event's detail has; `type` is the lower-case detail-type. */
function bankEventDetail(description: string, type: JsonSchema, data: JsonSchema): JsonSchema {
  return {
    description,
    type: 'object',
    required: ['id', 'program_id', 'sequence_number', 'created_dt', 'type', 'data'],
    properties: {
      id: {
        type: 'string',
        minLength: 1,
        description: 'Banking event id; use it to de-duplicate (delivery is at least once)',
      },
      program_id: { type: 'string', minLength: 1, description: 'Banking program the event belongs to' },
      sequence_number: {
        type: 'integer',
        minimum: 0,
        description: 'Position in the program feed; strictly increasing per program',
      },
      created_dt: { type: 'string', format: 'date-time', description: 'When the bank created the event' },
      type,
      data,
    },
  };
}

/**
 * Every named type, by name. The type generator renders each as a TypeScript type of that name;
 * `eventJsonSchema` copies the ones a registry document refers to.
 */
export const EVENT_SCHEMA_DEFINITIONS: Readonly<Record<string, JsonSchema>> = {
  AccountStatus: {
    description: 'Status of an account',
    type: 'string',
    enum: ACCOUNT_STATUSES,
  },
  TransactionType: {
    description: 'Kind of a transaction',
    type: 'string',
    enum: TRANSACTION_TYPES,
  },
  TransactionStatus: {
    description: 'Status of a transaction',
    type: 'string',
    enum: TRANSACTION_STATUSES,
  },
  AccountStatusData: {
    description: 'Payload of an account_status event; the interface does not say which fields each carries',
    type: 'object',
    properties: {
      account_id: { type: 'string', description: 'Account id (UUID)' },
      blockchain_address: { type: 'string' },
      status: { ...ref('AccountStatus'), description: 'The new status' },
    },
    additionalProperties: true,
  },
  TransactionData: {
    description: 'Payload of a transaction event; the interface does not say which fields each carries',
    type: 'object',
    properties: {
      transaction_id: { type: 'string' },
      from_address: { type: 'string', description: 'Blockchain address of the sender' },
      to_address: { type: 'string', description: 'Blockchain address of the recipient' },
      amount: { type: 'number', description: 'USD pennies' },
      type: ref('TransactionType'),
      status: ref('TransactionStatus'),
      network_fee: { description: 'Blockchain network fee (type not documented upstream)' },
      note: { type: 'string', description: 'e.g. merchant or bank name' },
      card_id: { type: 'string', description: 'Card used, for card transactions' },
      created_dt: { type: 'string', description: 'Creation time of the transaction' },
      updated_dt: { type: 'string', description: 'Latest update of the transaction' },
    },
    additionalProperties: true,
  },
  AccountStatusDetail: bankEventDetail(
    'Detail of an account_status event',
    { type: 'string', enum: ['account_status'] },
    ref('AccountStatusData'),
  ),
  TransactionDetail: bankEventDetail(
    'Detail of a transaction event',
    { type: 'string', enum: ['transaction'] },
    ref('TransactionData'),
  ),
  UnknownEventDetail: bankEventDetail(
    'Detail of an event whose type the interface does not document (yet): published as it came',
    { type: 'string', minLength: 1, description: 'The lower-case detail-type' },
    { type: 'object', description: 'Payload as sent by the banking service', additionalProperties: true },
  ),
  InvalidEventError: {
    description: 'Why the event failed validation',
    type: 'object',
    required: ['code', 'message', 'field'],
    properties: {
      code: {
        type: 'string',
        description:
          'PAYLOAD_INVALID (its shape), EVENT_UNPUBLISHABLE (the bus would refuse it) or EVENT_UNPROCESSABLE (its shape exhausted the runtime)',
      },
      message: { type: 'string', description: 'The validation error, naming the answer and the field' },
      field: { type: 'string', description: "The offending field's path in the answer, e.g. data[3].type" },
    },
  },
  InvalidEventDetail: {
    description:
      'Detail of an invalid_event: an event of the feed that failed validation, quarantined with its text as received',
    type: 'object',
    required: [
      'id',
      'program_id',
      'sequence_number',
      'position',
      'received_at',
      'error',
      'fingerprint',
      'raw',
    ],
    properties: {
      id: { type: ['string', 'null'], description: "The event's own id when readable" },
      program_id: { type: ['string', 'null'], description: "The event's program when readable" },
      sequence_number: {
        type: ['integer', 'null'],
        minimum: 0,
        description: "The event's own sequence number when usable",
      },
      position: {
        type: 'integer',
        minimum: 0,
        description: 'The number the checkpoint treated it under (its own, or just after the cursor)',
      },
      received_at: { type: 'string', format: 'date-time', description: 'When the poller received it' },
      error: ref('InvalidEventError'),
      fingerprint: {
        type: 'string',
        pattern: SHA256_HEX,
        description: 'SHA-256 of raw; de-duplicate quarantined events on it',
      },
      raw: { description: 'The event exactly as the banking service sent it' },
      raw_is_text: {
        type: 'boolean',
        description:
          'Present and true when raw is the text as a JSON string: the event was not JSON, or nested deeper than the bus takes',
      },
    },
  },
  ClaimCheck: {
    description: "Where a claim-checked event's detail is stored, and how to verify it",
    type: 'object',
    required: ['bucket', 'key', 'size_bytes', 'sha256'],
    properties: {
      bucket: { type: 'string', minLength: 1 },
      key: { type: 'string', minLength: 1 },
      size_bytes: { type: 'integer', minimum: 0, description: 'Size of the stored detail text in bytes' },
      sha256: { type: 'string', pattern: SHA256_HEX, description: 'SHA-256 (hex) of the stored detail text' },
    },
  },
  ClaimCheckPointerDetail: {
    description:
      'Detail published in place of an event too large for the bus; the object at claim_check holds the full detail',
    type: 'object',
    required: ['id', 'program_id', 'sequence_number', 'created_dt', 'type', 'claim_check'],
    properties: {
      id: { type: 'string', minLength: 1, description: "The event's id" },
      program_id: {
        type: 'string',
        description: "The event's program (empty for an unreadable invalid event)",
      },
      sequence_number: { type: 'integer', minimum: 0 },
      created_dt: { type: 'string', format: 'date-time' },
      type: { type: 'string', minLength: 1, description: 'The detail-type of the event it stands for' },
      fingerprint: { type: 'string', pattern: SHA256_HEX, description: 'Of an invalid_event only' },
      field: { type: 'string', description: 'Of an invalid_event only: the field that failed validation' },
      claim_check: ref('ClaimCheck'),
    },
  },
  EventEnvelope: {
    description: 'The EventBridge event around every detail, as a target receives it',
    type: 'object',
    required: ['version', 'id', 'detail-type', 'source', 'account', 'time', 'region', 'detail'],
    properties: {
      version: { type: 'string' },
      id: { type: 'string', description: 'EventBridge event id (not the banking event id)' },
      'detail-type': { type: 'string', minLength: 1 },
      source: { type: 'string', minLength: 1 },
      account: { type: 'string' },
      time: { type: 'string', format: 'date-time' },
      region: { type: 'string' },
      resources: { type: 'array', items: { type: 'string' } },
      detail: { description: 'Validated against the schema of its detail-type' },
    },
  },
};

/** The name of the definition that describes the detail of `eventType` (not a pointer). */
export function detailDefinitionName(eventType: string): string {
  if (eventType === 'account_status') return 'AccountStatusDetail';
  if (eventType === 'transaction') return 'TransactionDetail';
  if (eventType === INVALID_EVENT_TYPE) return 'InvalidEventDetail';
  return 'UnknownEventDetail';
}

/** The definitions the named ones refer to, themselves included, transitively. */
function referencedDefinitions(roots: readonly string[]): Record<string, JsonSchema> {
  const found: Record<string, JsonSchema> = {};
  const visit = (schema: JsonSchema): void => {
    if (schema.$ref !== undefined) {
      const name = schema.$ref.replace('#/definitions/', '');
      if (found[name] === undefined) {
        found[name] = EVENT_SCHEMA_DEFINITIONS[name]!;
        visit(found[name]);
      }
    }
    for (const child of Object.values(schema.properties ?? {})) visit(child);
    for (const child of schema.oneOf ?? []) visit(child);
    if (schema.items !== undefined) visit(schema.items);
  };
  for (const root of roots) visit(ref(root));
  return found;
}

/**
 * The registry document of one detail-type: the whole event as a subscriber receives it, the
 * EventBridge envelope around a detail that is either the type's own detail or a claim-check
 * pointer (an event too large for the bus keeps its detail-type).
 */
export function eventJsonSchema(eventSource: string, eventType: string): JsonSchema {
  const envelope = EVENT_SCHEMA_DEFINITIONS.EventEnvelope!;
  const detailName = detailDefinitionName(eventType);
  return {
    $schema: 'http://json-schema.org/draft-04/schema#',
    title: pascalCase(eventType),
    description: `Events of detail-type ${eventType} published by the banking events poller (a claim-check pointer when too large for the bus).`,
    'x-amazon-events-source': eventSource,
    'x-amazon-events-detail-type': eventType,
    type: 'object',
    required: envelope.required,
    properties: {
      ...envelope.properties,
      'detail-type': { type: 'string', enum: [eventType] },
      source: { type: 'string', enum: [eventSource] },
      detail: { oneOf: [ref(detailName), ref('ClaimCheckPointerDetail')] },
    },
    definitions: referencedDefinitions([detailName, 'ClaimCheckPointerDetail']),
  };
}

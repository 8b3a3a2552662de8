/**
 * The types of the events the poller publishes, generated from the JSON Schema definitions in
 * `event-json-schema.ts` (the ones the schema registry holds). Do not edit: change the schema and
 * run `npm run generate:types`; a test fails while this file and the schema disagree.
 */

/** Status of an account */
export type AccountStatus = 'PENDING' | 'OPEN' | 'FROZEN' | 'CLOSED';

/** Kind of a transaction */
export type TransactionType = 'card' | 'fee' | 'inbound' | 'intra' | 'outbound' | 'system';

/** Status of a transaction */
export type TransactionStatus = 'PENDING' | 'COMPLETE' | 'ERROR';

/** Payload of an account_status event; the interface does not say which fields each carries */
export interface AccountStatusData {
  /** Account id (UUID) */
  readonly account_id?: string;
  readonly blockchain_address?: string;
  /** The new status */
  readonly status?: AccountStatus;
  /** Fields the interface does not name pass through as sent. */
  readonly [field: string]: unknown;
}

/** Payload of a transaction event; the interface does not say which fields each carries */
export interface TransactionData {
  readonly transaction_id?: string;
  /** Blockchain address of the sender */
  readonly from_address?: string;
  /** Blockchain address of the recipient */
  readonly to_address?: string;
  /** USD pennies */
  readonly amount?: number;
  readonly type?: TransactionType;
  readonly status?: TransactionStatus;
  /** Blockchain network fee (type not documented upstream) */
  readonly network_fee?: unknown;
  /** e.g. merchant or bank name */
  readonly note?: string;
  /** Card used, for card transactions */
  readonly card_id?: string;
  /** Creation time of the transaction */
  readonly created_dt?: string;
  /** Latest update of the transaction */
  readonly updated_dt?: string;
  /** Fields the interface does not name pass through as sent. */
  readonly [field: string]: unknown;
}

/** Detail of an account_status event */
export interface AccountStatusDetail {
  /** Banking event id; use it to de-duplicate (delivery is at least once) */
  readonly id: string;
  /** Banking program the event belongs to */
  readonly program_id: string;
  /** Position in the program feed; strictly increasing per program */
  readonly sequence_number: number;
  /** When the bank created the event */
  readonly created_dt: string;
  readonly type: 'account_status';
  readonly data: AccountStatusData;
}

/** Detail of a transaction event */
export interface TransactionDetail {
  /** Banking event id; use it to de-duplicate (delivery is at least once) */
  readonly id: string;
  /** Banking program the event belongs to */
  readonly program_id: string;
  /** Position in the program feed; strictly increasing per program */
  readonly sequence_number: number;
  /** When the bank created the event */
  readonly created_dt: string;
  readonly type: 'transaction';
  readonly data: TransactionData;
}

/** Detail of an event whose type the interface does not document (yet): published as it came */
export interface UnknownEventDetail {
  /** Banking event id; use it to de-duplicate (delivery is at least once) */
  readonly id: string;
  /** Banking program the event belongs to */
  readonly program_id: string;
  /** Position in the program feed; strictly increasing per program */
  readonly sequence_number: number;
  /** When the bank created the event */
  readonly created_dt: string;
  /** The lower-case detail-type */
  readonly type: string;
  /** Payload as sent by the banking service */
  readonly data: {
    /** Fields the interface does not name pass through as sent. */
    readonly [field: string]: unknown;
  };
}

/** Why the event failed validation */
export interface InvalidEventError {
  /** PAYLOAD_INVALID (its shape), EVENT_UNPUBLISHABLE (the bus would refuse it) or EVENT_UNPROCESSABLE (its shape exhausted the runtime) */
  readonly code: string;
  /** The validation error, naming the answer and the field */
  readonly message: string;
  /** The offending field's path in the answer, e.g. data[3].type */
  readonly field: string;
}

/** Detail of an invalid_event: an event of the feed that failed validation, quarantined with its text as received */
export interface InvalidEventDetail {
  /** The event's own id when readable */
  readonly id: string | null;
  /** The event's program when readable */
  readonly program_id: string | null;
  /** The event's own sequence number when usable */
  readonly sequence_number: number | null;
  /** The number the checkpoint treated it under (its own, or just after the cursor) */
  readonly position: number;
  /** When the poller received it */
  readonly received_at: string;
  readonly error: InvalidEventError;
  /** SHA-256 of raw; de-duplicate quarantined events on it */
  readonly fingerprint: string;
  /** The event exactly as the banking service sent it */
  readonly raw: unknown;
  /** Present and true when raw is the text as a JSON string: the event was not JSON, or nested deeper than the bus takes */
  readonly raw_is_text?: boolean;
}

/** Where a claim-checked event's detail is stored, and how to verify it */
export interface ClaimCheck {
  readonly bucket: string;
  readonly key: string;
  /** Size of the stored detail text in bytes */
  readonly size_bytes: number;
  /** SHA-256 (hex) of the stored detail text */
  readonly sha256: string;
}

/** Detail published in place of an event too large for the bus; the object at claim_check holds the full detail */
export interface ClaimCheckPointerDetail {
  /** The event's id */
  readonly id: string;
  /** The event's program (empty for an unreadable invalid event) */
  readonly program_id: string;
  readonly sequence_number: number;
  readonly created_dt: string;
  /** The detail-type of the event it stands for */
  readonly type: string;
  /** Of an invalid_event only */
  readonly fingerprint?: string;
  /** Of an invalid_event only: the field that failed validation */
  readonly field?: string;
  readonly claim_check: ClaimCheck;
}

/** The EventBridge event around every detail, as a target receives it */
export interface EventEnvelope {
  readonly version: string;
  /** EventBridge event id (not the banking event id) */
  readonly id: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly account: string;
  readonly time: string;
  readonly region: string;
  readonly resources?: readonly string[];
  /** Validated against the schema of its detail-type */
  readonly detail: unknown;
}

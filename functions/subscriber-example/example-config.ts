/**
 * The example subscriber's environment, read once at cold start: a missing or empty variable
 * fails the first invocation with its name, not a `TableName` error deep in a DynamoDB call.
 */
import { SubscriberConfigurationError } from 'banking-events-poller/subscriber';

export interface ExampleConfig {
  /** `IDEMPOTENCY_TABLE`: where handled events are recorded. */
  readonly idempotencyTable: string;
  /** `CLAIM_CHECK_BUCKET`: pointers naming any other bucket are refused. */
  readonly claimCheckBucket: string | undefined;
  /** `EVENT_SOURCE`: events of any other source are refused. */
  readonly eventSource: string | undefined;
}

function optional(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

export function readExampleConfig(env: NodeJS.ProcessEnv): ExampleConfig {
  const idempotencyTable = optional(env, 'IDEMPOTENCY_TABLE');
  if (idempotencyTable === undefined) {
    throw new SubscriberConfigurationError('IDEMPOTENCY_TABLE must name the idempotency table', {
      variable: 'IDEMPOTENCY_TABLE',
    });
  }
  return Object.freeze({
    idempotencyTable,
    claimCheckBucket: optional(env, 'CLAIM_CHECK_BUCKET'),
    eventSource: optional(env, 'EVENT_SOURCE'),
  });
}

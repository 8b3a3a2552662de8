import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { describe, expect, it } from 'vitest';
import { HandledOnce, SubscriberConfigurationError } from '../../../functions/subscriber/index.ts';

const handler = async (): Promise<void> => {};

describe('HandledOnce options', () => {
  it.each([
    ['no table and no persistence store', {}, /give tableName \(a DynamoDB table\) or persistenceStore/],
    [
      'both a table and a persistence store',
      { tableName: 't', persistenceStore: new DynamoDBPersistenceLayer({ tableName: 't' }) },
      /exactly one of them/,
    ],
    ['an empty table name', { tableName: '' }, /tableName must be a table name, got ""/],
    [
      'an expiry of zero',
      { tableName: 't', expiresAfterSeconds: 0 },
      /expiresAfterSeconds must be a positive/,
    ],
    ['a fractional expiry', { tableName: 't', expiresAfterSeconds: 1.5 }, /whole number of seconds, got 1.5/],
  ])('refuses %s, naming the option', (_case, idempotency, message) => {
    const build = () => new HandledOnce(handler, { idempotency });

    expect(build).toThrow(SubscriberConfigurationError);
    expect(build).toThrow(message);
  });

  it('refuses an S3 client and a client configuration together', () => {
    expect(
      () =>
        new HandledOnce(handler, {
          idempotency: { tableName: 't' },
          claimChecks: { s3Client: { send: async () => ({}) } as never, s3ClientConfig: {} },
        }),
    ).toThrow(/give s3Client or s3ClientConfig, not both/);
  });
});

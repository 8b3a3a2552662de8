/**
 * An example subscriber, deployed by the repo's app with `-c exampleSubscriber=true`: a Lambda on
 * a queue of transaction events, built with the subscriber kit. Everything a subscriber must get
 * right is the kit's: the typed event, the claim-check pointer resolved and verified, each event
 * handled once (a duplicate delivery does not run `handleEvent` again), a partial batch response.
 * What is left is the business: here, a log line per transaction, where yours would book it.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { makeSqsBatchHandler, type SubscriberEvent } from 'banking-events-poller/subscriber';
import { readExampleConfig } from './example-config.ts';

// Module scope: built once per execution environment and reused by every invocation.
const config = readExampleConfig(process.env);
const logger = new Logger();

async function handleEvent(event: SubscriberEvent): Promise<void> {
  switch (event.kind) {
    case 'transaction': {
      const { id, program_id, sequence_number, data } = event.detail;
      logger.info('Transaction handled', {
        eventId: id,
        programId: program_id,
        sequenceNumber: sequence_number,
        transactionId: data.transaction_id,
        transactionType: data.type,
        status: data.status,
        amount: data.amount,
        // Read from the claim-check bucket when the event was too large for the bus.
        claimChecked: event.claimCheck !== undefined,
        noteLength: data.note?.length ?? 0,
      });
      return;
    }
    case 'account_status':
      logger.info('Account status change passed over: not this subscriber’s', { eventId: event.detail.id });
      return;
    case 'invalid_event':
      // The stack routes these to the quarantine queue; one here means a rule matches too widely.
      logger.warn('Quarantined event passed over: it belongs to the quarantine queue', {
        fingerprint: event.detail.fingerprint,
        field: event.detail.error.field,
      });
      return;
    case 'unknown':
      // The list of types grows: a new one is passed over, never a failure that would block the queue.
      logger.info('Event of a type this subscriber does not know passed over', {
        detailType: event.detailType,
        eventId: event.detail.id,
      });
      return;
  }
}

export const handler = makeSqsBatchHandler(handleEvent, {
  idempotency: { tableName: config.idempotencyTable, dynamoDBClient: new DynamoDBClient({}) },
  claimChecks: { s3Client: new S3Client({}), bucket: config.claimCheckBucket },
  parse: { source: config.eventSource },
  logger,
});

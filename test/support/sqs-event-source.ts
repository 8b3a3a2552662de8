/**
 * A stand-in for Lambda's SQS event source mapping, over a real queue (moto): it receives a batch
 * as the mapping does and hands it over as the `SQSEvent` a function gets, then settles it as the
 * mapping does with `ReportBatchItemFailures`: the messages a response did not name as failed are
 * deleted; after an error or a timeout none is. A failed message becomes visible again at once
 * here (`redeliverFailed`), where SQS would wait for its visibility timeout.
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import type { Invocation } from './lambda-runtime/lambda-container.ts';

export class SqsEventSourceStandIn {
  readonly #sqs: SQSClient;
  readonly #queueUrl: string;
  readonly #batchSize: number;
  #queueArn: string | undefined;

  constructor(sqs: SQSClient, queueUrl: string, batchSize = 10) {
    this.#sqs = sqs;
    this.#queueUrl = queueUrl;
    this.#batchSize = batchSize;
  }

  /** Up to a batch of the messages now visible, as the function receives them. */
  async receive(): Promise<SQSEvent> {
    this.#queueArn ??= (
      await this.#sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: this.#queueUrl, AttributeNames: ['QueueArn'] }),
      )
    ).Attributes?.QueueArn;
    const records: SQSRecord[] = [];
    while (records.length < this.#batchSize) {
      const received = await this.#sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: this.#queueUrl,
          MaxNumberOfMessages: this.#batchSize - records.length,
          WaitTimeSeconds: 0,
          VisibilityTimeout: 600,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      const messages = received.Messages ?? [];
      if (messages.length === 0) break;
      records.push(...messages.map((message) => this.#record(message)));
    }
    return { Records: records };
  }

  /** What the mapping does with the invocation's outcome; returns the ids of the records kept for another delivery. */
  async settle(event: SQSEvent, invocation: Invocation): Promise<string[]> {
    const { outcome } = invocation;
    const failed =
      outcome.kind === 'response'
        ? new Set(
            (
              (outcome.result as { batchItemFailures?: { itemIdentifier: string }[] }).batchItemFailures ?? []
            ).map((failure) => failure.itemIdentifier),
          )
        : new Set(event.Records.map((record) => record.messageId));
    for (const record of event.Records) {
      if (!failed.has(record.messageId)) {
        await this.#sqs.send(
          new DeleteMessageCommand({ QueueUrl: this.#queueUrl, ReceiptHandle: record.receiptHandle }),
        );
      }
    }
    return [...failed];
  }

  /** Makes the kept records visible again now: their next delivery, without waiting for the visibility timeout. */
  async redeliverFailed(event: SQSEvent, failed: readonly string[]): Promise<void> {
    for (const record of event.Records.filter((candidate) => failed.includes(candidate.messageId))) {
      await this.#sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: this.#queueUrl,
          ReceiptHandle: record.receiptHandle,
          VisibilityTimeout: 0,
        }),
      );
    }
  }

  #record(message: Message): SQSRecord {
    const attributes = message.Attributes ?? {};
    return {
      messageId: message.MessageId!,
      receiptHandle: message.ReceiptHandle!,
      body: message.Body ?? '',
      attributes: {
        ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
        SentTimestamp: attributes.SentTimestamp ?? '',
        SenderId: attributes.SenderId ?? '',
        ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? '',
      },
      messageAttributes: {},
      md5OfBody: message.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: this.#queueArn ?? '',
      awsRegion: 'us-east-1',
    };
  }
}

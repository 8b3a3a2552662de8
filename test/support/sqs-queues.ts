/**
 * SQS queues on moto as the tests use them: made with the ARN a rule or a subscriber targets, and
 * read back until empty. One place for what many files need, so each reads the queue alike.
 *
 * @example
 * const queue = await createQueue(aws.sqs, `${aws.uniqueName('ordered')}.fifo`, { FifoQueue: 'true' });
 * // ... a subscriber delivers to queue.arn ...
 * const messages = await drainMessages(aws.sqs, queue.url); // [{ body, group }], in queue order
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

export interface Queue {
  readonly url: string;
  readonly arn: string;
}

/** One message as the queue gave it out. */
export interface QueueMessage {
  readonly body: string;
  /** Its `MessageGroupId` (FIFO queues); `undefined` on a standard queue. */
  readonly group: string | undefined;
}

/** A queue named `name` (a FIFO queue's name ends in `.fifo`) with these attributes. */
export async function createQueue(
  sqs: SQSClient,
  name: string,
  attributes: Readonly<Record<string, string>> = {},
): Promise<Queue> {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: name, Attributes: { ...attributes } }),
  );
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  return { url: QueueUrl!, arn: Attributes!.QueueArn! };
}

/**
 * Receives and deletes until the queue is empty, in the order the queue gives the messages out. A
 * FIFO queue hands out a group's next message only once the last is deleted, so reading one
 * whole takes the deletes.
 */
export async function drainMessages(sqs: SQSClient, queueUrl: string): Promise<QueueMessage[]> {
  const drained: QueueMessage[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
        MessageSystemAttributeNames: ['MessageGroupId'],
      }),
    );
    if (Messages.length === 0) return drained;
    for (const message of Messages) {
      drained.push({ body: message.Body ?? '', group: message.Attributes?.MessageGroupId });
    }
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((message, index) => ({
          Id: String(index),
          ReceiptHandle: message.ReceiptHandle!,
        })),
      }),
    );
  }
}

/** The `detail` of each EventBridge envelope a drained queue held, in queue order. */
export function detailsOf<Detail>(messages: readonly QueueMessage[]): Detail[] {
  return messages.map((message) => (JSON.parse(message.body) as { detail: Detail }).detail);
}

/** Each message group's `detail.sequence_number`s, in the order the queue gave them out. */
export function sequencesByGroup(messages: readonly QueueMessage[]): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  for (const message of messages) {
    const { sequence_number } = (JSON.parse(message.body) as { detail: { sequence_number: number } }).detail;
    const group = message.group ?? '';
    groups.set(group, [...(groups.get(group) ?? []), sequence_number]);
  }
  return groups;
}

/**
 * The stand-in's delivery: each RUNNING subscriber reads the bus's retained events from its position,
 * keeps those its filters match, shapes them (RAW: `Data`; WITH_METADATA: `{ Data, Metadata,
 * SystemMetadata }`) and sends them to its SQS queue on moto. FIFO subscribers keep one line per
 * event group and send one message at a time down each line, so a failing event holds up only its
 * own group; UNORDERED subscribers send up to ten due events per SendMessageBatch. A failed attempt
 * is retried on the test clock (1 s, 2 s, 4 s, ... capped at 60 s) until `MaxRetryAttempts` or
 * `MaxEventAgeInSeconds` (counted from when the subscriber took the event up) runs out, then the
 * dead-letter record goes to `OnFailureConfiguration.Arn`, or the event is dropped.
 *
 * Work runs in the background after every publish, subscriber change and clock step; `settled()`
 * resolves once nothing due is left in flight.
 */
import {
  GetQueueUrlCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { Bus, BusListener, BusState, StoredEvent, Subscriber } from './bus-state.ts';
import type { DeliveryFailure, StandInFaults } from './faults.ts';

export interface SqsDeliveryOptions {
  readonly sqsEndpoint: string;
  readonly region: string;
  readonly now: () => number;
  readonly faults: StandInFaults;
}

interface Pending {
  readonly event: StoredEvent;
  readonly deliveryType: 'LIVE' | 'REPLAY';
  readonly takenUpAt: number;
  attempts: number;
  dueAt: number;
  lastFailure: DeliveryFailure | undefined;
}

interface Cursor {
  /** Sequence number of the last event looked at; `undefined` before the first. */
  afterSequence: string | undefined;
  /** Ingestion times to start from / stop after (POINT_IN_TIME). */
  readonly from: number;
  readonly until: number;
  /** Group key → events not yet delivered, oldest first. */
  readonly lines: Map<string, Pending[]>;
  /** Number of events delivered; for tests' sanity. */
  delivered: number;
}

const MAX_BACKOFF_MS = 60_000;
const UNORDERED_BATCH = 10;

export class SqsDelivery implements BusListener {
  readonly #options: SqsDeliveryOptions;
  readonly #sqs: SQSClient;
  readonly #cursors = new Map<string, Cursor>();
  readonly #queueUrls = new Map<string, Promise<string>>();
  #state: BusState | undefined;
  #loop: Promise<void> | undefined;
  #again = false;
  #closed = false;
  #fault: unknown;

  constructor(options: SqsDeliveryOptions) {
    this.#options = options;
    this.#sqs = new SQSClient({
      endpoint: options.sqsEndpoint,
      region: options.region,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
      maxAttempts: 1,
    });
  }

  attach(state: BusState): void {
    this.#state = state;
  }

  subscriberCreated(subscriber: Subscriber, bus: Bus): void {
    const window = this.#state!.retentionWindowStart(bus);
    const pointInTime = subscriber.pointInTime;
    const from =
      subscriber.startingPosition === 'LATEST'
        ? Number.POSITIVE_INFINITY
        : pointInTime?.PointType === 'TIMESTAMP'
          ? Math.max(pointInTime.StartingPoint ?? window, window)
          : window;
    const cursor: Cursor = {
      afterSequence: subscriber.startingPosition === 'LATEST' ? bus.events.at(-1)?.sequenceNumber : undefined,
      from: subscriber.startingPosition === 'LATEST' ? Number.NEGATIVE_INFINITY : from,
      until: pointInTime?.EndPoint ?? Number.POSITIVE_INFINITY,
      lines: new Map(),
      delivered: 0,
    };
    this.#cursors.set(subscriber.arn, cursor);
    this.kick();
  }

  subscriberUpdated(
    subscriber: Subscriber,
    bus: Bus,
    change: { resumed: boolean; skipBacklog: boolean },
  ): void {
    const cursor = this.#cursors.get(subscriber.arn);
    if (cursor !== undefined && change.skipBacklog) {
      cursor.lines.clear();
      cursor.afterSequence = bus.events.at(-1)?.sequenceNumber;
    }
    this.kick();
  }

  subscriberDeleted(subscriber: Subscriber): void {
    this.#cursors.delete(subscriber.arn);
  }

  eventsPublished(): void {
    this.kick();
  }

  /** Runs due work in the background (again, if it is already running). */
  kick(): void {
    if (this.#closed) return;
    this.#again = true;
    if (this.#loop !== undefined) return;
    this.#loop = (async () => {
      try {
        while (this.#again && !this.#closed) {
          this.#again = false;
          await this.#pass();
        }
      } catch (error) {
        // A stand-in bug: kept for `settled()` to throw, not left as an unhandled rejection.
        this.#fault ??= error;
      } finally {
        this.#loop = undefined;
      }
    })();
  }

  /** Resolves once no delivery work is running and nothing is due; throws a fault of the stand-in's own. */
  async settled(): Promise<void> {
    while (this.#loop !== undefined) await this.#loop;
    if (this.#fault !== undefined) throw this.#fault;
  }

  /** Events waiting (not yet delivered nor dead-lettered) for a subscriber. */
  backlog(subscriberArn: string): number {
    const cursor = this.#cursors.get(subscriberArn);
    if (cursor === undefined) return 0;
    return [...cursor.lines.values()].reduce((total, line) => total + line.length, 0);
  }

  async close(): Promise<void> {
    await this.settled();
    this.#closed = true;
    this.#sqs.destroy();
  }

  async #pass(): Promise<void> {
    const state = this.#state!;
    const work: Promise<void>[] = [];
    for (const subscriber of state.subscribers.values()) {
      const bus = state.buses.get(subscriber.busArn);
      const cursor = this.#cursors.get(subscriber.arn);
      if (bus === undefined || cursor === undefined || subscriber.settings.state !== 'RUNNING') continue;
      this.#takeUp(subscriber, bus, cursor);
      work.push(
        subscriber.type === 'FIFO'
          ? this.#deliverFifo(subscriber, cursor)
          : this.#deliverUnordered(subscriber, cursor),
      );
    }
    await Promise.all(work);
  }

  /** Moves the subscriber's matching new events into its lines. */
  #takeUp(subscriber: Subscriber, bus: Bus, cursor: Cursor): void {
    this.#state!.expire(bus);
    const now = this.#options.now();
    const start =
      cursor.afterSequence === undefined
        ? 0
        : bus.events.findIndex((e) => e.sequenceNumber > cursor.afterSequence!);
    if (start < 0) return;
    for (const event of bus.events.slice(start)) {
      cursor.afterSequence = event.sequenceNumber;
      if (event.ingestionTime < cursor.from || event.ingestionTime > cursor.until) continue;
      if (!matches(subscriber, event)) continue;
      const key = subscriber.type === 'FIFO' ? `group:${event.eventGroupId ?? ''}` : `event:${event.eventId}`;
      const line = cursor.lines.get(key) ?? [];
      line.push({
        event,
        deliveryType: event.ingestionTime < subscriber.creationTime ? 'REPLAY' : 'LIVE',
        takenUpAt: now,
        attempts: 0,
        dueAt: now,
        lastFailure: undefined,
      });
      cursor.lines.set(key, line);
    }
  }

  async #deliverFifo(subscriber: Subscriber, cursor: Cursor): Promise<void> {
    await Promise.all(
      [...cursor.lines.entries()].map(async ([key, line]) => {
        while (line.length > 0 && subscriber.settings.state === 'RUNNING') {
          const head = line[0]!;
          if (head.dueAt > this.#options.now()) return;
          const done = await this.#attempt(subscriber, [head]);
          if (!done[0]) return;
          line.shift();
        }
        if (line.length === 0) cursor.lines.delete(key);
      }),
    );
  }

  async #deliverUnordered(subscriber: Subscriber, cursor: Cursor): Promise<void> {
    const now = this.#options.now();
    const due = [...cursor.lines.entries()].filter(
      ([, line]) => line[0] !== undefined && line[0].dueAt <= now,
    );
    for (let start = 0; start < due.length; start += UNORDERED_BATCH) {
      const batch = due.slice(start, start + UNORDERED_BATCH);
      const done = await this.#attempt(
        subscriber,
        batch.map(([, line]) => line[0]!),
      );
      batch.forEach(([key], index) => {
        if (done[index]) cursor.lines.delete(key);
      });
    }
  }

  /**
   * One attempt for each of `items` (one SendMessage, or one SendMessageBatch); per item, whether it
   * is finished with (delivered, dead-lettered or dropped).
   */
  async #attempt(subscriber: Subscriber, items: Pending[]): Promise<boolean[]> {
    const now = this.#options.now();
    const maxAgeMs = subscriber.settings.retryPolicy.MaxEventAgeInSeconds * 1000;
    const outcomes = new Map<Pending, DeliveryFailure | undefined>();
    const sendable: { item: Pending; entry: SendMessageBatchRequestEntry }[] = [];
    for (const item of items) {
      if (item.attempts > 0 && now - item.takenUpAt >= maxAgeMs) {
        await this.#giveUp(subscriber, item, 'MaximumEventAgeInSeconds');
        outcomes.set(item, undefined);
        continue;
      }
      item.attempts++;
      const injected = this.#options.faults.deliveryFailure({
        subscriberArn: subscriber.arn,
        targetArn: subscriber.compiled.targetArn,
        eventId: item.event.eventId,
        eventGroupId: item.event.eventGroupId,
        attempt: item.attempts,
        data: item.event.data,
      });
      const shaped = injected ?? this.#shape(subscriber, item);
      if ('errorCode' in shaped) {
        outcomes.set(item, shaped);
        continue;
      }
      sendable.push({ item, entry: { Id: String(sendable.length), ...shaped } });
    }
    if (sendable.length > 0) {
      const failures = await this.#send(
        subscriber.compiled.targetArn,
        sendable.map(({ entry }) => entry),
      );
      sendable.forEach(({ item }, index) => {
        outcomes.set(item, failures[index]);
      });
    }
    const finished: boolean[] = [];
    for (const item of items) {
      if (!outcomes.has(item)) {
        finished.push(true);
        continue;
      }
      const failure = outcomes.get(item);
      if (failure === undefined) {
        finished.push(true);
        continue;
      }
      item.lastFailure = failure;
      const retriesUsed = item.attempts - 1;
      if (retriesUsed >= subscriber.settings.retryPolicy.MaxRetryAttempts) {
        await this.#giveUp(subscriber, item, 'MaximumRetryAttempts');
        finished.push(true);
      } else if (now - item.takenUpAt >= maxAgeMs) {
        await this.#giveUp(subscriber, item, 'MaximumEventAgeInSeconds');
        finished.push(true);
      } else {
        item.dueAt = now + Math.min(1000 * 2 ** retriesUsed, MAX_BACKOFF_MS);
        finished.push(false);
      }
    }
    return finished;
  }

  /** The message for one event, or the transformation failure. */
  #shape(subscriber: Subscriber, item: Pending): Omit<SendMessageBatchRequestEntry, 'Id'> | DeliveryFailure {
    const systemMetadata = { ...item.event.systemMetadata, 'aws:DeliveryType': item.deliveryType };
    const events = { Data: item.event.data, Metadata: {}, SystemMetadata: systemMetadata };
    const body = subscriber.compiled.withMetadata ? events : item.event.data;
    const compiled = subscriber.compiled;
    const groupId = compiled.messageGroupId?.(events);
    const deduplicationId = compiled.messageDeduplicationId?.(events);
    if (
      (compiled.messageGroupId && groupId === undefined) ||
      (compiled.messageDeduplicationId && deduplicationId === undefined)
    ) {
      return {
        errorCode: 'INPUT_TRANSFORMATION_FAILURE',
        errorMessage: 'A target parameter expression evaluated to nothing for this event.',
      };
    }
    return {
      MessageBody: JSON.stringify(body),
      ...(groupId === undefined ? {} : { MessageGroupId: groupId }),
      ...(deduplicationId === undefined ? {} : { MessageDeduplicationId: deduplicationId }),
      ...(compiled.delaySeconds === undefined ? {} : { DelaySeconds: compiled.delaySeconds }),
    };
  }

  /** Sends entries to the queue; per entry, its failure or `undefined`. */
  async #send(
    queueArn: string,
    entries: SendMessageBatchRequestEntry[],
  ): Promise<(DeliveryFailure | undefined)[]> {
    try {
      const queueUrl = await this.#queueUrl(queueArn);
      if (entries.length === 1) {
        const { Id: _, ...message } = entries[0]!;
        await this.#sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, ...message }));
        return [undefined];
      }
      const result = await this.#sqs.send(
        new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }),
      );
      const failed = new Map((result.Failed ?? []).map((failure) => [failure.Id, failure]));
      return entries.map((entry) => {
        const failure = failed.get(entry.Id);
        return failure === undefined
          ? undefined
          : {
              errorCode: failure.SenderFault ? 'CUSTOMER_VALIDATION' : 'INTERNAL_ERROR',
              errorMessage: failure.Message ?? '',
            };
      });
    } catch (error) {
      const failure = describeSqsError(error);
      this.#queueUrls.delete(queueArn);
      return entries.map(() => failure);
    }
  }

  async #giveUp(
    subscriber: Subscriber,
    item: Pending,
    condition: 'MaximumRetryAttempts' | 'MaximumEventAgeInSeconds',
  ): Promise<void> {
    const deadLetterArn = subscriber.settings.onFailureConfiguration?.Arn;
    if (typeof deadLetterArn !== 'string') return; // dropped: the service counts it in EventsDropped
    const failure = item.lastFailure ?? {
      errorCode: 'INTERNAL_ERROR',
      errorMessage: 'Event expired before delivery.',
    };
    const record = {
      version: '1.0',
      busArn: subscriber.busArn,
      subscriberArn: subscriber.arn,
      targetArn: subscriber.compiled.targetArn,
      errorCode: failure.errorCode,
      errorMessage: failure.errorMessage.slice(0, 1024),
      exhaustedRetryCondition: condition,
      retryAttempts: Math.max(0, item.attempts - 1),
      failedMessages: [
        {
          eventId: item.event.eventId,
          eventGroupId: item.event.eventGroupId ?? null,
          deduplicationId: item.event.deduplicationId ?? null,
          timestamp: new Date(item.event.ingestionTime).toISOString(),
          targetRequestId: null,
        },
      ],
    };
    const isFifo = deadLetterArn.endsWith('.fifo');
    const failures = await this.#send(deadLetterArn, [
      {
        Id: '0',
        MessageBody: JSON.stringify(record),
        ...(isFifo
          ? {
              MessageGroupId: item.event.eventGroupId ?? 'dead-letter',
              MessageDeduplicationId: item.event.eventId,
            }
          : {}),
      },
    ]);
    if (failures[0] !== undefined) {
      // A dead-letter queue the stand-in cannot write to loses the record, as on the service.
      console.warn(
        `custom-bus stand-in: dead-letter record for ${item.event.eventId} lost: ${failures[0].errorMessage}`,
      );
    }
  }

  #queueUrl(queueArn: string): Promise<string> {
    let url = this.#queueUrls.get(queueArn);
    if (url === undefined) {
      const [, , , , account, name] = queueArn.split(':');
      url = this.#sqs
        .send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }))
        .then((result) => result.QueueUrl!);
      this.#queueUrls.set(queueArn, url);
    }
    return url;
  }
}

function matches(subscriber: Subscriber, event: StoredEvent): boolean {
  return subscriber.compiled.filters.every(({ scope, match }) => {
    switch (scope) {
      case 'DATA':
        return match(event.data);
      case 'SYSTEM_METADATA':
        return match(event.systemMetadata);
      default:
        return match({}); // METADATA: PutEvents events carry none
    }
  });
}

function describeSqsError(error: unknown): DeliveryFailure {
  const name = error instanceof Error ? error.name : 'Error';
  const message = error instanceof Error ? error.message : String(error);
  if (/AccessDenied/.test(name)) return { errorCode: 'ACCESS_DENIED', errorMessage: message };
  if (/QueueDoesNotExist|NonExistentQueue/.test(name))
    return { errorCode: 'RESOURCE_NOT_FOUND', errorMessage: message };
  const fault = (error as { $fault?: string }).$fault;
  return { errorCode: fault === 'client' ? 'CUSTOMER_VALIDATION' : 'INTERNAL_ERROR', errorMessage: message };
}

/**
 * What the operator CLI does on a Custom Event Bus (API `EventBridgeV2`): read its retention
 * window, and replay a time window from that retention. The bus keeps every event for its
 * retention period, and a subscriber created with `StartingPosition: POINT_IN_TIME` delivers the
 * events from a point in time to an end point: that is the replay, no archive involved. A replay
 * subscriber is a copy of a subscriber of the bus (its target, role, filter, invocation and batch
 * parameters, retry policy and dead-letter queue, ordering type and transformer), so the route's
 * target receives the window again in the shape it already reads.
 */
import { tag } from '@smithy/core/cbor';
import type { EventBridgeV2Rpc } from '../adapters/aws/eventbridgev2/rpc-v2-cbor-client.ts';
import { UsageError } from './cli-errors.ts';
import { REPLAY_SUBSCRIBER_PREFIX } from './operator-resource-names.ts';
import type { TimeWindow } from './time-window.ts';

/** Whether `value` is the ARN of a Custom Event Bus (`…:event-busv2/NAME/ID`), not a classic bus's name or ARN. */
export function isCustomBusArn(value: string): boolean {
  return /^arn:aws[a-z0-9-]*:events:[^:]+:\d{12}:event-busv2\/[^/]+\/[a-z0-9]{25}$/.test(value);
}

/** The bus's retention, from DescribeEventBus's `StorageConfiguration`. */
export interface BusRetention {
  readonly eventBusArn: string;
  readonly name?: string;
  readonly retentionPeriodInDays?: number;
  /** The earliest point stored events are available from: where a replay can start. */
  readonly retentionWindowStartTime?: Date;
  /** Its lifecycle state (`ACTIVE` when it works) and, when not `ACTIVE`, why. */
  readonly state?: string;
  readonly stateReason?: string;
}

interface DescribeEventBusOutput {
  readonly EventBusArn?: string;
  readonly Name?: string;
  readonly State?: string;
  readonly StateReason?: string;
  readonly StorageConfiguration?: {
    readonly RetentionPeriodInDays?: number;
    readonly RetentionWindowStartTime?: Date;
  };
}

function notFound(error: unknown): boolean {
  return error instanceof Error && error.name === 'ResourceNotFoundException';
}

export async function describeRetention(rpc: EventBridgeV2Rpc, eventBusArn: string): Promise<BusRetention> {
  const bus = await rpc
    .call<DescribeEventBusOutput>('DescribeEventBus', { EventBusArn: eventBusArn })
    .catch((error: unknown) => {
      if (notFound(error)) {
        throw new UsageError(
          `Event bus ${eventBusArn} does not exist`,
          'check --event-bus, --stack and --region',
        );
      }
      throw error;
    });
  const storage = bus.StorageConfiguration ?? {};
  return {
    eventBusArn,
    ...(bus.Name === undefined ? {} : { name: bus.Name }),
    ...(bus.State === undefined ? {} : { state: bus.State }),
    ...(bus.StateReason === undefined ? {} : { stateReason: bus.StateReason }),
    ...(storage.RetentionPeriodInDays === undefined
      ? {}
      : { retentionPeriodInDays: storage.RetentionPeriodInDays }),
    ...(storage.RetentionWindowStartTime === undefined
      ? {}
      : { retentionWindowStartTime: storage.RetentionWindowStartTime }),
  };
}

/** A subscriber as ListSubscribers and DescribeSubscriber name it, with its run state. */
export interface SubscriberSummary {
  readonly SubscriberArn?: string;
  readonly Name?: string;
  /** `RUNNING` or `STOPPED`: only a running subscriber delivers. */
  readonly State?: string;
  /** Present (true) once the bus owner revoked it: it never delivers again. */
  readonly Revoked?: boolean;
}

/** What DescribeSubscriber returns; the members a replay copies are passed on as they came. */
type SubscriberDescription = Readonly<Record<string, unknown>> & {
  readonly SubscriberArn?: string;
  readonly Name?: string;
  readonly InvokeConfiguration?: { readonly TargetArn?: string };
};

/** The members of a subscriber a replay copy keeps: what and how it delivers. */
const COPIED_MEMBERS = [
  'InvokeConfiguration',
  'FilterConfiguration',
  'Type',
  'BatchConfiguration',
  'RetryPolicy',
  'OnFailureConfiguration',
  'LogConfiguration',
] as const;

/** Names of the replay subscribers this CLI creates; they are left out when replaying "to every subscriber". */
export { REPLAY_SUBSCRIBER_PREFIX };

/** Every subscriber of the bus, page by page. */
export async function listSubscribers(
  rpc: EventBridgeV2Rpc,
  eventBusArn: string,
): Promise<SubscriberSummary[]> {
  const found: SubscriberSummary[] = [];
  let nextToken: string | undefined;
  do {
    const page = await rpc.call<{ Subscribers?: SubscriberSummary[]; NextToken?: string }>(
      'ListSubscribers',
      {
        EventBusArn: eventBusArn,
        ...(nextToken === undefined ? {} : { NextToken: nextToken }),
      },
    );
    found.push(...(page.Subscribers ?? []));
    nextToken = page.NextToken;
  } while (nextToken !== undefined);
  return found;
}

/** The subscribers to replay to: those named, else every subscriber of the bus but replay copies. */
async function sourceSubscribers(
  rpc: EventBridgeV2Rpc,
  eventBusArn: string,
  names: readonly string[],
): Promise<SubscriberSummary[]> {
  const all = await listSubscribers(rpc, eventBusArn);
  if (names.length === 0) {
    const chosen = all.filter((subscriber) => !subscriber.Name?.startsWith(REPLAY_SUBSCRIBER_PREFIX));
    if (chosen.length === 0) {
      throw new UsageError(
        `The bus ${eventBusArn} has no subscriber to replay to`,
        'create one, or pass --subscriber',
      );
    }
    return chosen;
  }
  return names.map((name) => {
    const subscriber = all.find((candidate) => candidate.Name === name);
    if (subscriber === undefined) {
      throw new UsageError(
        `Subscriber ${name} does not exist on bus ${eventBusArn}`,
        `check --subscriber (the bus has: ${all.map((candidate) => candidate.Name).join(', ') || 'none'})`,
      );
    }
    return subscriber;
  });
}

function isUniversalTarget(targetArn: string | undefined): boolean {
  return targetArn !== undefined && /^arn:aws[a-z0-9-]*:events:::aws-sdk:/.test(targetArn);
}

/** CBOR tag 1 (epoch seconds), the protocol's timestamp. */
function timestamp(epochMs: number): unknown {
  return tag({ tag: 1, value: epochMs / 1000 });
}

export interface ReplaySubscriber {
  readonly name: string;
  readonly subscriberArn: string;
  /** The subscriber it copies. */
  readonly copyOf: string;
  readonly targetArn?: string;
}

export interface RetentionReplayOptions {
  readonly eventBusArn: string;
  readonly window: TimeWindow;
  /** Subscribers of the bus to replay to, by name; every one (but replay copies) when empty. */
  readonly subscribers: readonly string[];
  /** The names' common part: `<prefix>-<n>` per subscriber. */
  readonly namePrefix: string;
}

/**
 * Starts a replay of `window` from the bus's retention: for each chosen subscriber, a copy of it
 * starting at the window's start (`POINT_IN_TIME`, `TIMESTAMP`) and ending at its end. Refused
 * when the window starts before the retention window: those events are gone.
 */
export async function startRetentionReplay(
  rpc: EventBridgeV2Rpc,
  options: RetentionReplayOptions,
): Promise<{ readonly retention: BusRetention; readonly subscribers: ReplaySubscriber[] }> {
  const retention = await describeRetention(rpc, options.eventBusArn);
  const oldest = retention.retentionWindowStartTime?.getTime();
  if (oldest !== undefined && options.window.since < oldest) {
    throw new UsageError(
      `--since ${new Date(options.window.since).toISOString()} is before the bus's retention window, which starts at ${new Date(oldest).toISOString()} (${retention.retentionPeriodInDays ?? '?'} days)`,
      'start the replay within the retention window (`status` shows it); older events are no longer on the bus',
    );
  }
  const sources = await sourceSubscribers(rpc, options.eventBusArn, options.subscribers);
  const subscribers: ReplaySubscriber[] = [];
  for (const [index, source] of sources.entries()) {
    const described = await rpc.call<SubscriberDescription>('DescribeSubscriber', {
      SubscriberArn: source.SubscriberArn,
    });
    const name = `${options.namePrefix}-${index + 1}`;
    const copied = Object.fromEntries(
      COPIED_MEMBERS.flatMap((member) =>
        described[member] === undefined ? [] : [[member, described[member]]],
      ),
    );
    const created = await rpc.call<{ SubscriberArn?: string; Name?: string }>('CreateSubscriber', {
      Name: name,
      EventBusArn: options.eventBusArn,
      Description: `banking-events-poller archive-replay of ${source.Name}`.slice(0, 512),
      ...copied,
      StartingPosition: 'POINT_IN_TIME',
      PointInTimeConfiguration: {
        PointType: 'TIMESTAMP',
        StartingPoint: timestamp(options.window.since),
        EndPoint: timestamp(options.window.until),
      },
      // A universal (aws-sdk) target shapes its input itself and refuses a Transformer.
      ...(isUniversalTarget(described.InvokeConfiguration?.TargetArn)
        ? {}
        : { Transformer: described.Transformer ?? { Type: 'RAW' } }),
      State: 'RUNNING',
    });
    subscribers.push({
      name,
      subscriberArn: created.SubscriberArn ?? '',
      copyOf: source.Name ?? '',
      ...(described.InvokeConfiguration?.TargetArn === undefined
        ? {}
        : { targetArn: described.InvokeConfiguration.TargetArn }),
    });
  }
  return { retention, subscribers };
}

/** Whether `value` is an IAM role's ARN, as `InvokeConfiguration.RoleArn` takes one. */
export function isRoleArn(value: string): boolean {
  return /^arn:aws[a-z0-9-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/.test(value);
}

export interface TemporarySubscriberOptions {
  readonly eventBusArn: string;
  readonly name: string;
  /** An EventBridge pattern on the published envelope (`source`, `detail-type`). */
  readonly pattern: Record<string, unknown>;
  readonly queueArn: string;
  /** The role EventBridge assumes to send to the queue (`sqs:SendMessage`). */
  readonly roleArn: string;
  readonly description: string;
}

/**
 * A subscriber that delivers what is published from now on (`LATEST`) to a queue, unordered, each
 * event `WITH_METADATA` so the reader sees its group and the bus's sequence number; resolves to
 * its ARN.
 */
export async function createTemporarySubscriber(
  rpc: EventBridgeV2Rpc,
  options: TemporarySubscriberOptions,
): Promise<string> {
  const created = await rpc.call<{ SubscriberArn?: string }>('CreateSubscriber', {
    Name: options.name,
    EventBusArn: options.eventBusArn,
    Description: options.description.slice(0, 512),
    InvokeConfiguration: { TargetArn: options.queueArn, RoleArn: options.roleArn },
    FilterConfiguration: {
      Language: 'EVENT_BRIDGE_PATTERN',
      // PutEvents publishes the classic envelope as the event's data: source and detail-type are in it.
      Filters: [{ Scope: 'DATA', Pattern: JSON.stringify(options.pattern) }],
    },
    Type: 'UNORDERED',
    StartingPosition: 'LATEST',
    Transformer: { Type: 'WITH_METADATA' },
    State: 'RUNNING',
  });
  if (created.SubscriberArn === undefined)
    throw new Error('CreateSubscriber answered without a SubscriberArn');
  return created.SubscriberArn;
}

export async function deleteSubscriber(rpc: EventBridgeV2Rpc, subscriberArn: string): Promise<void> {
  await rpc.call('DeleteSubscriber', { SubscriberArn: subscriberArn });
}

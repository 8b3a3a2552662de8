/**
 * What the operator CLI (`functions/cli/commands/`) calls against a deployment, as three grants:
 * read (`status`, `jumps list`, `doctor --no-write-probes`), tail (`tail`) and recovery (`rewind`,
 * `jumps accept|reject`, `replay`, `event`, `archive-replay`, `secret set`). Each statement names
 * the construct's own resources;
 * the few that cannot are named in `OPERATOR_WILDCARDS` with the reason. No grant reads a secret:
 * commands that need the banking service ask the deployed function (`lambda:InvokeFunction`),
 * which holds the credentials. On a Custom Event Bus the bus statements are its own (subscribers
 * instead of rules, retention instead of an archive); the rest is the same.
 * `test/integration/cli/operator-permissions.test.ts` records every call each command makes at
 * moto and holds it against these statements; `custom-bus-operator-permissions.test.ts` does so
 * for the calls to a Custom Event Bus.
 */
import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as scheduler from 'aws-cdk-lib/aws-scheduler';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct, type IConstruct } from 'constructs';
import {
  REPLAY_SUBSCRIBER_PREFIX,
  TAIL_RESOURCE_PREFIX,
} from '../../functions/cli/operator-resource-names.ts';
import type { SubscriberRoute } from './custom-bus-routing.ts';
import type { CustomEventBus } from './custom-event-bus.ts';
import { grantKeyThrough } from './encryption-key.ts';
import { tailQueueArns } from './tail-delivery-role.ts';

/** The classic bus and its archive. */
export interface ClassicOperatorBus {
  readonly kind: 'classic';
  readonly eventBus: events.IEventBus;
  readonly archive: events.Archive;
}

/** The Custom Event Bus, the construct's subscribers on it, and the role tail's subscriber delivers through. */
export interface CustomOperatorBus {
  readonly kind: 'custom';
  readonly bus: CustomEventBus;
  readonly subscribers: readonly SubscriberRoute[];
  readonly tailDeliveryRole: iam.IRole;
}

/** The construct's resources the operator commands work on. */
export interface OperatorResources {
  readonly checkpointTable: dynamodb.ITable;
  readonly bus: ClassicOperatorBus | CustomOperatorBus;
  /** Program name → its credentials secret. */
  readonly secrets: ReadonlyMap<string, secretsmanager.ISecret>;
  /** Program name → its schedule. */
  readonly schedules: ReadonlyMap<string, scheduler.ISchedule>;
  readonly pollerFunction: lambda.IFunction;
}

/**
 * The statements whose resource is a pattern rather than one of the construct's ARNs, and why;
 * cdk-nag's `AwsSolutions-IAM5` findings for them are acknowledged on the grantee with these reasons.
 */
export const OPERATOR_WILDCARDS = Object.freeze({
  stack: 'CloudFormation stack ARNs end in an id assigned at creation: stack/<name>/* is the one stack.',
  alarms:
    'CloudFormation names the stack\'s alarms "<stack>-<logical id>-<suffix>" and doctor lists them by that prefix.',
  tailQueues: `tail creates its queue at run time, named ${TAIL_RESOURCE_PREFIX}<random>; only such queues.`,
  tailRules: `tail creates its rule at run time on the poller's bus, named ${TAIL_RESOURCE_PREFIX}<random>; only such rules.`,
  replays:
    'archive-replay names its replay at run time (--name, or bep-<time>-<4 hex>); StartReplay is also bound to the archive and the bus.',
  rules: "archive-replay --rule names any rule of the poller's bus to replay to; DescribeRule only.",
  listArchives: 'events:ListArchives has no resource type: "*" is the only resource IAM accepts for it.',
  tailSubscribers: `tail creates its subscriber at run time on the poller's Custom Event Bus, named ${TAIL_RESOURCE_PREFIX}<random> (the ARN ends in a service-generated id); only such subscribers.`,
  replaySubscribers: `archive-replay copies subscribers at run time on the poller's Custom Event Bus, named ${REPLAY_SUBSCRIBER_PREFIX}<time>-<4 hex>-<n> (the ARN ends in a service-generated id); only such subscribers.`,
});

/** `cloudformation:DescribeStacks` on the construct's stack: how `--stack` finds everything else. */
function grantDescribeStack(scope: Construct, grantee: iam.IGrantable): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['cloudformation:DescribeStacks'],
    resourceArns: [stackArn(Stack.of(scope))],
  });
}

function stackArn(stack: Stack): string {
  return stack.formatArn({
    service: 'cloudformation',
    resource: 'stack',
    resourceName: `${stack.stackName}/*`,
  });
}

/**
 * `status` and `doctor --no-write-probes`: describe and read, nothing else. The checkpoint row
 * (`GetItem`; `Scan` lists the programs when `--stack` is not given), the table, the bus, the
 * schedules and the stack's alarms. No write, no secret, and no `lambda:InvokeFunction`: one
 * action covers every operator request the function takes, a replay included, so doctor's bank
 * checks need the recovery grant.
 */
export function grantOperatorRead(
  scope: Construct,
  resources: OperatorResources,
  grantee: iam.IGrantable,
): iam.Grant {
  const stack = Stack.of(scope);
  const alarms = stack.formatArn({
    service: 'cloudwatch',
    resource: 'alarm',
    resourceName: `${stack.stackName}-*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
  const grants = [
    grantDescribeStack(scope, grantee),
    resources.checkpointTable.grant(grantee, 'dynamodb:GetItem', 'dynamodb:Scan', 'dynamodb:DescribeTable'),
    ...tableKeyGrant(resources.checkpointTable, grantee, ['kms:Decrypt']),
    ...(resources.bus.kind === 'classic'
      ? [grantDescribeBus(resources.bus.eventBus, grantee)]
      : [grantDescribeCustomBus(resources.bus, grantee)]),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['scheduler:GetSchedule'],
      resourceArns: [...resources.schedules.values()].map((schedule) => schedule.scheduleArn),
    }),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['cloudwatch:DescribeAlarms'],
      resourceArns: [alarms],
    }),
  ];
  acknowledgeWildcards(grantee, [
    [stackArn(stack), OPERATOR_WILDCARDS.stack],
    [alarms, OPERATOR_WILDCARDS.alarms],
  ]);
  return grants.reduce((all, grant) => all.combine(grant));
}

/**
 * `tail`: it creates a rule on the bus and a queue, reads and deletes the queue's messages, and
 * removes both. A grant of its own, apart from read: it writes (only to resources named
 * `bep-tail-…`, and a rule's target may only be such a queue) and it shows the events themselves,
 * the bank's data, where `status` and `doctor` show only the poller's state.
 */
export function grantOperatorTail(
  scope: Construct,
  resources: OperatorResources,
  grantee: iam.IGrantable,
): iam.Grant {
  if (resources.bus.kind === 'custom') return grantCustomBusTail(scope, resources.bus, grantee);
  const stack = Stack.of(scope);
  const queues = tailQueueArns(scope);
  const { eventBus } = resources.bus;
  const rules = ruleArns(eventBus, `${TAIL_RESOURCE_PREFIX}*`);
  const grants = [
    grantDescribeStack(scope, grantee),
    grantDescribeBus(eventBus, grantee),
    iam.Grant.addToPrincipal({
      grantee,
      // TagQueue: CreateQueue with tags (tail tags its queue "created-by") needs it too.
      actions: [
        'sqs:CreateQueue',
        'sqs:TagQueue',
        'sqs:GetQueueAttributes',
        'sqs:SetQueueAttributes',
        'sqs:ReceiveMessage',
        'sqs:DeleteMessage',
        'sqs:DeleteQueue',
      ],
      resourceArns: [queues],
    }),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['events:PutRule', 'events:RemoveTargets', 'events:DeleteRule'],
      resourceArns: [rules],
    }),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['events:PutTargets'],
      resourceArns: [rules],
      conditions: { ArnLike: { 'events:TargetArn': queues } },
    }),
  ];
  acknowledgeWildcards(grantee, [
    [stackArn(stack), OPERATOR_WILDCARDS.stack],
    [queues, OPERATOR_WILDCARDS.tailQueues],
    [rules, OPERATOR_WILDCARDS.tailRules],
  ]);
  return grants.reduce((all, grant) => all.combine(grant));
}

/**
 * `rewind`, `jumps accept|reject`, `replay`, `event`, `archive-replay` and `secret set`: exactly
 * what they call. `GetItem`/`UpdateItem` on the checkpoint table (rewind's conditional move, the
 * decision on a held sequence jump); invoking the poller
 * function (the operator requests: replay from the bank, event lookups, rewind's feed check and
 * `--to latest`, doctor's bank checks); describing the bus and its archive, starting and
 * following a replay of the archive to the bus; `PutSecretValue` on the programs' secrets (a
 * write: the value is never read back). No `GetSecretValue`, and no `PutEvents`: the function
 * publishes what an operator request replays.
 */
export function grantOperatorRecovery(
  scope: Construct,
  resources: OperatorResources,
  grantee: iam.IGrantable,
): iam.Grant {
  const stack = Stack.of(scope);
  const common = [
    grantDescribeStack(scope, grantee),
    resources.checkpointTable.grant(grantee, 'dynamodb:GetItem', 'dynamodb:UpdateItem'),
    ...tableKeyGrant(resources.checkpointTable, grantee, ['kms:Decrypt', 'kms:GenerateDataKey']),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['lambda:InvokeFunction'],
      resourceArns: [resources.pollerFunction.functionArn],
    }),
  ];
  // Granted last (a grant adds its statement when made): a classic grant's statements keep the
  // order they had before the custom bus.
  const secrets = () => [...resources.secrets.values()].map((secret) => grantPutSecretValue(secret, grantee));
  if (resources.bus.kind === 'custom') {
    return [...common, grantCustomBusReplay(scope, resources.bus, grantee), ...secrets()].reduce(
      (all, grant) => all.combine(grant),
    );
  }
  const { eventBus, archive } = resources.bus;
  const replays = stack.formatArn({ service: 'events', resource: 'replay', resourceName: '*' });
  const grants = [
    ...common,
    grantDescribeBus(eventBus, grantee),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['events:DescribeArchive'],
      resourceArns: [archive.archiveArn],
    }),
    iam.Grant.addToPrincipal({ grantee, actions: ['events:ListArchives'], resourceArns: ['*'] }),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['events:DescribeRule'],
      resourceArns: [ruleArns(eventBus, '*')],
    }),
    // IAM checks StartReplay against the replay, its archive and its destination bus.
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['events:StartReplay'],
      resourceArns: [replays, archive.archiveArn, eventBus.eventBusArn],
    }),
    iam.Grant.addToPrincipal({ grantee, actions: ['events:DescribeReplay'], resourceArns: [replays] }),
    ...secrets(),
  ];
  acknowledgeWildcards(grantee, [
    [stackArn(stack), OPERATOR_WILDCARDS.stack],
    [replays, OPERATOR_WILDCARDS.replays],
    [ruleArns(eventBus, '*'), OPERATOR_WILDCARDS.rules],
    ['*', OPERATOR_WILDCARDS.listArchives],
  ]);
  return grants.reduce((all, grant) => all.combine(grant));
}

/**
 * A checkpoint table under a customer-managed key (`encryptionKey`, or an existing table's own):
 * reading it needs the key's `Decrypt`, writing also `GenerateDataKey`, through DynamoDB only.
 */
function tableKeyGrant(
  table: dynamodb.ITable,
  grantee: iam.IGrantable,
  actions: readonly string[],
): iam.Grant[] {
  return table.encryptionKey === undefined
    ? []
    : [grantKeyThrough(table.encryptionKey, grantee, 'dynamodb', actions)];
}

function grantDescribeBus(eventBus: events.IEventBus, grantee: iam.IGrantable): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['events:DescribeEventBus'],
    resourceArns: [eventBus.eventBusArn],
  });
}

/**
 * What `status` and `doctor` read on a Custom Event Bus: the bus (its state and retention window),
 * its subscribers listed, and the construct's subscribers described (doctor checks they run).
 * IAM checks `DescribeEventBus` and `ListSubscribers` (scoped to the bus) against the bus, and
 * `DescribeSubscriber` against the subscriber (docs: eb-custom-bus-permissions).
 */
function grantDescribeCustomBus(custom: CustomOperatorBus, grantee: iam.IGrantable): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['events:DescribeEventBus', 'events:ListSubscribers'],
    resourceArns: [custom.bus.eventBusArn],
  }).combine(grantDescribeSubscribers(custom, grantee));
}

function grantDescribeSubscribers(custom: CustomOperatorBus, grantee: iam.IGrantable): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['events:DescribeSubscriber'],
    resourceArns: custom.subscribers.map((route) => route.subscriber.attrSubscriberArn),
  });
}

/** Subscribers named `<prefix>…`: `arn:…:events:REGION:ACCOUNT:subscriber/<prefix>*\/*` (the id is the service's). */
function subscriberArns(scope: Construct, prefix: string): string {
  return Stack.of(scope).formatArn({
    service: 'events',
    resource: 'subscriber',
    resourceName: `${prefix}*/*`,
  });
}

/**
 * `iam:PassRole` on `roles`, to EventBridge only: a subscriber names the role it delivers through,
 * and creating one passes it.
 */
function grantPassToEventBridge(roleArns: readonly string[], grantee: iam.IGrantable): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['iam:PassRole'],
    resourceArns: [...roleArns],
    conditions: { StringEquals: { 'iam:PassedToService': 'events.amazonaws.com' } },
  });
}

/**
 * `tail` on a Custom Event Bus: a subscriber named `bep-tail-…` (created on the bus, hence both
 * resources for `CreateSubscriber`), delivering through the construct's tail delivery role (the
 * only role it may pass), and the queue (no queue policy: the subscriber delivers with its role).
 */
function grantCustomBusTail(scope: Construct, custom: CustomOperatorBus, grantee: iam.IGrantable): iam.Grant {
  const stack = Stack.of(scope);
  const queues = tailQueueArns(scope);
  const subscribers = subscriberArns(scope, TAIL_RESOURCE_PREFIX);
  const grants = [
    grantDescribeStack(scope, grantee),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['events:DescribeEventBus'],
      resourceArns: [custom.bus.eventBusArn],
    }),
    iam.Grant.addToPrincipal({
      grantee,
      // TagQueue: CreateQueue with tags (tail tags its queue "created-by") needs it too.
      actions: [
        'sqs:CreateQueue',
        'sqs:TagQueue',
        'sqs:GetQueueAttributes',
        'sqs:ReceiveMessage',
        'sqs:DeleteMessage',
        'sqs:DeleteQueue',
      ],
      resourceArns: [queues],
    }),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['events:CreateSubscriber'],
      resourceArns: [custom.bus.eventBusArn, subscribers],
    }),
    iam.Grant.addToPrincipal({ grantee, actions: ['events:DeleteSubscriber'], resourceArns: [subscribers] }),
    grantPassToEventBridge([custom.tailDeliveryRole.roleArn], grantee),
  ];
  acknowledgeWildcards(grantee, [
    [stackArn(stack), OPERATOR_WILDCARDS.stack],
    [queues, OPERATOR_WILDCARDS.tailQueues],
    [subscribers, OPERATOR_WILDCARDS.tailSubscribers],
  ]);
  return grants.reduce((all, grant) => all.combine(grant));
}

/**
 * `archive-replay` on a Custom Event Bus: reads the bus's retention window, lists and describes
 * the construct's subscribers, and creates point-in-time copies named `bep-replay-…` that deliver
 * through the copied subscribers' roles (the only roles it may pass).
 */
function grantCustomBusReplay(
  scope: Construct,
  custom: CustomOperatorBus,
  grantee: iam.IGrantable,
): iam.Grant {
  const stack = Stack.of(scope);
  const replays = subscriberArns(scope, REPLAY_SUBSCRIBER_PREFIX);
  const grants = [
    grantDescribeCustomBus(custom, grantee),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['events:CreateSubscriber'],
      resourceArns: [custom.bus.eventBusArn, replays],
    }),
    grantPassToEventBridge(
      custom.subscribers.map((route) => route.deliveryRole.roleArn),
      grantee,
    ),
  ];
  acknowledgeWildcards(grantee, [
    [stackArn(stack), OPERATOR_WILDCARDS.stack],
    [replays, OPERATOR_WILDCARDS.replaySubscribers],
  ]);
  return grants.reduce((all, grant) => all.combine(grant));
}

/** Rules of `eventBus` named `pattern`; rules of the default bus have no bus name in their ARN. */
function ruleArns(eventBus: events.IEventBus, pattern: string): string {
  const name = eventBus.eventBusName === 'default' ? pattern : `${eventBus.eventBusName}/${pattern}`;
  return Stack.of(eventBus).formatArn({ service: 'events', resource: 'rule', resourceName: name });
}

/**
 * `secretsmanager:PutSecretValue` alone (`grantWrite` would add `UpdateSecret`, which can change
 * the key and the description). A secret imported by name is granted as `<name>-??????`, matching
 * the suffix Secrets Manager appends; a customer-managed key is granted `kms:GenerateDataKey`
 * through Secrets Manager only, which encrypting the new value needs.
 */
function grantPutSecretValue(secret: secretsmanager.ISecret, grantee: iam.IGrantable): iam.Grant {
  const grant = iam.Grant.addToPrincipal({
    grantee,
    actions: ['secretsmanager:PutSecretValue'],
    resourceArns: [secret.secretFullArn ?? `${secret.secretArn}-??????`],
  });
  if (secret.encryptionKey === undefined) return grant;
  const viaSecretsManager = new kms.ViaServicePrincipal(
    `secretsmanager.${Stack.of(secret).region}.amazonaws.com`,
    grantee.grantPrincipal,
  );
  return grant.combine(secret.encryptionKey.grant(viaSecretsManager, 'kms:GenerateDataKey'));
}

/**
 * cdk-nag's `AwsSolutions-IAM5` findings for the patterns above, acknowledged one by one on the
 * grantee when it is a construct of the app (a role of another account's is not).
 */
function acknowledgeWildcards(
  grantee: iam.IGrantable,
  patterns: ReadonlyArray<readonly [resourceArn: string, reason: string]>,
): void {
  const principal = grantee.grantPrincipal as unknown as IConstruct;
  if (!(principal instanceof Construct)) return;
  const stack = Stack.of(principal);
  for (const [resourceArn, reason] of patterns) {
    Validations.of(principal).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagText(stack.resolve(resourceArn))}]`,
      reason: `Operator grant (docs/security.md#operator-permissions): ${reason}`,
    });
  }
}

/** A resolved ARN as cdk-nag writes it in a finding: `<AWS::Region>`, `<LogicalId>`, `<LogicalId.Arn>`. */
function nagText(value: unknown): string {
  if (typeof value === 'string') return value;
  const intrinsic = value as {
    Ref?: string;
    'Fn::GetAtt'?: [string, string];
    'Fn::Join'?: [string, unknown[]];
  };
  if (intrinsic.Ref !== undefined) return `<${intrinsic.Ref}>`;
  if (intrinsic['Fn::GetAtt'] !== undefined) return `<${intrinsic['Fn::GetAtt'].join('.')}>`;
  if (intrinsic['Fn::Join'] !== undefined) {
    const [separator, parts] = intrinsic['Fn::Join'];
    return parts.map(nagText).join(separator);
  }
  return JSON.stringify(value);
}

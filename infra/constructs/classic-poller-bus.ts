/**
 * The classic bus (`eventBusKind: 'classic'`, the default): an EventBridge bus, created or
 * `existingEventBus`, with an archive to replay from and a rule per route. Everything the construct
 * asks of its bus (`poller-bus.ts`), answered for this kind.
 */
import { CfnOutput, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { TAIL_RESOURCE_PREFIX } from '../../functions/cli/operator-resource-names.ts';
import { STACK_OUTPUTS } from '../../functions/cli/stack-outputs.ts';
import { SCHEMA_EVENT_TYPES } from '../../functions/event-schema/event-json-schema.ts';
import type { KeyServiceUses } from './encryption-key.ts';
import { EventRouting, type Route } from './event-routing.ts';
import { EventSchemas } from './event-schemas.ts';
import { acknowledgeWildcards, OPERATOR_WILDCARDS } from './operator-grants.ts';
import type {
  BusEnvironment,
  PollerBusInputs,
  PollerBusMembers,
  PollerBusStrategy,
  SourceGuard,
} from './poller-bus.ts';
import { PollerSourceGuard } from './poller-source-guard.ts';
import { tailQueueArns } from './tail-delivery-role.ts';

export class ClassicPollerBus implements PollerBusStrategy {
  readonly eventBus: events.IEventBus;
  readonly archive: events.Archive;
  readonly schemas: EventSchemas;
  readonly routing: EventRouting;
  readonly reportsBrokenOrder = false;
  /** The bus when the construct created it; `undefined` for `existingEventBus`. */
  readonly #created: events.EventBus | undefined;
  readonly #scope: Construct;

  constructor(scope: Construct, { props, resolved }: PollerBusInputs) {
    this.#scope = scope;
    const { encryptionKey } = resolved;
    const { eventSource } = resolved.settings;
    this.#created =
      props.existingEventBus === undefined
        ? new events.EventBus(scope, 'EventBus', {
            eventBusName: resolved.settings.eventBusName,
            kmsKey: encryptionKey,
          })
        : undefined;
    this.eventBus = props.existingEventBus ?? this.#created!;
    this.archive = new events.Archive(scope, 'Archive', {
      sourceEventBus: this.eventBus,
      description: `Every event from ${eventSource}, for replay`,
      eventPattern: { source: [eventSource] },
      retention: resolved.archiveRetention,
    });
    // Set on the resource rather than through `kmsKey`: the L2 would add a key-policy statement
    // naming the bus resource, and the key and the bus would depend on each other.
    if (encryptionKey !== undefined) {
      (this.archive.node.defaultChild as events.CfnArchive).kmsKeyIdentifier = encryptionKey.keyArn;
    }
    // Created in this order since the first release: the template lists resources in it.
    this.schemas = new EventSchemas(scope, 'Schemas', {
      eventSource,
      eventTypes: [...SCHEMA_EVENT_TYPES],
      registryName: props.schemaRegistryName,
    });
    this.routing = new EventRouting(scope, 'Routing', {
      eventBus: this.eventBus,
      eventSource,
      routes: resolved.routes,
      unrouted: resolved.unrouted,
      quarantine: resolved.quarantine,
      encryptionKey,
    });
  }

  get eventBusName(): string {
    return this.eventBus.eventBusName;
  }

  get eventBusArn(): string {
    return this.eventBus.eventBusArn;
  }

  get members(): PollerBusMembers {
    return { eventBus: this.eventBus, archive: this.archive, routing: this.routing };
  }

  get routes(): Route[] {
    return this.routing.routes;
  }

  functionEnvironment(): BusEnvironment {
    return {
      // An imported bus may live in another account: PutEvents needs its ARN then; the name suffices
      // for ours.
      EVENT_BUS_NAME: this.#created === undefined ? this.eventBus.eventBusArn : this.eventBus.eventBusName,
      // Left out on the classic bus: the handler's default, and the environment as it always was.
      EVENT_BUS_KIND: undefined,
    };
  }

  grantFunctionPublish(role: iam.IGrantable): void {
    this.eventBus.grantPutEventsTo(role);
  }

  guardSource(eventSource: string, poller: iam.IGrantable): SourceGuard | undefined {
    // Only on a bus we create: an existing bus's policy is its owner's (docs/security.md gives the statement).
    return this.#created === undefined
      ? undefined
      : new PollerSourceGuard(this.#created, eventSource, poller);
  }

  grantPublish(grantee: iam.IGrantable): iam.Grant {
    // To the principal's own policy only: a grant through the bus policy would need a statement
    // id per principal, and a principal with no policy here (an ArnPrincipal) has its own.
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['events:PutEvents'],
      resourceArns: [this.eventBus.eventBusArn],
    });
  }

  keyServiceUses(): Pick<KeyServiceUses, 'bus'> {
    return { bus: literalBus(this.eventBus) };
  }

  addOutputs(scope: Construct): void {
    new CfnOutput(scope, STACK_OUTPUTS.archiveName, {
      value: this.archive.archiveName,
      description: 'Archive of the bus (banking-events-poller archive-replay)',
    });
    new CfnOutput(scope, STACK_OUTPUTS.eventBusName, {
      value: this.eventBus.eventBusName,
      description: 'Subscribe here',
    });
    new CfnOutput(scope, STACK_OUTPUTS.eventBusArn, { value: this.eventBus.eventBusArn });
  }

  grantOperatorRead(grantee: iam.IGrantable): iam.Grant {
    return grantDescribeBus(this.eventBus, grantee);
  }

  /**
   * A rule on the bus and a queue, both named `bep-tail-…`; the rule may target only such a queue.
   * The queue's policy lets the rule send to it (`SetQueueAttributes`).
   */
  grantOperatorTail(grantee: iam.IGrantable): iam.Grant {
    const queues = tailQueueArns(this.#scope);
    const rules = ruleArns(this.eventBus, `${TAIL_RESOURCE_PREFIX}*`);
    const grants = [
      grantDescribeBus(this.eventBus, grantee),
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
      [queues, OPERATOR_WILDCARDS.tailQueues],
      [rules, OPERATOR_WILDCARDS.tailRules],
    ]);
    return grants.reduce((all, grant) => all.combine(grant));
  }

  /** Describing the bus and its archive, starting and following a replay of the archive to the bus. */
  grantOperatorRecovery(grantee: iam.IGrantable): iam.Grant {
    const { eventBus, archive } = this;
    const replays = Stack.of(this.#scope).formatArn({
      service: 'events',
      resource: 'replay',
      resourceName: '*',
    });
    const grants = [
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
    ];
    acknowledgeWildcards(grantee, [
      [replays, OPERATOR_WILDCARDS.replays],
      [ruleArns(eventBus, '*'), OPERATOR_WILDCARDS.rules],
      ['*', OPERATOR_WILDCARDS.listArchives],
    ]);
    return grants.reduce((all, grant) => all.combine(grant));
  }
}

function grantDescribeBus(eventBus: events.IEventBus, grantee: iam.IGrantable): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['events:DescribeEventBus'],
    resourceArns: [eventBus.eventBusArn],
  });
}

/** Rules of `eventBus` named `pattern`; rules of the default bus have no bus name in their ARN. */
function ruleArns(eventBus: events.IEventBus, pattern: string): string {
  const name = eventBus.eventBusName === 'default' ? pattern : `${eventBus.eventBusName}/${pattern}`;
  return Stack.of(eventBus).formatArn({ service: 'events', resource: 'rule', resourceName: name });
}

/** The bus's name and ARN without a reference to a bus resource of the stack (see `KeyServiceUses`). */
function literalBus(bus: events.IEventBus): { name: string; arn: string } {
  if (!(bus instanceof events.EventBus)) return { name: bus.eventBusName, arn: bus.eventBusArn };
  const name = (bus.node.defaultChild as events.CfnEventBus).name;
  return {
    name,
    arn: Stack.of(bus).formatArn({ service: 'events', resource: 'event-bus', resourceName: name }),
  };
}

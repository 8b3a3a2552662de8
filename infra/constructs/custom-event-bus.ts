/**
 * The EventBridge Custom Event Bus (`AWS::EventsV2::EventBus`, API EventBridgeV2): a bus that keeps
 * every event for its retention period, delivers to subscribers (FIFO per event group or
 * unordered) and drops duplicates at publish. What the construct builds instead of the classic bus,
 * its rules and its archive when `eventBusKind` is `'custom'`.
 */
import { type Duration, Names, Stack } from 'aws-cdk-lib';
import * as eventsv2 from 'aws-cdk-lib/aws-eventsv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

export interface CustomEventBusProps {
  /**
   * The bus's name (the first character a letter or digit; then letters, digits, `.`, `-`, `_`).
   *
   * @default - a name derived from the construct's path, unique in the account
   */
  readonly eventBusName?: string;
  /** How long the bus keeps every event (1 to 365 days): subscribers can start from any point in it. */
  readonly retention: Duration;
  /**
   * A customer-managed key for everything the bus stores (events, metadata, subscriber filters and
   * target settings). Its policy must admit EventBridge for this bus (`BankingEventsPoller` adds
   * the statements when the key is in the same app; `encryption-key.ts`).
   *
   * @default - an AWS owned key
   */
  readonly encryptionKey?: kms.IKey;
  /** @default - none */
  readonly description?: string;
}

/** The bus name's own rule, from the CloudFormation schema's documentation of `Name`. */
const BUS_NAME_LENGTH = 64;

export class CustomEventBus extends Construct {
  public readonly resource: eventsv2.CfnEventBus;
  /** `arn:…:events:REGION:ACCOUNT:event-busv2/NAME/ID`: what PutEvents and subscribers name. */
  public readonly eventBusArn: string;
  /** The name, known at synth (subscribers' and key-policy conditions are written with it). */
  public readonly eventBusName: string;

  constructor(scope: Construct, id: string, props: CustomEventBusProps) {
    super(scope, id);
    this.eventBusName =
      props.eventBusName ?? Names.uniqueResourceName(this, { maxLength: BUS_NAME_LENGTH, separator: '-' });
    this.resource = new eventsv2.CfnEventBus(this, 'Resource', {
      name: this.eventBusName,
      description: props.description,
      storageConfiguration: { retentionPeriodInDays: props.retention.toDays() },
      encryptionConfiguration:
        props.encryptionKey === undefined ? undefined : { kmsKeyIdentifier: props.encryptionKey.keyArn },
    });
    this.eventBusArn = this.resource.attrEventBusArn;
  }

  /**
   * The bus's ARN with its service-generated id as a wildcard: for policies that must not depend on
   * the bus resource (a key the bus is encrypted with, the subscribers' own roles).
   */
  get eventBusArnPattern(): string {
    return Stack.of(this).formatArn({
      service: 'events',
      resource: 'event-busv2',
      resourceName: `${this.eventBusName}/*`,
    });
  }

  /** `events:PutEvents` on this bus, and nothing else (the bus's ARN, its id included). */
  grantPutEvents(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['events:PutEvents'],
      resourceArns: [this.eventBusArn],
    });
  }
}

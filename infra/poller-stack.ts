import { ArnFormat, CfnOutput, Duration, Fn, Stack, type StackProps } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { BankingEventsPoller, type EventRouteOptions, type PollerProgram } from 'banking-events-poller';
import type { Construct } from 'constructs';
import type { AppConfig, ProgramConfig } from './app-config.ts';
import { pascalCase } from './constructs/construct-names.ts';
import { settingProps } from './constructs/setting-props.ts';
import { ExampleSubscriber } from './example-subscriber.ts';

/** Programs of the props the outputs name one by one (a secret and a schedule each); beyond, the default alone. */
export const PROGRAM_OUTPUTS_MAX = 20;
export interface PollerStackProps extends StackProps {
  readonly config: AppConfig;
}

/** Composition only: the typed config in, one `BankingEventsPoller` and the outputs operators need. */
export class PollerStack extends Stack {
  public readonly poller: BankingEventsPoller;
  /** With `exampleSubscriber`: a subscriber of transactions built with the subscriber kit. */
  public readonly exampleSubscriber: ExampleSubscriber | undefined;

  constructor(scope: Construct, id: string, props: PollerStackProps) {
    super(scope, id, props);
    const { config } = props;

    this.poller = new BankingEventsPoller(this, 'Poller', {
      // Every setting the construct has a prop for, as the settings table maps it (stream
      // settings only in stream mode: the construct refuses them beside 'poll').
      ...settingProps(config),
      programs: config.programs.map((program) => this.program(program)),
      routes: Object.fromEntries(
        Object.entries(config.routes).map(([eventType, route]): [string, EventRouteOptions] => [
          eventType,
          {
            maxEventAge:
              route.maxEventAgeSeconds === undefined ? undefined : Duration.seconds(route.maxEventAgeSeconds),
            retryAttempts: route.retryAttempts,
            ordered: route.ordered,
          },
        ]),
      ),
      existingEventBus:
        config.existingEventBusArn === undefined
          ? undefined
          : events.EventBus.fromEventBusArn(this, 'ExistingEventBus', config.existingEventBusArn),
    });
    this.exampleSubscriber = config.exampleSubscriber
      ? new ExampleSubscriber(this, 'ExampleSubscriber', {
          poller: this.poller,
          eventSource: config.eventSource,
          logRetention: config.logRetentionDays as logs.RetentionDays,
        })
      : undefined;
    this.addOutputs(config);
  }

  private program(program: ProgramConfig): PollerProgram {
    if (program.secretKeyArn !== undefined) {
      // A secret under a customer-managed key: imported with the key, so its grant covers kms:Decrypt.
      const id = `Secret${pascalCase(program.name)}`;
      const encryptionKey = kms.Key.fromKeyArn(this, `${id}Key`, program.secretKeyArn);
      const secret =
        program.secretArn !== undefined
          ? secretsmanager.Secret.fromSecretAttributes(this, id, {
              secretCompleteArn: program.secretArn,
              encryptionKey,
            })
          : secretsmanager.Secret.fromSecretAttributes(this, id, {
              // Granted as "<partial ARN>-??????", as fromSecretNameV2 does.
              secretPartialArn: this.formatArn({
                service: 'secretsmanager',
                resource: 'secret',
                resourceName: program.secretName,
                arnFormat: ArnFormat.COLON_RESOURCE_NAME,
              }),
              encryptionKey,
            });
      return { name: program.name, existingSecret: secret };
    }
    if (program.secretArn !== undefined) {
      const id = `Secret${pascalCase(program.name)}`;
      return {
        name: program.name,
        existingSecret: secretsmanager.Secret.fromSecretCompleteArn(this, id, program.secretArn),
      };
    }
    if (program.secretName !== undefined) {
      const id = `Secret${pascalCase(program.name)}`;
      // Granted as "<name>-??????": IAM matches the random suffix Secrets Manager appends.
      const secret = secretsmanager.Secret.fromSecretNameV2(this, id, program.secretName);
      return { name: program.name, existingSecret: secret };
    }
    return { name: program.name };
  }

  private addOutputs(config: AppConfig): void {
    const { poller } = this;
    // What the operator CLI reads with --stack (functions/cli/deployment.ts).
    // Outputs name each program of the props only while they stay few: CloudFormation allows 200
    // outputs a stack. Beyond, the default program alone; the others are records of the programs
    // table, as those an operator adds (`programs list`; the CLI finds their secrets there).
    const named =
      config.programs.length <= PROGRAM_OUTPUTS_MAX ? config.programs : config.programs.slice(0, 1);
    const namedPrograms = new Set(named.map((program) => program.name));
    new CfnOutput(this, 'Programs', {
      value: named.map((program) => program.name).join(','),
      description:
        named.length === config.programs.length
          ? "Programs polled, the default one first (the CLI's --program)"
          : `The default program of ${config.programs.length} (the others: programs list)`,
    });
    new CfnOutput(this, 'EventSource', {
      value: config.eventSource,
      description: "Source of every published event (the CLI's --event-source)",
    });
    // The bus's name and ARN, and its kind's own outputs (the archive, or the retention and tail's role).
    poller.bus.addOutputs(this);
    new CfnOutput(this, 'CheckpointTableName', { value: poller.checkpointTable.tableName });
    new CfnOutput(this, 'ProgramsTableName', {
      value: poller.programsTable.tableName,
      description: "The program records (the CLI's programs commands)",
    });
    new CfnOutput(this, 'SecretsPrefix', {
      value: poller.secretsPrefix,
      description: 'Name path of the program secrets: secret set --program writes <prefix><program>',
    });
    new CfnOutput(this, 'WorkerCount', {
      value: String(poller.workerSchedules.length),
      description: 'Workers sharing the programs (each program is polled by one, by its name)',
    });
    new CfnOutput(this, 'WorkerScheduleNames', {
      value: Fn.join(
        ',',
        poller.workerSchedules.map((schedule) => schedule.scheduleName),
      ),
      description:
        "The workers' schedules (group default), worker i's at index i: the CLI's doctor checks each",
    });
    new CfnOutput(this, 'PollerFunctionName', {
      value: poller.pollerFunction.functionName,
      description: 'Runs the operator requests of event, replay, doctor and rewind (lambda:InvokeFunction)',
    });
    new CfnOutput(this, 'PollerFunctionArn', { value: poller.pollerFunction.functionArn });
    for (const [program, secret] of poller.secrets) {
      if (!namedPrograms.has(program)) continue;
      new CfnOutput(this, `SecretArn${pascalCase(program)}`, {
        value: secret.secretArn,
        description: `Credentials of program ${program}: set with aws secretsmanager put-secret-value`,
      });
    }
    for (const [program, schedule] of poller.schedules) {
      if (!namedPrograms.has(program)) continue;
      // The runbook reads it by exact key: disable the schedule before writing the checkpoint by hand.
      new CfnOutput(this, `ScheduleName${pascalCase(program)}`, {
        value: schedule.scheduleName,
        description: `EventBridge Scheduler schedule (group default) of the worker that polls program ${program}`,
      });
    }
    for (const route of poller.routes) {
      const suffix = route.isCatchAll
        ? 'Unrouted'
        : route.isQuarantine
          ? 'Quarantine'
          : pascalCase(route.name);
      if (route.queue !== undefined) {
        new CfnOutput(this, `QueueUrl${suffix}`, {
          value: route.queue.queueUrl,
          description: route.isCatchAll
            ? 'Events whose type has no route'
            : route.isQuarantine
              ? 'Events that failed validation (invalid_event)'
              : `${route.name} events`,
        });
      }
      new CfnOutput(this, `DeadLetterQueueUrl${suffix}`, { value: route.deadLetterQueue.queueUrl });
    }
    for (const route of poller.subscriberRouting?.routes ?? []) {
      const suffix = route.isCatchAll
        ? 'Unrouted'
        : route.isQuarantine
          ? 'Quarantine'
          : pascalCase(route.name);
      new CfnOutput(this, `SubscriberArn${suffix}`, {
        value: route.subscriber.attrSubscriberArn,
        description: `${route.ordered ? 'FIFO' : 'Unordered'} subscriber of ${route.name} events`,
      });
      new CfnOutput(this, `QueueArn${suffix}`, { value: route.queue.queueArn });
      new CfnOutput(this, `DeadLetterQueueArn${suffix}`, { value: route.deadLetterQueue.queueArn });
    }
    new CfnOutput(this, 'ScheduleDeadLetterQueueUrl', { value: poller.scheduleDeadLetterQueue.queueUrl });
    new CfnOutput(this, 'ClaimCheckBucketName', {
      value: poller.claimCheckBucket.bucketName,
      description: 'Bodies of events too large for the bus (pointer events name the key)',
    });
    new CfnOutput(this, 'SchemaRegistryName', { value: poller.schemas.registry.attrRegistryName });
    if (this.exampleSubscriber !== undefined) {
      new CfnOutput(this, 'ExampleSubscriberQueueUrl', {
        value: this.exampleSubscriber.queue.queueUrl,
        description: "The example subscriber's queue of transaction events",
      });
      new CfnOutput(this, 'ExampleSubscriberFunctionName', {
        value: this.exampleSubscriber.subscriberFunction.functionName,
      });
    }
    if (poller.alarmTopic !== undefined)
      new CfnOutput(this, 'AlarmTopicArn', { value: poller.alarmTopic.topicArn });
    new CfnOutput(this, 'DashboardUrl', { value: poller.dashboardUrl });
  }
}

/**
 * The stack outputs the operator CLI reads with `--stack` (`deployment.ts`), named once: the
 * repository's stack (`infra/poller-stack.ts`) and the construct's bus (`IPollerBus.addOutputs`)
 * write them under these keys. No dependency beyond the name rules, so the construct library can
 * import it.
 */
import { pascalCase } from '../core/name-rules.ts';
import { TAIL_DELIVERY_ROLE_OUTPUT } from './operator-resource-names.ts';

/** The stack outputs the CLI reads (infra/poller-stack.ts writes them). */
export const STACK_OUTPUTS = Object.freeze({
  programs: 'Programs',
  checkpointTable: 'CheckpointTableName',
  /** The program records: the programs commands work on it; without it, a stack of an older version. */
  programsTable: 'ProgramsTableName',
  /** The name path of the program secrets (`secret set --program` writes `<prefix><program>`). */
  secretsPrefix: 'SecretsPrefix',
  /** Workers sharing the programs: which one polls a program follows from its name. */
  workerCount: 'WorkerCount',
  /** The workers' schedules, comma-separated, worker `i`'s at index `i` (`doctor` checks each). */
  workerScheduleNames: 'WorkerScheduleNames',
  eventBusName: 'EventBusName',
  eventBusArn: 'EventBusArn',
  /** `custom` on a stack deployed with `eventBusKind: custom`, whose `EventBusArn` is then the Custom Event Bus's. */
  eventBusKind: 'EventBusKind',
  eventSource: 'EventSource',
  /** The Custom Event Bus's retention as deployed (`busRetentionDays`). */
  busRetentionDays: 'BusRetentionDays',
  /** `SubscriberArn<Route>`: one per subscriber the construct made on a Custom Event Bus. */
  subscriberArnPrefix: 'SubscriberArn',
  /** The role a Custom Event Bus delivers `tail`'s events through (the construct's `tailDeliveryRole`). */
  tailDeliveryRole: TAIL_DELIVERY_ROLE_OUTPUT,
  archiveName: 'ArchiveName',
  /** The poller function: operator requests (`event`, `replay`, `doctor`, `rewind`) run in it. */
  pollerFunctionName: 'PollerFunctionName',
  pollerFunctionArn: 'PollerFunctionArn',
  secretArn: (program: string) => `SecretArn${pascalCase(program)}`,
  scheduleName: (program: string) => `ScheduleName${pascalCase(program)}`,
});

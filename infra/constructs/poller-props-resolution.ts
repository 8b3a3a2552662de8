/**
 * The construct's props resolved in one place: `resolvePollerProps` turns what the caller gave into
 * the values every part of the construct builds from. The props that are settings take their
 * defaults and checks from the settings table (`setting-props.ts`); the rest, and the rules
 * between props, are here and in `poller-props-validation.ts`.
 */
import { Duration } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { SETTINGS } from '../../functions/settings/settings.ts';
import { type AlarmPlan, resolveAlarmPlan } from './alarm-plan.ts';
import type { EventRouteOptions } from './event-routing.ts';
import { overlappingTimeout } from './handover-timing.ts';
import type { BankingEventsPollerProps, PollerProgram } from './poller-props.ts';
import { validatePollerProps } from './poller-props-validation.ts';
import { type PropSettingValues, resolveSettingProps, settingDuration } from './setting-props.ts';

/** Every prop with its default applied: what the parts of the construct are built from. */
export interface ResolvedPollerProps {
  /** The props that are settings, in the settings' own units (`safetyMarginMs`), checked. */
  readonly settings: PropSettingValues;
  readonly programs: readonly PollerProgram[];
  readonly scheduleInterval: Duration;
  readonly safetyMargin: Duration;
  readonly handoverOverlap: Duration;
  readonly functionTimeout: Duration;
  readonly memorySize: number;
  readonly entry: string | undefined;
  readonly archiveRetention: Duration;
  readonly routes: Readonly<Record<string, EventRouteOptions>>;
  readonly unrouted: EventRouteOptions;
  readonly quarantine: EventRouteOptions;
  readonly claimCheckRetention: Duration;
  readonly lagThreshold: Duration;
  readonly stallAfter: Duration;
  readonly runbookUrl: string;
  readonly encryptionKey: kms.IKey | undefined;
  /** Where the function runs; `undefined` outside a VPC. */
  readonly network: PollerNetworkProps | undefined;
  readonly reservedConcurrency: number | undefined;
  readonly claimCheckAccessLogsBucket: s3.IBucket | undefined;
  /** Per-program or per-condition alarms, and so the function's `PROGRAM_METRICS`. */
  readonly alarmPlan: AlarmPlan;
}

/** The function's place in a VPC, with the defaults applied. */
export interface PollerNetworkProps {
  readonly vpc: ec2.IVpc;
  readonly vpcSubnets: ec2.SubnetSelection;
  /** `undefined`: Lambda creates one security group, all outbound allowed. */
  readonly securityGroups: ec2.ISecurityGroup[] | undefined;
  readonly vpcEndpoints: boolean;
}

/** Consecutive schedule intervals (one `LagSeconds` data point each) over the lag threshold. */
export const LAG_PERIODS = 3;
const MIN_STALL_AFTER = Duration.minutes(5);

/**
 * Applies every default, once, then validates the result together with the props that have no
 * default (existing resources, alarm wiring).
 *
 * @throws ConfigurationError naming the prop and the fix
 */
export function resolvePollerProps(props: BankingEventsPollerProps): ResolvedPollerProps {
  const settings = resolveSettingProps(props);
  const scheduleInterval = settingDuration('scheduleRateMinutes', settings.scheduleRateMinutes);
  const safetyMargin = settingDuration('safetyMarginMs', settings.safetyMarginMs);
  const handoverOverlap = props.handoverOverlap ?? Duration.seconds(5);
  const programs = props.programs ?? SETTINGS.programs.default;
  // The registry is always there (the CLI may add programs at any time), so its programs are
  // alarmed per condition whatever the props say: a stuck feed always raises an alarm.
  const alarmPlan = resolveAlarmPlan({
    programs: programs.length,
    registry: true,
    perProgramAlarms: settings.perProgramAlarms,
  });
  const resolved: ResolvedPollerProps = {
    settings,
    programs,
    scheduleInterval,
    safetyMargin,
    handoverOverlap,
    functionTimeout:
      props.functionTimeout ?? overlappingTimeout(scheduleInterval, handoverOverlap, safetyMargin),
    memorySize: props.memorySize ?? 256,
    entry: props.entry,
    archiveRetention: settingDuration('archiveRetentionDays', settings.archiveRetentionDays),
    routes: props.routes ?? SETTINGS.routes.default,
    unrouted: props.unrouted ?? {},
    quarantine: props.quarantine ?? {},
    claimCheckRetention: settingDuration('claimCheckRetentionDays', settings.claimCheckRetentionDays),
    lagThreshold: settingDuration('lagThresholdSeconds', settings.lagThresholdSeconds),
    // One place for the default, so apps embedding the construct get a window that fits their interval.
    stallAfter:
      props.stallAfter ??
      Duration.minutes(
        Math.max(MIN_STALL_AFTER.toMinutes(), (2 * scheduleInterval.toSeconds({ integral: false })) / 60),
      ),
    runbookUrl: props.runbookUrl ?? 'docs/runbook.md',
    encryptionKey: props.encryptionKey,
    network:
      props.vpc === undefined
        ? undefined
        : {
            vpc: props.vpc,
            vpcSubnets: props.vpcSubnets ?? { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
            securityGroups: props.securityGroups,
            vpcEndpoints: props.vpcEndpoints ?? false,
          },
    reservedConcurrency: props.reservedConcurrency,
    claimCheckAccessLogsBucket: props.claimCheckAccessLogsBucket,
    alarmPlan,
  };
  validatePollerProps(props, resolved);
  return resolved;
}

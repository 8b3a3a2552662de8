/**
 * Synth-time validation of the construct's props: conflicting combinations and values the handler
 * would refuse, reported with the prop and the fix, before anything is built.
 */
import { Duration } from 'aws-cdk-lib';
import { MIN_MAX_ENTRY_BYTES, PUT_EVENTS_MAX_BYTES } from '../../functions/core/claim-check.ts';
import { ConfigurationError } from '../../functions/core/errors.ts';
import { INVALID_EVENT_TYPE } from '../../functions/core/invalid-event.ts';
import {
  isProgramName,
  isQueryParameterName,
  PROGRAM_NAME_EXPECTED,
  QUERY_PARAMETER_EXPECTED,
} from '../../functions/core/name-rules.ts';
import { parseStartPosition } from '../../functions/core/start-position.ts';
import { pascalCase } from './construct-names.ts';
import { overlappingTimeout, pollingStopsAfterMs } from './handover-timing.ts';
import type { BankingEventsPollerProps, ResolvedPollerProps } from './poller-props.ts';

/** Lambda's ceiling; the schedule interval is bounded so the default timeout stays under it. */
const MAX_TIMEOUT = Duration.minutes(15);

/**
 * Refuses, at synth, props that conflict or are out of range, each with a message naming the prop
 * and what to do. `resolved` holds the props with their defaults applied.
 *
 * @throws ConfigurationError
 */
export function validatePollerProps(props: BankingEventsPollerProps, resolved: ResolvedPollerProps): void {
  const fail = (message: string, prop: string): never => {
    throw new ConfigurationError(`BankingEventsPoller: ${message}`, { prop });
  };
  if (props.existingEventBus !== undefined && props.eventBusName !== undefined) {
    fail(
      'eventBusName names a bus this construct creates; leave it out when passing existingEventBus',
      'eventBusName',
    );
  }
  if (
    props.alarmActions !== undefined &&
    (props.alarmTopic !== undefined || props.alarmEmail !== undefined)
  ) {
    fail(
      'alarmActions replaces the alarm topic; leave out alarmTopic and alarmEmail, or alarmActions',
      'alarmActions',
    );
  }
  if (props.alarmTopic !== undefined && props.alarmEmail !== undefined) {
    fail(
      'alarmEmail subscribes to the topic this construct creates; subscribe to your own alarmTopic yourself',
      'alarmEmail',
    );
  }
  if (resolved.programs.length === 0) fail('programs must name at least one program', 'programs');
  const ids = new Map<string, string>();
  for (const { name } of resolved.programs) {
    if (!isProgramName(name)) fail(`program name "${name}" must be ${PROGRAM_NAME_EXPECTED}`, 'programs');
    const other = ids.get(pascalCase(name).toLowerCase());
    if (other !== undefined) fail(`programs "${other}" and "${name}" are too alike; rename one`, 'programs');
    ids.set(pascalCase(name).toLowerCase(), name);
  }
  const intervalMinutes = resolved.scheduleInterval.toSeconds() / 60;
  if (!Number.isInteger(intervalMinutes) || intervalMinutes < 1 || intervalMinutes > 14) {
    fail('scheduleInterval must be whole minutes from 1 to 14', 'scheduleInterval');
  }
  const interval = resolved.scheduleInterval.toSeconds();
  const overlap = resolved.handoverOverlap.toSeconds({ integral: false });
  if (overlap <= 0 || overlap >= interval / 2) {
    fail('handoverOverlap must be more than 0 and less than half the scheduleInterval', 'handoverOverlap');
  }
  const timeout = resolved.functionTimeout.toSeconds({ integral: false });
  const margin = resolved.safetyMargin.toSeconds({ integral: false });
  if (timeout > MAX_TIMEOUT.toSeconds())
    fail(`functionTimeout is ${timeout} s; Lambda allows at most 900 s`, 'functionTimeout');
  if (timeout <= margin) {
    fail(
      'functionTimeout must be longer than safetyMargin, the time kept back at its end for the last publish and commit',
      'functionTimeout',
    );
  }
  const stopsPolling = pollingStopsAfterMs(resolved.functionTimeout, resolved.safetyMargin) / 1000;
  const shortest = overlappingTimeout(
    resolved.scheduleInterval,
    resolved.handoverOverlap,
    resolved.safetyMargin,
  ).toSeconds();
  if (stopsPolling <= interval) {
    fail(
      `functionTimeout ${timeout} s with safetyMargin ${margin} s stops polling ${stopsPolling} s after it starts ` +
        `(the handler keeps back the margin, but at most a quarter of the timeout), no later than the next tick at ` +
        `${interval} s: runs would not overlap, and the feed would go unpolled between them. Use a functionTimeout ` +
        `of at least ${shortest} s (leave it out to get that) so each run hands over to the next.`,
      'functionTimeout',
    );
  }
  if (stopsPolling >= interval * 1.5) {
    fail(
      `functionTimeout ${timeout} s keeps polling until ${stopsPolling} s, more than half an interval after the next ` +
        `tick at ${interval} s: the next run would give up waiting for the lease. Use ${shortest} s (leave it out to get that).`,
      'functionTimeout',
    );
  }
  if (!Number.isInteger(resolved.pollLimit) || resolved.pollLimit < 1 || resolved.pollLimit > 1000) {
    fail('pollLimit must be an integer from 1 to 1000 (the handler refuses more)', 'pollLimit');
  }
  if (
    !Number.isInteger(resolved.publishConcurrency) ||
    resolved.publishConcurrency < 1 ||
    resolved.publishConcurrency > 50
  ) {
    fail(
      'publishConcurrency must be an integer from 1 to 50 (the handler refuses more)',
      'publishConcurrency',
    );
  }
  const rate = resolved.maxPutEventsPerSecond;
  if (rate !== undefined && (!Number.isInteger(rate) || rate < 1 || rate > 10_000)) {
    fail(
      'maxPutEventsPerSecond must be an integer from 1 to 10000, or left out for no cap',
      'maxPutEventsPerSecond',
    );
  }
  for (const [prop, name] of [
    ['pollCursorParam', resolved.pollCursorParam],
    ['pollLimitParam', resolved.pollLimitParam],
    ['streamCursorParam', resolved.streamCursorParam],
  ] as const) {
    if (!isQueryParameterName(name)) {
      fail(`${prop} must be ${QUERY_PARAMETER_EXPECTED}; got ${JSON.stringify(name)}`, prop);
    }
  }
  if (resolved.pollLimitParam === resolved.pollCursorParam) {
    fail(
      `pollLimitParam "${resolved.pollLimitParam}" is also the cursor parameter (pollCursorParam); the two must differ`,
      'pollLimitParam',
    );
  }
  try {
    parseStartPosition(resolved.startPosition, 'startPosition');
  } catch {
    fail(
      `startPosition must be 'beginning', 'latest' or a sequence number of 1 or more; got ${JSON.stringify(resolved.startPosition)}`,
      'startPosition',
    );
  }
  if (resolved.feedMode !== 'poll' && resolved.feedMode !== 'stream') {
    fail(`feedMode must be 'poll' or 'stream'; got ${JSON.stringify(resolved.feedMode)}`, 'feedMode');
  }
  if (resolved.streamRecovery !== 'page' && resolved.streamRecovery !== 'lookup') {
    fail(
      `streamRecovery must be 'page' or 'lookup'; got ${JSON.stringify(resolved.streamRecovery)}`,
      'streamRecovery',
    );
  }
  // Settings of a mode that is not on would be ignored without a word: say so at synth instead.
  if (resolved.feedMode === 'poll') {
    for (const prop of ['streamRecovery', 'streamLinger', 'streamCursorParam'] as const) {
      if (props[prop] !== undefined) {
        fail(
          `${prop} applies to feedMode 'stream' only; feedMode is 'poll'. Set feedMode: 'stream' or remove it`,
          prop,
        );
      }
    }
  }
  const lingerMs = resolved.streamLinger.toMilliseconds({ integral: false });
  if (!Number.isInteger(lingerMs) || lingerMs < 0 || lingerMs > 1000) {
    fail(`streamLinger must be whole milliseconds from 0 to 1 second; got ${lingerMs} ms`, 'streamLinger');
  }
  const lookups = resolved.gapRepairMaxLookups;
  if (!Number.isInteger(lookups) || lookups < 0 || lookups > 10_000) {
    fail(
      `gapRepair.maxLookups must be an integer from 0 (off) to 10000; got ${lookups}`,
      'gapRepair.maxLookups',
    );
  }
  const graceSeconds = resolved.gapRepairGracePeriod.toSeconds({ integral: false });
  if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > 86_400) {
    fail(
      `gapRepair.gracePeriod must be whole seconds, at most 24 hours (the feed's retention); got ${graceSeconds} s`,
      'gapRepair.gracePeriod',
    );
  }
  const entryBytes = resolved.maxEventEntryBytes;
  if (
    !Number.isInteger(entryBytes) ||
    entryBytes < MIN_MAX_ENTRY_BYTES ||
    entryBytes > PUT_EVENTS_MAX_BYTES
  ) {
    fail(
      `maxEventEntryBytes must be an integer from ${MIN_MAX_ENTRY_BYTES} to ${PUT_EVENTS_MAX_BYTES} (the bus's cap); got ${entryBytes}`,
      'maxEventEntryBytes',
    );
  }
  const retentionDays = resolved.claimCheckRetention.toHours() / 24;
  if (!Number.isInteger(retentionDays) || retentionDays < 1) {
    fail('claimCheckRetention must be whole days, at least 1', 'claimCheckRetention');
  }
  if (Object.hasOwn(resolved.routes, INVALID_EVENT_TYPE)) {
    fail(
      `routes must not name "${INVALID_EVENT_TYPE}": events that failed validation go to the quarantine route; configure it with the quarantine prop`,
      'routes',
    );
  }
  if (resolved.lagThreshold.toSeconds() < 60) fail('lagThreshold must be at least 1 minute', 'lagThreshold');
  // Each completed run sends one CycleDurationMs, in the minute it ends. Ends jitter around one
  // interval apart, so `interval` consecutive minutes can hold none: the window needs a minute
  // more (see "Periods" in poller-alarms.ts).
  const stallMinutes = resolved.stallAfter.toSeconds() / 60;
  if (!Number.isInteger(stallMinutes) || stallMinutes < intervalMinutes + 1) {
    fail(
      `stallAfter must be whole minutes and at least scheduleInterval + 1 minute: set it to ${intervalMinutes + 1} ` +
        'minutes or more, or leave it out for the default, max(5 minutes, 2 × scheduleInterval). A window of ' +
        "exactly one interval misses the run's one data point whenever the run ends a little later than the " +
        'one before across a minute boundary, and raises the stall alarm while the poller is fine.',
      'stallAfter',
    );
  }
}

/**
 * How the schedule, the function timeout and the lease wait fit together so that the feed is
 * polled without a break across scheduled runs. Pure arithmetic on the handler's own deadline
 * rule (`computeDeadline`), kept apart from the construct so the numbers can be read and tested
 * on their own.
 *
 * With interval I, overlap O and safety margin M (defaults 60 s, 5 s, 10 s):
 * ```
 * run A  |--- polls until I + O ---|-- publish, commit, release (≤ M) --|  timeout T = I + O + M
 * run B              (tick at I) waits for the lease ...|--- polls until 2 I + O ---|
 * ```
 * B is already waiting when A stops polling, and takes the lease within one check of A's
 * release. B waits at most until A's lease would expire (A crashed): T + skew − I.
 */
import { Duration } from 'aws-cdk-lib';
import { CYCLE_DEFAULTS } from '../../functions/core/cycle/cycle-options.ts';
import { computeDeadline } from '../../functions/core/cycle-budget.ts';

/** The handler adds this to a lease's expiry for clock skew (`leaseSkewMs`, capped at 5 s). */
export const LEASE_SKEW = Duration.millis(CYCLE_DEFAULTS.leaseSkewMs);

/** When a run with `timeout` stops polling, in ms after its start (the handler's own rule). */
export function pollingStopsAfterMs(timeout: Duration, safetyMargin: Duration): number {
  return computeDeadline(
    0,
    timeout.toMilliseconds({ integral: false }),
    safetyMargin.toMilliseconds({ integral: false }),
  );
}

/**
 * The shortest whole-second timeout whose run polls until `overlap` after the next tick. The
 * handler keeps back the margin but at most a quarter of the timeout, so this is I + O + M while
 * M ≤ T / 4, and 4 (I + O) / 3 otherwise. 60 s, 5 s, 10 s: 75 s.
 */
export function overlappingTimeout(interval: Duration, overlap: Duration, safetyMargin: Duration): Duration {
  const pollUntilMs = interval.toMilliseconds() + overlap.toMilliseconds({ integral: false });
  let seconds = Math.ceil(pollUntilMs / 1000);
  while (pollingStopsAfterMs(Duration.seconds(seconds), safetyMargin) < pollUntilMs) seconds += 1;
  return Duration.seconds(seconds);
}

/**
 * How long a run waits for its predecessor's lease: until that lease would expire if the
 * predecessor had crashed (its start + timeout + skew), counted from the next tick. A live
 * predecessor hands over well before.
 */
export function leaseWait(interval: Duration, timeout: Duration): Duration {
  return Duration.millis(
    Math.max(0, timeout.toMilliseconds() + LEASE_SKEW.toMilliseconds() - interval.toMilliseconds()),
  );
}

/**
 * What the operator commands do on the deployment's bus, one strategy per kind: the classic bus
 * (`classic-operator-bus.ts`: rules, an archive) and the Custom Event Bus (`custom-operator-bus.ts`:
 * subscribers, its own retention). `operator-bus-kinds.ts` chooses one, once per command, from
 * `--event-bus` or the stack's outputs; the commands ask it what differs and branch on nothing.
 * A new question is a method here and in each kind.
 */
import type { BusEntryRules } from '../core/bus-entry-rules.ts';
import type { EventPublisher } from '../core/ports.ts';
import type { CommandContext } from './command-context.ts';
import type { CheckResult } from './doctor-report.ts';
import type { TimeWindow } from './time-window.ts';

/** What feeds tail's temporary queue from the bus: a rule (classic) or a subscriber (Custom Event Bus). */
export interface QueueFeed {
  /** What it is called in messages: `rule` or `subscriber`. */
  readonly kind: string;
  /** Whether `attach` created anything (to say what was removed). */
  readonly attached: boolean;
  /** Starts delivering events matching `pattern` to the queue. */
  attach(
    queue: { readonly url: string; readonly arn: string },
    pattern: Record<string, unknown>,
  ): Promise<void>;
  /** Stops it, each part through `attempt`, which notes what could not be removed. */
  detach(attempt: (what: string, action: () => Promise<unknown>) => Promise<void>): Promise<void>;
}

/** `tail`'s flags that concern the bus. */
export interface TailOptions {
  /** The temporary resources' name (`bep-tail-…`). */
  readonly name: string;
  /** `--delivery-role`: the role a Custom Event Bus delivers through. */
  readonly deliveryRole?: string;
}

/** `archive-replay`'s flags. */
export interface ArchiveReplayOptions {
  readonly window: TimeWindow;
  readonly archive?: string;
  readonly rule?: readonly string[];
  readonly subscriber?: readonly string[];
  readonly name?: string;
  readonly pollSeconds: number;
}

/** What `status` shows of the bus: a table of its own, and the `bus` member of `--json`. */
export interface BusStatus {
  readonly rows: readonly (readonly [string, string])[];
  readonly json: Readonly<Record<string, unknown>>;
}

export interface OperatorBus {
  /** What the bus refuses in an entry: a command reading the feed itself quarantines by it, as the function does. */
  readonly entryRules: BusEntryRules;
  /**
   * `tail`: checks the bus can take a temporary listener and names what feeds tail's queue from
   * it. Refuses the other kind's flags, creating nothing.
   */
  tailFeed(context: CommandContext, options: TailOptions): Promise<{ feed: QueueFeed; busShown: string }>;
  /** `doctor`: the bus's checks; a problem is a failed or skipped check, never an exception. */
  doctorChecks(context: CommandContext, options: { readonly writeProbes: boolean }): Promise<CheckResult[]>;
  /** `archive-replay`: replays the window to the bus's targets and reports it. */
  archiveReplay(context: CommandContext, options: ArchiveReplayOptions): Promise<void>;
  /** `status`: what it shows of the bus; `undefined` when the kind has nothing to add. */
  status(context: CommandContext): Promise<BusStatus | undefined>;
  /** `replay --local`: the bus as this machine publishes to it, with the poller's `source`. */
  localPublisher(context: CommandContext, source: string): EventPublisher;
}

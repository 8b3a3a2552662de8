/**
 * What a setting's declaration holds: its kind of value, its default, a one-line doc, where it
 * acts, and the places it exists (the handler's environment variable, the app's context key, the
 * construct's prop, the CLI's flag). The table of declarations is `settings.ts`; everything else
 * is derived.
 */
import type { ValueKind } from './value-kinds.ts';

/** The handler's environment variable. */
export interface EnvPlace {
  readonly name: string;
  /** The handler refuses to start without it. */
  readonly required?: true;
  /**
   * How a deployed function gets the variable when not from a prop of the same setting:
   * `resource` (a name or ARN of something the construct made or was given), `computed` (from
   * other props), `fixed` (always the default). Without this and without a prop, the construct
   * leaves the variable out and the handler's default applies.
   */
  readonly deployed?: 'resource' | 'computed' | 'fixed';
  /** Read by Powertools and the handler's module scope, not by `loadPollerConfig`. */
  readonly readBy?: 'powertools';
}

/** The app's CDK context key (cdk.json, `-c key=value`). */
export interface ContextPlace<T = unknown> {
  readonly key: string;
  /** The app's own default, where it chooses one the construct does not (a bus name). */
  readonly default?: T;
  /** The value that means "none" here, since cdk.json spells out every key: `""` or `0`. */
  readonly none?: string | number;
  /** How the context spells the value when the setting's kind does not: `rate(N minutes)`. */
  readonly kind?: ValueKind<T>;
}

/** The construct's prop. */
export interface PropPlace {
  /** The prop's name; a dotted path for one inside an options object (`gapRepair.maxLookups`). */
  readonly name: string;
  /** The prop is a CDK `Duration`, counted in the kind's time unit. */
  readonly duration?: true;
}

/** The operator CLI's flag (`run`, and the commands that read the feed). */
export interface CliPlace {
  /** As commander spells it: `--limit <events>`. */
  readonly flag: string;
}

/** A module from the repository root and one of its exports: `functions/core/gap-repair.ts#GapRepair`. */
export type ActsIn = `${string}.ts#${string}`;

/** Everything a declaration holds but its kind. */
export interface SettingDetails {
  /** One line: what the setting does. The docs tables and the CLI's help show it. */
  readonly doc: string;
  /** Absent: no default (`whenAbsent` says what having none means). */
  readonly default?: unknown;
  readonly whenAbsent?: string;
  /**
   * Where the value takes effect: `path#Export`, a module from the repository root and the
   * export of it that applies the value (the class or function whose behaviour it changes), so
   * a reader goes from the name to the code in one hop. Empty only while nothing reads it yet.
   */
  readonly actsIn: readonly ActsIn[];
  /** Where the docs say more: a file from the repository root and an anchor. */
  readonly see?: { readonly title: string; readonly path: string };
  /** Applies in `feedMode` 'stream' only: not deployed otherwise, and refused by the construct. */
  readonly streamOnly?: true;
  /** Applies with `eventBusKind` 'custom' only: not deployed otherwise, and refused by the construct. */
  readonly customBusOnly?: true;
  /**
   * May differ per program: a program record's `settings` may hold it, over the deployment's value
   * (`functions/settings/program-settings.ts`). Only settings that act within one program's cycle
   * (how its feed is read, where it starts, how fast it publishes); never a resource, a bus or the
   * function's memory.
   */
  readonly perProgram?: true;
  readonly env?: EnvPlace;
  readonly context?: ContextPlace;
  readonly prop?: PropPlace;
  readonly cli?: CliPlace;
}

export interface Setting<T = unknown> extends SettingDetails {
  readonly kind: ValueKind<T>;
  readonly default?: T;
  readonly context?: ContextPlace<T>;
}

/**
 * One declaration: the kind, then the rest. The default and the context's own values are
 * type-checked against the kind, and the places keep their literal names for the types derived
 * from the table.
 *
 * @example
 * const pollLimit = setting(integer({ min: 1, max: 1000 }), {
 *   doc: 'Events asked for per poll request',
 *   default: 100,
 *   actsIn: ['functions/adapters/banking-http/banking-event-feed.ts#BankingEventFeed'],
 *   env: { name: 'POLL_LIMIT' },
 *   prop: { name: 'pollLimit' },
 * });
 */
export function setting<T, const D extends SettingDetails>(
  kind: ValueKind<T>,
  details: D & { readonly default?: T; readonly context?: ContextPlace<T> },
): D & { readonly kind: ValueKind<T> } {
  return Object.freeze({ ...details, kind });
}

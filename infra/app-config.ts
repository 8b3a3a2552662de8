/**
 * The app's configuration: CDK context (cdk.json, then `-c key=value`), read against the settings
 * table (`functions/settings/settings.ts`: each key, its default and its form) and frozen. The two
 * structured keys, `programs` and `routes`, are read here by hand.
 */
import { ConfigurationError } from '../functions/core/errors.ts';
import { isProgramName, PROGRAM_NAME_EXPECTED } from '../functions/core/name-rules.ts';
import type { Setting } from '../functions/settings/setting.ts';
import { SETTING_RULES } from '../functions/settings/setting-rules.ts';
import {
  type ResolvedValue,
  SETTINGS,
  type SettingName,
  settingEntries,
  type ValueSettingsAt,
} from '../functions/settings/settings.ts';
import { isStructured } from '../functions/settings/value-kinds.ts';

/** A program as configured: a name and, optionally, the secret it already has. */
export interface ProgramConfig {
  readonly name: string;
  /** Full ARN of an existing secret (with its 6-character suffix). */
  readonly secretArn?: string;
  /** Name of an existing secret. */
  readonly secretName?: string;
  /** ARN of the customer-managed KMS key the existing secret is encrypted with. */
  readonly secretKeyArn?: string;
}

/** Retry policy of one route's targets, and its order; absent fields take the construct's defaults. */
export interface RouteConfig {
  readonly maxEventAgeSeconds?: number;
  readonly retryAttempts?: number;
  /** Custom bus only: a FIFO subscriber onto a FIFO queue, in order within each event group. */
  readonly ordered?: boolean;
}

/**
 * The app's configuration, validated and frozen: every context setting keyed by its name in the
 * settings table (which documents each), `undefined` where the context says "none" (`""`, `0`).
 */
export interface AppConfig extends Readonly<{ [N in ValueSettingsAt<'context'>]: ResolvedValue<N> }> {
  readonly programs: readonly ProgramConfig[];
  readonly routes: Readonly<Record<string, RouteConfig>>;
}

/** The context's default of a setting, as cdk.json spells it. */
function contextDefault(setting: Setting): unknown {
  const place = setting.context!;
  if (setting.default === undefined) return place.default ?? place.none;
  return place.kind === undefined ? setting.default : place.kind.format(setting.default);
}

const CONTEXT_SETTINGS = settingEntries().filter(([, setting]) => setting.context !== undefined);

/** Defaults, as cdk.json spells them. The cdk.json context must agree (a test checks). */
export const DEFAULT_CONTEXT: Readonly<Record<string, unknown>> = Object.freeze(
  Object.fromEntries(CONTEXT_SETTINGS.map(([, setting]) => [setting.context!.key, contextDefault(setting)])),
);

const CONTEXT_KEYS = CONTEXT_SETTINGS.map(([, setting]) => setting.context!.key);

/**
 * Context keys the CDK CLI and libraries set themselves. Any other key without `:` or `@` is
 * taken for a misspelt setting of ours, which would otherwise be ignored without a word.
 */
const FOREIGN_KEYS = new Set(['cli-telemetry']);

/**
 * Reads and validates the app's context. `context` is what `app.node.getAllContext()` returns.
 * Every problem is reported at once, each naming its key and the expected form.
 *
 * @throws ConfigurationError listing every invalid key
 */
export function parseAppConfig(context: Readonly<Record<string, unknown>>): AppConfig {
  const reader = new ContextReader(context);
  for (const key of Object.keys(context)) {
    if (key.includes(':') || key.startsWith('@') || FOREIGN_KEYS.has(key)) continue;
    if (!CONTEXT_KEYS.includes(key)) {
      reader.fail(key, `is not a setting of this app; the settings are ${CONTEXT_KEYS.join(', ')}`);
    }
  }
  const values: Partial<Record<SettingName, unknown>> = {};
  for (const [name, setting] of CONTEXT_SETTINGS) {
    if (!isStructured(setting.kind)) values[name] = reader.setting(setting);
  }
  const keyOf = (name: SettingName): string => (SETTINGS[name] as Setting).context?.key ?? name;
  for (const rule of SETTING_RULES) {
    const problem = rule.check(values, keyOf);
    if (problem !== undefined) reader.fail(keyOf(rule.setting), problem);
  }
  if (values.existingEventBusArn !== undefined && values.eventBusName !== undefined) {
    reader.fail('eventBusName', 'names a bus to create; set it to "" when existingEventBusArn is set');
  }
  const programs = reader.programs();
  const routes = reader.routes();
  reader.throwIfInvalid();
  return deepFreeze({ ...values, programs, routes } as AppConfig);
}

const SECRET_ARN =
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
const KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/;
const EVENT_TYPE = /^[a-z0-9][a-z0-9._-]{0,127}$/;

/** Collects problems instead of stopping at the first, so one synth shows every key to fix. */
class ContextReader {
  private readonly problems: { key: string; message: string }[] = [];

  constructor(private readonly context: Readonly<Record<string, unknown>>) {}

  fail(key: string, message: string): void {
    this.problems.push({ key, message });
  }

  throwIfInvalid(): void {
    if (this.problems.length === 0) return;
    const lines = this.problems.map(({ key, message }) => `  - context "${key}" ${message}`);
    throw new ConfigurationError(
      `Invalid CDK context (fix it in cdk.json or with -c key=value):\n${lines.join('\n')}`,
      { keys: this.problems.map(({ key }) => key).join(',') },
    );
  }

  private raw(key: string): unknown {
    return this.context[key] ?? DEFAULT_CONTEXT[key];
  }

  /** A setting's value, or `undefined` for the context's "none" (a problem is recorded when invalid). */
  setting(setting: Setting): unknown {
    const { key, none, kind = setting.kind } = setting.context!;
    const value = this.raw(key);
    if (none !== undefined && (value === none || value === String(none))) return undefined;
    const read = kind.read(value);
    if (read === undefined) {
      const orNone =
        none === undefined ? '' : `, or ${JSON.stringify(none)} for ${setting.whenAbsent ?? 'none'}`;
      this.fail(key, `must be ${kind.expected}${orNone}, got ${show(value)}`);
    }
    return read;
  }

  /** Objects and arrays from cdk.json, or the same as a JSON string from `-c`. */
  private json(key: string): unknown {
    const value = this.raw(key);
    if (typeof value !== 'string') return value;
    try {
      return JSON.parse(value) as unknown;
    } catch {
      this.fail(key, `is not valid JSON: ${show(value)}`);
      return undefined;
    }
  }

  programs(): ProgramConfig[] {
    const value = this.json(SETTINGS.programs.context.key);
    if (value === undefined) return [];
    if (!Array.isArray(value) || value.length === 0) {
      this.fail(
        'programs',
        `must be a non-empty array of {"name", "secretArn"?, "secretName"?}, got ${show(value)}`,
      );
      return [];
    }
    const seen = new Set<string>();
    const programs: ProgramConfig[] = [];
    value.forEach((entry: unknown, index) => {
      const key = `programs[${index}]`;
      if (!isRecord(entry)) {
        this.fail(
          key,
          `must be an object {"name", "secretArn"?, "secretName"?, "secretKeyArn"?}, got ${show(entry)}`,
        );
        return;
      }
      for (const field of Object.keys(entry)) {
        if (!['name', 'secretArn', 'secretName', 'secretKeyArn'].includes(field)) {
          this.fail(
            `${key}.${field}`,
            'is not a program setting; use name, secretArn, secretName or secretKeyArn',
          );
        }
      }
      const { name, secretArn, secretName, secretKeyArn } = entry;
      if (!isProgramName(name)) {
        this.fail(`${key}.name`, `must be ${PROGRAM_NAME_EXPECTED}, got ${show(name)}`);
        return;
      }
      if (seen.has(name.toLowerCase())) this.fail(`${key}.name`, `repeats program "${name}"`);
      seen.add(name.toLowerCase());
      if (secretArn !== undefined && secretName !== undefined) {
        this.fail(key, 'sets both secretArn and secretName; keep one');
      }
      if (secretArn !== undefined && (typeof secretArn !== 'string' || !SECRET_ARN.test(secretArn))) {
        this.fail(
          `${key}.secretArn`,
          `must be a complete Secrets Manager ARN (ending in the 6-character suffix), got ${show(secretArn)}`,
        );
      }
      if (secretName !== undefined && (typeof secretName !== 'string' || !SECRET_NAME.test(secretName))) {
        this.fail(`${key}.secretName`, `must be a Secrets Manager secret name, got ${show(secretName)}`);
      }
      if (secretKeyArn !== undefined) {
        if (secretArn === undefined && secretName === undefined) {
          this.fail(
            `${key}.secretKeyArn`,
            'is the key of an existing secret; set secretArn or secretName too',
          );
        } else if (typeof secretKeyArn !== 'string' || !KEY_ARN.test(secretKeyArn)) {
          this.fail(
            `${key}.secretKeyArn`,
            `must be a KMS key ARN (arn:aws:kms:…:key/…), got ${show(secretKeyArn)}`,
          );
        }
      }
      programs.push({
        name,
        ...(typeof secretArn === 'string' ? { secretArn } : {}),
        ...(typeof secretName === 'string' ? { secretName } : {}),
        ...(typeof secretKeyArn === 'string' ? { secretKeyArn } : {}),
      });
    });
    return programs;
  }

  routes(): Record<string, RouteConfig> {
    const value = this.json(SETTINGS.routes.context.key);
    if (value === undefined) return {};
    if (!isRecord(value)) {
      this.fail(
        'routes',
        `must be an object mapping event type → {"maxEventAgeSeconds"?, "retryAttempts"?, "ordered"?}, got ${show(value)}`,
      );
      return {};
    }
    const routes: Record<string, RouteConfig> = {};
    for (const [eventType, options] of Object.entries(value)) {
      const key = `routes.${eventType}`;
      if (!EVENT_TYPE.test(eventType)) {
        this.fail(key, 'is not an event type: use the lower-case detail-type, e.g. "account_status"');
        continue;
      }
      if (!isRecord(options)) {
        this.fail(
          key,
          `must be an object {"maxEventAgeSeconds"?, "retryAttempts"?, "ordered"?}, got ${show(options)}`,
        );
        continue;
      }
      const route: { maxEventAgeSeconds?: number; retryAttempts?: number; ordered?: boolean } = {};
      for (const [field, fieldValue] of Object.entries(options)) {
        if (field === 'maxEventAgeSeconds') {
          if (!isIntegerIn(fieldValue, 60, 86_400)) {
            this.fail(`${key}.${field}`, `must be an integer from 60 to 86400, got ${show(fieldValue)}`);
          } else route.maxEventAgeSeconds = fieldValue;
        } else if (field === 'retryAttempts') {
          if (!isIntegerIn(fieldValue, 0, 185)) {
            this.fail(`${key}.${field}`, `must be an integer from 0 to 185, got ${show(fieldValue)}`);
          } else route.retryAttempts = fieldValue;
        } else if (field === 'ordered') {
          if (typeof fieldValue !== 'boolean') {
            this.fail(`${key}.${field}`, `must be true or false, got ${show(fieldValue)}`);
          } else route.ordered = fieldValue;
        } else {
          this.fail(
            `${key}.${field}`,
            'is not a route setting; use maxEventAgeSeconds, retryAttempts or ordered',
          );
        }
      }
      routes[eventType] = route;
    }
    return routes;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

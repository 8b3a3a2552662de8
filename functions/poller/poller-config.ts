/**
 * The handler's configuration: the environment, parsed once at cold start by the settings table
 * (`functions/settings/`), plus the programs' secrets bound together, frozen.
 */
import { ConfigurationError } from '../core/errors.ts';
import { isJsonObject } from '../core/json-object.ts';
import { parseProgramName } from '../core/name-rules.ts';
import { type EnvironmentValues, readEnvironment } from '../settings/environment.ts';
import { HANDLER_BUS_KINDS } from './bus-kinds.ts';
import type { ScheduledInvocation } from './invocation-input.ts';

/**
 * The poller's configuration: every setting of the handler, keyed by its name in the settings
 * table (`functions/settings/settings.ts` documents each, with its variable and default), in the
 * setting's own unit (`safetyMarginMs`, `gapRepairGraceSeconds`).
 */
export interface PollerConfig extends Omit<EnvironmentValues, 'programSecrets'> {
  /**
   * Program name → the secret holding its credentials: `DEFAULT_PROGRAM` → `SECRET_ID`, plus
   * every entry of `PROGRAM_SECRETS`. A program's checkpoint row is only ever fed by its own secret.
   */
  readonly programSecrets: ReadonlyMap<string, string>;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * `PROGRAM_SECRETS`: a JSON object `{"<program>": "<secret id or ARN>"}` naming the programs other
 * than the default one. Naming the default program again is allowed only with `SECRET_ID`.
 */
function programSecrets(raw: unknown, defaultProgram: string, defaultSecretId: string): Map<string, string> {
  const secrets = new Map([[defaultProgram, defaultSecretId]]);
  if (typeof raw !== 'string') return secrets;
  const invalid = (problem: string): never => {
    throw new ConfigurationError(
      `Environment variable PROGRAM_SECRETS ${problem}; expected a JSON object {"<program>": "<secret id or ARN>"}`,
      { variable: 'PROGRAM_SECRETS' },
    );
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return invalid('is not valid JSON');
  }
  if (!isJsonObject(parsed)) return invalid('is not a JSON object');
  for (const [program, secretId] of Object.entries(parsed)) {
    parseProgramName(program, `Environment variable PROGRAM_SECRETS: program "${program}"`);
    if (typeof secretId !== 'string' || secretId.trim() === '') {
      invalid(`names program "${program}" without a secret id`);
    }
    const id = (secretId as string).trim();
    if (program === defaultProgram && id !== defaultSecretId) {
      invalid(
        `binds the default program "${program}" to another secret than SECRET_ID; the default program's secret is SECRET_ID`,
      );
    }
    secrets.set(program, id);
  }
  return secrets;
}

/**
 * Parses the environment. Every error names the variable and the expected form.
 *
 * @example
 * const config = loadPollerConfig(process.env);
 */
export function loadPollerConfig(env: Env): PollerConfig {
  const values = readEnvironment(env);
  return Object.freeze({
    ...values,
    // As the bus's kind addresses it (the Custom Event Bus's API by its ARN only).
    eventBus: HANDLER_BUS_KINDS[values.eventBusKind].address(values.eventBus),
    programSecrets: programSecrets(values.programSecrets, values.defaultProgram, values.secretId),
  });
}

/** What one invocation works on, from the schedule payload `{"program": …}`. */
export interface InvocationTarget {
  readonly program: string;
  /** The program's own secret, from the configuration: never chosen by the event. */
  readonly secretId: string;
}

/**
 * Looks up the secret of the program a scheduled invocation names (`parseScheduledInvocation`
 * has checked its form). An unknown program, or a `secretId` in the event that is not the
 * program's own, is refused here before anything is polled or written: another program's
 * credentials would feed this program's checkpoint with numbers from another sequence.
 */
export function resolveInvocationTarget(input: ScheduledInvocation, config: PollerConfig): InvocationTarget {
  const program = input.program ?? config.defaultProgram;
  const secretId = config.programSecrets.get(program);
  if (secretId === undefined) {
    throw new ConfigurationError(
      `event.program "${program}" is not one of this function's programs (${[...config.programSecrets.keys()].join(', ')}); ` +
        "add it to the construct's programs (PROGRAM_SECRETS) and deploy",
      { where: 'event.program', program },
    );
  }
  if (input.secretId !== undefined && input.secretId !== secretId) {
    throw new ConfigurationError(
      `event.secretId is not the secret of program "${program}"; the function reads each program's credentials from ` +
        'its own secret (SECRET_ID or PROGRAM_SECRETS): leave secretId out of the event',
      { where: 'event.secretId', program },
    );
  }
  return { program, secretId };
}

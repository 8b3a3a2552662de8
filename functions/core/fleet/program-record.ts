/**
 * A program as data: the record a deployment's registry holds for each banking program it polls
 * (its name, the secret of its credentials, whether it is polled, who manages it, and the settings
 * that differ from the deployment's), rather than stack resources. Workers read the records at
 * every run, so an edit takes effect at the next run with no deploy.
 *
 * A record comes from storage an operator can edit by hand, so `parseProgramRecord` trusts none
 * of it: every field is checked and bounded, and the error names the record and the field. The
 * settings' values are checked later, by the settings table's own kinds, where the worker
 * resolves them over the deployment's (`functions/settings/program-settings.ts`): the core does
 * not know the table.
 */
import { ProgramRecordInvalidError } from '../errors.ts';
import { isJsonObject } from '../json-object.ts';
import { isProgramName, PROGRAM_NAME_EXPECTED } from '../name-rules.ts';

/** `active`: polled at every run; `paused`: kept (checkpoint, secret) but not polled. */
export const PROGRAM_STATES = ['active', 'paused'] as const;
export type ProgramState = (typeof PROGRAM_STATES)[number];

/**
 * `stack`: seeded from the construct's `programs` prop, reconciled at each deploy (an operator may
 * still pause it); `operator`: added with `banking-events-poller programs add`, never touched by a deploy.
 */
export const PROGRAM_OWNERS = ['stack', 'operator'] as const;
export type ProgramOwner = (typeof PROGRAM_OWNERS)[number];

/** A per-program setting's value as stored: the setting's own form (a number, a word, a flag). */
export type ProgramSettingValue = string | number | boolean;

/**
 * The settings of one program that differ from the deployment's, keyed by their names in the
 * settings table (`pollLimit`, `feedMode`); `{}` when none. Only settings marked `perProgram`
 * there may appear, each a value its kind reads.
 */
export type ProgramSettings = { readonly [setting: string]: ProgramSettingValue };

export interface ProgramRecord {
  /** `PROGRAM_NAME_PATTERN`: the checkpoint row's key, the metrics' `Program` dimension. */
  readonly name: string;
  /** Id or ARN of the program's credentials secret; the worker refuses one outside its deployment. */
  readonly secretId: string;
  readonly state: ProgramState;
  readonly owner: ProgramOwner;
  readonly settings: ProgramSettings;
  /** Optimistic concurrency: 1 when created, one more at each write. */
  readonly revision: number;
}

/** What a writer gives the registry: the record without its revision, which the registry keeps. */
export type ProgramRecordInput = Omit<ProgramRecord, 'revision'>;

/** How large a record may be: ours are a few short fields and a handful of settings. */
export const PROGRAM_RECORD_BOUNDS = Object.freeze({
  /** Characters of `secretId`: an ARN fits many times over. */
  maxSecretIdChars: 2048,
  /** Settings of one record. */
  maxSettings: 32,
  /** Characters of a setting's name. */
  maxSettingNameChars: 64,
  /** Characters of a setting's value given as text. */
  maxSettingValueChars: 256,
});

/** A setting's name as the table spells it: a letter, then letters and digits. */
const SETTING_NAME = /^[A-Za-z][A-Za-z0-9]*$/;
/** Whitespace and control characters: never part of a secret's id or ARN. */
const NOT_IN_SECRET_ID = /[\s\p{Cc}]/u;
const RECORD_KEYS: ReadonlySet<string> = new Set([
  'name',
  'secretId',
  'state',
  'owner',
  'settings',
  'revision',
]);

/**
 * Checks a record read from storage (or given by a writer, without `revision` when
 * `withRevision` is false) and returns it frozen.
 *
 * @param where names the source in errors: `programs table item "cards"`, `programs.json[3]`.
 * @throws ProgramRecordInvalidError naming the record and the field; no value is quoted but a
 *   valid program name.
 * @example
 * parseProgramRecord({ name: 'cards', secretId: 'bep/cards', state: 'active', owner: 'operator',
 *   settings: {}, revision: 1 }, 'programs.json[0]');
 */
export function parseProgramRecord(raw: unknown, where: string): ProgramRecord {
  const record = parseFields(raw, where, true);
  return record as ProgramRecord;
}

/** Checks a record a writer gives the registry: as `parseProgramRecord`, without `revision`. */
export function parseProgramRecordInput(raw: unknown, where: string): ProgramRecordInput {
  return parseFields(raw, where, false);
}

function parseFields(raw: unknown, where: string, withRevision: boolean): ProgramRecordInput {
  if (!isJsonObject(raw)) throw new ProgramRecordInvalidError(`${where} is not an object`, { where });
  const name = raw.name;
  if (!isProgramName(name)) {
    throw new ProgramRecordInvalidError(`${where}: name must be ${PROGRAM_NAME_EXPECTED}`, {
      where,
      field: 'name',
    });
  }
  const invalid = (field: string, problem: string): never => {
    throw new ProgramRecordInvalidError(`${where} (program ${name}): ${field} ${problem}`, {
      where,
      program: name,
      field,
    });
  };
  for (const key of Object.keys(raw)) {
    if (!RECORD_KEYS.has(key) || (key === 'revision' && !withRevision))
      invalid('(a key)', 'is not a field of a program record');
  }
  const { secretId, state, owner, revision } = raw;
  if (
    typeof secretId !== 'string' ||
    secretId.length === 0 ||
    secretId.length > PROGRAM_RECORD_BOUNDS.maxSecretIdChars ||
    NOT_IN_SECRET_ID.test(secretId)
  ) {
    invalid(
      'secretId',
      `must be a secret's id or ARN of at most ${PROGRAM_RECORD_BOUNDS.maxSecretIdChars} characters, without spaces`,
    );
  }
  if (!PROGRAM_STATES.includes(state as ProgramState)) invalid('state', 'must be "active" or "paused"');
  if (!PROGRAM_OWNERS.includes(owner as ProgramOwner)) invalid('owner', 'must be "stack" or "operator"');
  const settings = parseSettings(raw.settings, invalid);
  const fields = {
    name,
    secretId: secretId as string,
    state: state as ProgramState,
    owner: owner as ProgramOwner,
    settings,
  };
  if (!withRevision) return Object.freeze(fields);
  if (typeof revision !== 'number' || !Number.isSafeInteger(revision) || revision < 1) {
    invalid('revision', 'must be a whole number, 1 or more');
  }
  return Object.freeze({ ...fields, revision: revision as number });
}

function parseSettings(raw: unknown, invalid: (field: string, problem: string) => never): ProgramSettings {
  if (raw === undefined) return Object.freeze({});
  if (!isJsonObject(raw)) return invalid('settings', 'must be an object of setting names to values');
  const entries = Object.entries(raw);
  const bounds = PROGRAM_RECORD_BOUNDS;
  if (entries.length > bounds.maxSettings)
    invalid('settings', `hold more than ${bounds.maxSettings} settings`);
  const settings: Record<string, ProgramSettingValue> = {};
  for (const [key, value] of entries) {
    if (key.length > bounds.maxSettingNameChars || !SETTING_NAME.test(key)) {
      invalid('settings', 'name a setting with a key that is not a setting name (letters and digits)');
    }
    const field = `settings.${key}`;
    if (typeof value === 'string') {
      if (value.length > bounds.maxSettingValueChars)
        invalid(field, `is longer than ${bounds.maxSettingValueChars} characters`);
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) invalid(field, 'is not a finite number');
    } else if (typeof value !== 'boolean') {
      invalid(field, 'must be a number, a word or true/false');
    }
    settings[key] = value as ProgramSettingValue;
  }
  return Object.freeze(settings);
}

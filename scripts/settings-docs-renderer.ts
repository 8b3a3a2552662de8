/**
 * Renders the configuration tables of docs/configuration.md from the settings table: the handler's
 * environment and the app's context. Each table lives between two markers in its file; `replaceTable` puts a fresh
 * rendering there, `npm run generate:docs` writes it and the unit tests check it is current.
 */
import path from 'node:path';
import type { Setting } from '../functions/settings/setting.ts';
import { settingEntries } from '../functions/settings/settings.ts';
import { DEFAULT_CONTEXT } from '../infra/app-config.ts';

export interface DocsTable {
  /** The file, from the repository root. */
  readonly file: string;
  /** The block's name in its markers. */
  readonly name: string;
  /** What the block is generated from, as its start marker says. */
  readonly source: string;
  render(): string;
}

/** `text` in a code span, as a table cell holds it. */
function code(text: string): string {
  return `\`${text.replaceAll('|', '\\|')}\``;
}

function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The doc, marked "Stream mode" where it applies only there, with its link as `file` reaches it. */
function meaning(setting: Setting, file: string): string {
  const doc = setting.streamOnly
    ? `Stream mode: ${setting.doc.charAt(0).toLowerCase()}${setting.doc.slice(1)}`
    : setting.doc;
  const see =
    setting.see === undefined ? '' : ` (see [${setting.see.title}](${linkFrom(file, setting.see.path)}))`;
  return `${doc}${see}`.replaceAll('|', '\\|');
}

function linkFrom(file: string, target: string): string {
  const [targetFile = '', anchor] = target.split('#');
  const relative = targetFile === file ? '' : path.posix.relative(path.posix.dirname(file), targetFile);
  return anchor === undefined ? relative : `${relative}#${anchor}`;
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function contextDefaultCell(setting: Setting): string {
  const place = setting.context!;
  const value = DEFAULT_CONTEXT[place.key];
  const shown = typeof value === 'string' && value !== '' ? code(value) : code(JSON.stringify(value));
  return value === place.none ? `${shown} (${setting.whenAbsent ?? 'none'})` : shown;
}

function contextForm(setting: Setting): string {
  const place = setting.context!;
  const expected = (place.kind ?? setting.kind).expected.replaceAll('|', '\\|');
  const none =
    place.none === undefined
      ? ''
      : `, or ${code(JSON.stringify(place.none))} for ${setting.whenAbsent ?? 'none'}`;
  const variable = setting.env === undefined ? '' : `; sets ${code(setting.env.name)}`;
  return `${sentence(expected)}${none}${variable}`;
}

/** docs/configuration.md, "The app's context": every context key, its default as cdk.json holds it, its form. */
const CONTEXT_FILE = 'docs/configuration.md';
export const CONTEXT_TABLE: DocsTable = {
  file: CONTEXT_FILE,
  name: 'settings:context',
  source: 'functions/settings/settings.ts',
  render() {
    const rows = settingEntries()
      .filter(([, setting]) => setting.context !== undefined)
      .map(([, setting]) =>
        row([
          code(setting.context!.key),
          contextDefaultCell(setting),
          `${meaning(setting, CONTEXT_FILE)}. ${contextForm(setting)}`,
        ]),
      );
    return [row(['Key', 'Default', 'Meaning']), row(['---', '---', '---']), ...rows].join('\n');
  },
};

function deployedCell(setting: Setting): string {
  const place = setting.env!;
  if (setting.prop !== undefined && place.deployed === undefined) return `prop ${code(setting.prop.name)}`;
  switch (place.deployed) {
    case 'resource':
      return 'its resource';
    case 'computed':
      return 'computed';
    case 'fixed':
      return 'always the default';
    default:
      return 'no';
  }
}

function environmentDefaultCell(setting: Setting): string {
  if (setting.env!.required) return 'required';
  return setting.default === undefined
    ? (setting.whenAbsent ?? 'none')
    : code(setting.kind.format(setting.default));
}

function environmentMeaning(setting: Setting): string {
  // What the construct writes for a resource is a name or an ARN: its doc says which; no form to add.
  if (setting.env!.deployed === 'resource') return meaning(setting, ENVIRONMENT_FILE);
  return `${meaning(setting, ENVIRONMENT_FILE)}. ${sentence(setting.kind.expected.replaceAll('|', '\\|'))}`;
}

/** docs/configuration.md, "The handler's environment": every variable, its default, who sets it in a deployment, its form. */
const ENVIRONMENT_FILE = 'docs/configuration.md';
export const ENVIRONMENT_TABLE: DocsTable = {
  file: ENVIRONMENT_FILE,
  name: 'settings:environment',
  source: 'functions/settings/settings.ts',
  render() {
    const rows = settingEntries()
      .filter(([, setting]) => setting.env !== undefined)
      .map(([, setting]) =>
        row([
          code(setting.env!.name),
          environmentDefaultCell(setting),
          deployedCell(setting),
          environmentMeaning(setting),
        ]),
      );
    return [
      row(['Variable', 'Default', 'Set by the construct', 'Meaning']),
      row(['---', '---', '---', '---']),
      ...rows,
    ].join('\n');
  },
};

/** docs/configuration.md, "Per-program settings": what a program record's `settings` may hold, and its form. */
const PER_PROGRAM_FILE = 'docs/configuration.md';
export const PER_PROGRAM_TABLE: DocsTable = {
  file: PER_PROGRAM_FILE,
  name: 'settings:per-program',
  source: 'functions/settings/settings.ts',
  render() {
    const rows = settingEntries()
      .filter(([, setting]) => setting.perProgram === true)
      .map(([name, setting]) =>
        row([
          code(name),
          setting.env === undefined ? 'none' : code(setting.env.name),
          `${meaning(setting, PER_PROGRAM_FILE)}. ${sentence(setting.kind.expected.replaceAll('|', '\\|'))}`,
        ]),
      );
    return [
      row(['Setting', "The deployment's variable", 'Meaning']),
      row(['---', '---', '---']),
      ...rows,
    ].join('\n');
  },
};

export const DOCS_TABLES: readonly DocsTable[] = [ENVIRONMENT_TABLE, CONTEXT_TABLE, PER_PROGRAM_TABLE];

/** The markers a table sits between in its file. */
export function markers(table: DocsTable): readonly [string, string] {
  return [
    `<!-- ${table.name} (generated from ${table.source}: npm run generate:docs) -->`,
    `<!-- /${table.name} -->`,
  ];
}

/** `document` with the table between its markers rendered afresh. */
export function replaceTable(document: string, table: DocsTable): string {
  const [start, end] = markers(table);
  const from = document.indexOf(start);
  const to = document.indexOf(end);
  if (from === -1 || to < from) {
    throw new Error(`${table.file} has no ${start} … ${end} block for the ${table.name} table`);
  }
  return `${document.slice(0, from + start.length)}\n${table.render()}\n${document.slice(to)}`;
}

/**
 * Facts the docs state that can break without anyone rewording a sentence: every relative link of
 * every Markdown page lands on a file and, with an anchor, on a heading or `<a id>` of it; every
 * `banking-events-poller …` command line they give names commands the CLI has, with flags those
 * commands take; every error code and variable they name exists; the generated references are
 * what the commands' own help prints and what the construct declares. No sentence is pinned.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { boundedClientConfig } from '../../../functions/adapters/aws/bounded-client-config.ts';
import {
  CLASSIC_BUS_MAX_ENTRIES,
  CUSTOM_BUS_MAX_ENTRIES,
} from '../../../functions/adapters/aws/put-events-limits.ts';
import { CLI_ERRORS } from '../../../functions/cli/cli-errors.ts';
import { createCli } from '../../../functions/cli/cli-program.ts';
import { CHECKPOINT_WRITE_PACING } from '../../../functions/core/checkpoint/progress.ts';
import { CYCLE_DEFAULTS } from '../../../functions/core/cycle/cycle-options.ts';
import { MAX_PAGES_IN_FLIGHT, MAX_UNCOMMITTED } from '../../../functions/core/cycle/read-loop.ts';
import { POLLER_ERRORS } from '../../../functions/core/errors.ts';
import { GAP_LEDGER_DEFAULTS } from '../../../functions/core/gap-ledger.ts';
import { GAP_REPAIR_DEFAULTS } from '../../../functions/core/gap-repair.ts';
import { METRIC_NAMES } from '../../../functions/core/ports.ts';
import { PUBLISH_DEFAULTS } from '../../../functions/core/publish-pipeline.ts';
import { SETTINGS, settingEntries } from '../../../functions/settings/settings.ts';
import type { IntegerKind } from '../../../functions/settings/value-kinds.ts';
import { SUBSCRIBER_ERRORS } from '../../../functions/subscriber/errors.ts';
import { CLI_REFERENCE } from '../../../scripts/cli-docs-renderer.ts';
import { CONSTRUCT_REFERENCE } from '../../../scripts/construct-docs-renderer.ts';
import { COST_TABLE } from '../../../scripts/cost-docs-renderer.ts';
import { PRICES, TODAY_PER_PROGRAM, USAGE } from '../../../scripts/cost-model.ts';
import { replaceTable } from '../../../scripts/settings-docs-renderer.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The repository's Markdown pages, tracked or new, as git lists them (no node_modules, no build output). */
const PAGES = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.md'], {
  cwd: REPO_ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => file !== '' && existsSync(path.join(REPO_ROOT, file)));

const read = (file: string): string => readFileSync(path.join(REPO_ROOT, file), 'utf8');

/** Fenced blocks removed: a `# comment` in a shell block is no heading, a `](x)` in code no link. */
function outsideFences(markdown: string): string {
  return markdown.replace(/^( *)```[\s\S]*?^\1```$/gm, '');
}

/** `<a id>` anchors and the ids GitHub gives headings (lower case, punctuation dropped, - for spaces). */
function anchorsOf(markdown: string): Set<string> {
  const ids = [...markdown.matchAll(/<a id="([^"]+)"><\/a>/g)].map(([, id]) => id!);
  const headings = [...outsideFences(markdown).matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) =>
    heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-'),
  );
  return new Set([...ids, ...headings]);
}

/** The relative targets of a page's links, `path#anchor`, `path` or `#anchor`. */
function relativeLinksOf(markdown: string): string[] {
  return [...outsideFences(markdown).matchAll(/\]\(([^)\s]+)\)/g)]
    .map(([, target]) => target!)
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target));
}

describe('the links of the docs', () => {
  it('are found on the pages that have them', () => {
    expect(PAGES).toEqual(expect.arrayContaining(['README.md', 'docs/runbook.md', 'CONTRIBUTING.md']));
    expect(relativeLinksOf(read('README.md')).length).toBeGreaterThan(10);
  });

  it.each(PAGES)('of %s each land on a file, and on a section of it when they name one', (page) => {
    for (const target of relativeLinksOf(read(page))) {
      const [file = '', anchor] = target.split('#');
      const landing =
        file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
      expect(existsSync(path.join(REPO_ROOT, landing)), `${page}: ${target}: no ${landing}`).toBe(true);
      if (anchor !== undefined && landing.endsWith('.md')) {
        expect(anchorsOf(read(landing)).has(anchor), `${page}: ${target}: no #${anchor} in ${landing}`).toBe(
          true,
        );
      }
    }
  });

  it('would catch a link to a section that moved', () => {
    expect(anchorsOf(read('docs/runbook.md')).has('alarm-errors')).toBe(true);
    expect(anchorsOf(read('docs/deploy.md')).has('alarm-errors')).toBe(false);
  });
});

/**
 * `banking-events-poller …` as the docs write it in code (a block, or a code span), at the start of
 * a line, after a `$ ` prompt or after `npx `: up to the end of the span, a pipe or redirection, a comment or the line.
 */
function commandLinesOf(markdown: string): string[] {
  const code = [
    ...[...markdown.matchAll(/^ *```[a-z]*\n([\s\S]*?)^ *```$/gm)].map(([, body]) => body!),
    ...[...outsideFences(markdown).matchAll(/`([^`\n]+)`/g)].map(([, span]) => span!),
  ];
  return code.flatMap((text) =>
    [...text.matchAll(/(?:^|\$ |npx )banking-events-poller( [^\n#|;&]*)/gm)].map(([, rest]) => rest!.trim()),
  );
}

/** Where `line` fails against the CLI: a command it lacks, or a flag that command does not take. */
function misfits(cli: Command, line: string): string[] {
  const all = line.split(/\s+/).filter((word) => word !== '' && word !== '…');
  // A redirection ends the command line (`< creds.json`).
  const end = all.findIndex((word) => /^\d?[<>]$/.test(word));
  const words = end === -1 ? all : all.slice(0, end);
  if (words.length === 0) return []; // `banking-events-poller …`: the program named, no command given
  // The command and its subcommand, past global flags and their values (`--stack <stack>`).
  const chain: Command[] = [cli];
  let command = cli;
  for (let index = 0; index < words.length; ) {
    const word = words[index]!;
    if (word.startsWith('-')) {
      const option = chain.flatMap((c) => c.options).find((o) => o.long === word || o.short === word);
      index += option?.required ? 2 : 1;
      continue;
    }
    const sub = command.commands.find((candidate) => candidate.name() === word);
    if (sub === undefined) break;
    command = sub;
    chain.push(sub);
    index += 1;
  }
  if (chain.length === 1)
    return words.includes('--help') || words.includes('--version') ? [] : ['no command'];
  const flags = new Set([
    '--help',
    '-h',
    ...chain.flatMap((c) => c.options.flatMap((o) => [o.long, o.short])),
  ]);
  return words
    .filter((word) => word.startsWith('-') && !/^-\d/.test(word))
    .map((word) => word.split('=')[0]!)
    .filter((flag) => !flags.has(flag));
}

describe('the command lines of the docs', () => {
  const cli = createCli('0.0.0');
  const linesByPage = PAGES.map((page) => [page, commandLinesOf(read(page))] as const).filter(
    ([, lines]) => lines.length > 0,
  );

  it('are found where the docs give them', () => {
    const pages = linesByPage.map(([page]) => page);
    expect(pages).toEqual(
      expect.arrayContaining(['README.md', 'docs/runbook.md', 'docs/getting-started.md']),
    );
  });

  it.each(linesByPage)('of %s name commands the CLI has, with flags those commands take', (page, lines) => {
    for (const line of lines) {
      expect(misfits(cli, line), `${page}: \`banking-events-poller ${line}\``).toEqual([]);
    }
  });

  it('would catch a flag the command does not take, and a command the CLI lacks', () => {
    expect(misfits(cli, 'status --stack S --program default')).toEqual([]);
    expect(misfits(cli, 'rewind --program default --to-sequence 3')).toEqual(['--to-sequence']);
    expect(misfits(cli, 'restart --stack S')).toEqual(['no command']);
  });
});

/** Error codes and variables as the docs write them: `UPPER_SNAKE` names in code spans. */
const NAME = /`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/g;
const NAME_IN_CODE = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g;

/** The error codes of the poller, its CLI and the subscriber kit. */
const ERROR_CODES = new Set([...POLLER_ERRORS, ...CLI_ERRORS, ...SUBSCRIBER_ERRORS].map(({ code }) => code));

/**
 * Every such name in the repository's code (sources, scripts, tests, benchmarks), this test's file
 * aside: the variables it reads, the constants it names.
 */
const NAMES_IN_CODE = new Set(
  execFileSync(
    'git',
    [
      'ls-files',
      '--cached',
      '--others',
      '--exclude-standard',
      'functions',
      'infra',
      'scripts',
      'test',
      'bench',
    ],
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    },
  )
    .split('\n')
    .filter(
      (file) =>
        /\.(ts|mjs|py)$/.test(file) &&
        !file.startsWith('test/unit/docs/') &&
        existsSync(path.join(REPO_ROOT, file)),
    )
    .flatMap((file) => read(file).match(NAME_IN_CODE) ?? []),
);

/** Names the docs give that are AWS's, not ours: the attributes EventBridge puts on a dead-letter message. */
const AWS_NAMES = new Set(['ERROR_CODE', 'ERROR_MESSAGE']);

/** The names of `markdown` that are no error code, no setting's variable, and nowhere in the code. */
function unknownNames(markdown: string): string[] {
  const variables = new Set(
    settingEntries().flatMap(([, setting]) => (setting.env ? [setting.env.name] : [])),
  );
  return [...markdown.matchAll(NAME)]
    .map(([, name]) => name!)
    .filter(
      (name) =>
        !ERROR_CODES.has(name) && !variables.has(name) && !NAMES_IN_CODE.has(name) && !AWS_NAMES.has(name),
    );
}

describe('the error codes and variables the docs name', () => {
  // The changelog names what is gone too.
  const pages = PAGES.filter((page) => page !== 'CHANGELOG.md' && [...read(page).matchAll(NAME)].length > 0);

  it('are found where the docs give them', () => {
    expect(pages).toEqual(expect.arrayContaining(['docs/runbook.md', 'docs/configuration.md']));
  });

  it.each(pages)('of %s each exist: an error code, a setting, or a name the code uses', (page) => {
    expect(unknownNames(read(page))).toEqual([]);
  });

  it('would catch a code that does not exist', () => {
    expect(
      unknownNames('stops the run with `EVENT_TOO_LARGE`, or `EVENT_TOO_BIG`; see `POLL_LIMIT`'),
    ).toEqual(['EVENT_TOO_BIG']);
  });
});

describe('the CLI reference of docs/cli.md', () => {
  it('is what the commands print for --help (run npm run generate:docs after changing a command)', () => {
    const document = read(CLI_REFERENCE.file);

    expect(replaceTable(document, CLI_REFERENCE)).toBe(document);
  });

  it('holds every command', () => {
    const headings = [...read(CLI_REFERENCE.file).matchAll(/^### `banking-events-poller ([a-z -]+)`$/gm)].map(
      ([, name]) => name!,
    );
    const commands = createCli('0.0.0').commands.map((command) => command.name());

    expect(headings).toEqual(expect.arrayContaining(commands));
  });
});

describe('the API reference of docs/construct.md', () => {
  it("is what the construct's declarations give (run npm run generate:docs after changing a prop)", () => {
    const document = read(CONSTRUCT_REFERENCE.file);

    expect(replaceTable(document, CONSTRUCT_REFERENCE)).toBe(document);
  });

  it('holds every prop of the construct, with its default', () => {
    const reference = CONSTRUCT_REFERENCE.render();

    expect(reference).toContain('| `pollLimit?` | `number` | 100 |');
    expect(reference).toContain('### `BankingEventsPollerProps`');
    expect(reference).toMatch(/^\| `grantOperatorRecovery\(/m);
  });
});

/** A number as the docs write it: `1 000`, `1,000`, `1_000` or `1000`. */
function numberOf(text: string): number {
  return Number(text.replace(/[ ,_\u202f]/g, ''));
}

/**
 * A number the docs state, wherever they state it this way, and the code it must equal. `pattern`
 * captures the number(s); every match on every page must give `values`, in order, and at least
 * one page must state it (so a claim reworded away is noticed and re-pointed, not silently lost).
 */
interface NumberClaim {
  readonly claim: string;
  readonly pattern: RegExp;
  readonly values: readonly number[];
}

const NUMBER = String.raw`(\d[\d ,_]*\d|\d)`;
const claim = (text: string, pattern: string, values: readonly number[]): NumberClaim => ({
  claim: text,
  pattern: new RegExp(pattern, 'g'),
  values,
});

const NUMBER_CLAIMS: readonly NumberClaim[] = [
  claim('entries per PutEvents, classic bus', `PutEvents \\(≤ ${NUMBER} entries`, [CLASSIC_BUS_MAX_ENTRIES]),
  claim('entries per PutEvents, both buses', `${NUMBER} on the classic bus\\)`, [CLASSIC_BUS_MAX_ENTRIES]),
  claim(
    'events per request on each bus',
    `up to ${NUMBER} events on the classic bus, up to ${NUMBER} on the Custom Event Bus`,
    [CLASSIC_BUS_MAX_ENTRIES, CUSTOM_BUS_MAX_ENTRIES],
  ),
  claim('entries per PutEvents, custom bus', `up to ${NUMBER} entries(?: per PutEvents)?`, [
    CUSTOM_BUS_MAX_ENTRIES,
  ]),
  claim('PutEvents requests in flight', `up to ${NUMBER} requests at once`, [PUBLISH_DEFAULTS.concurrency]),
  claim(
    'checkpoint write pacing',
    `at most every ${NUMBER} ms, once ${NUMBER} numbers wait for it or ${NUMBER} ms`,
    [
      CHECKPOINT_WRITE_PACING.minIntervalMs,
      CHECKPOINT_WRITE_PACING.writeAfterNumbers,
      CHECKPOINT_WRITE_PACING.maxIntervalMs,
    ],
  ),
  claim('checkpoint writes, numbers waiting', `once ${NUMBER} (?:accepted )?numbers wait`, [
    CHECKPOINT_WRITE_PACING.writeAfterNumbers,
  ]),
  claim('checkpoint writes, after the last', `${NUMBER} ms after the last`, [
    CHECKPOINT_WRITE_PACING.maxIntervalMs,
  ]),
  claim('checkpoint writes, interval', `never more often than every ${NUMBER} ms`, [
    CHECKPOINT_WRITE_PACING.minIntervalMs,
  ]),
  claim('re-sent after a cut, normally', `normally at most ${NUMBER} events`, [
    CHECKPOINT_WRITE_PACING.writeAfterNumbers,
  ]),
  claim(
    'uncommitted numbers bound',
    `never more than ${NUMBER}, or twice the pages in flight, plus ${NUMBER} pages`,
    [MAX_UNCOMMITTED, MAX_PAGES_IN_FLIGHT],
  ),
  claim('uncommitted numbers bound, reading stops', `once ${NUMBER} accepted sequence numbers wait`, [
    MAX_UNCOMMITTED,
  ]),
  claim('pages in flight', `up to ${NUMBER}\\s+pages of`, [MAX_PAGES_IN_FLIGHT]),
  claim('lease checks', `checking every ${NUMBER} ms`, [CYCLE_DEFAULTS.leaseCheckIntervalMs]),
  claim('gap lookups in flight', `up to ${NUMBER} at a time`, [GAP_REPAIR_DEFAULTS.concurrency]),
  claim('gap lookups per invocation', `within ${NUMBER} lookups per\\s+invocation`, [
    GAP_REPAIR_DEFAULTS.maxLookups,
  ]),
  claim('open gap ranges kept', `at most ${NUMBER} ranges`, [GAP_LEDGER_DEFAULTS.maxGaps]),
  claim('credentials cache', `cached ${NUMBER} min`, [
    (SETTINGS.credentialsTtlSeconds.default as number) / 60,
  ]),
  claim(
    "every AWS client's bounds",
    `${NUMBER} attempts(?:,| of ≤) ${NUMBER} s (?:to )?connect(?:,| \\+) ${NUMBER} s (?:to )?answer`,
    [
      boundedClientConfig.maxAttempts,
      boundedClientConfig.requestHandler.connectionTimeout / 1000,
      boundedClientConfig.requestHandler.requestTimeout / 1000,
    ],
  ),
  claim('metrics the handler emits', `about \\d+–\\d+ of its ${NUMBER} metrics`, [METRIC_NAMES.length]),
];

/** The numbers each statement of `numberClaim` in `text` gives. */
function numbersIn(numberClaim: NumberClaim, text: string): number[][] {
  return [...text.matchAll(numberClaim.pattern)].map((match) =>
    match.slice(1).map((captured) => numberOf(captured!)),
  );
}

/** `[page, numbers]` for every statement of `numberClaim` outside the changelog (it records what was). */
function statementsOf(numberClaim: NumberClaim): (readonly [string, number[]])[] {
  return PAGES.filter((page) => page !== 'CHANGELOG.md').flatMap((page) =>
    numbersIn(numberClaim, read(page)).map((numbers) => [page, numbers] as const),
  );
}

describe('the numbers the docs state for defaults and limits', () => {
  it.each(NUMBER_CLAIMS.map((numberClaim) => [numberClaim.claim, numberClaim] as const))(
    '%s: every statement is what the code says',
    (_name, numberClaim) => {
      const statements = statementsOf(numberClaim);

      expect(statements.length, `no page states ${numberClaim.pattern}`).toBeGreaterThan(0);
      for (const [page, numbers] of statements) {
        expect(numbers, `${page}: ${numberClaim.claim}`).toEqual(numberClaim.values);
      }
    },
  );

  it('would catch a number the code does not have, however it is written', () => {
    const [entries] = NUMBER_CLAIMS;
    const bound = NUMBER_CLAIMS.find((numberClaim) => numberClaim.claim === 'uncommitted numbers bound')!;

    expect(numbersIn(entries!, 'PutEvents (≤ 12 entries, ≤ 1 MiB')).toEqual([[12]]);
    expect(numbersIn(bound, 'never more than 1 000, or twice the pages in flight, plus 4 pages')).toEqual([
      bound.values,
    ]);
    expect(numbersIn(bound, 'never more than 1,500, or twice the pages in flight, plus 4 pages')).not.toEqual(
      [bound.values],
    );
  });
});

const TIME_UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1_000,
  second: 1_000,
  seconds: 1_000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  day: 86_400_000,
  days: 86_400_000,
};
const SETTING_UNIT_MS = { milliseconds: 1, seconds: 1_000, minutes: 60_000, days: 86_400_000 } as const;
/** Words a statement of a default or a bound may hold besides numbers and units. */
const BOUND_WORDS = new Set([
  'to',
  'by',
  'default',
  'defaults',
  'at',
  'most',
  'least',
  'or',
  'from',
  'the',
  'whole',
]);
const QUANTITY = new RegExp(
  String.raw`(?<![\w.])${NUMBER}(?:\s*(${Object.keys(TIME_UNITS).join('|')})\b)?`,
  'g',
);

/**
 * Where `markdown` states a default or a bound of a whole-number setting right after naming it
 * (its variable, context key or prop in a code span, then `(…` or `, …`: "`CREDENTIALS_TTL_SECONDS`
 * (5 minutes)", "`busRetentionDays` (1 to 365, default 14)"): each quantity that is not the
 * setting's default, minimum or maximum. A clause with other words ("(60 000 here)") is an example,
 * not a default, and is passed over.
 */
function misstatedSettingNumbers(markdown: string): string[] {
  const wrong: string[] = [];
  for (const [name, setting] of settingEntries()) {
    const kind = setting.kind as Partial<IntegerKind>;
    if (kind.min === undefined) continue;
    const allowed = [setting.default, kind.min, kind.max].filter((value) => typeof value === 'number');
    const names = new Set(
      [setting.env?.name, setting.context?.key, setting.prop?.name.split('.').at(-1), name].filter(
        (candidate): candidate is string => candidate !== undefined,
      ),
    );
    for (const written of names) {
      for (const [, opener, clause] of markdown.matchAll(
        new RegExp(`\`${written}\`( \\(|, )([^\`\\n)|;:]{1,60})`, 'g'),
      )) {
        const segments = clause!.split(/, |\. /);
        for (const segment of opener === ', ' ? segments.slice(0, 1) : segments) {
          const words = segment.replace(QUANTITY, ' ').split(/\s+/).filter(Boolean);
          if (words.some((word) => !BOUND_WORDS.has(word.toLowerCase()))) break;
          for (const [quantity, digits, unit] of segment.matchAll(QUANTITY)) {
            const amount = numberOf(digits!);
            const value =
              unit !== undefined && kind.unit !== undefined
                ? (amount * TIME_UNITS[unit]!) / SETTING_UNIT_MS[kind.unit]
                : amount;
            if (!allowed.includes(value)) wrong.push(`\`${written}\` ${opener!.trim()} ${quantity}`);
          }
        }
      }
    }
  }
  return wrong;
}

describe("the defaults and bounds the docs state next to a setting's name", () => {
  const pages = PAGES.filter((page) => page !== 'CHANGELOG.md');

  it.each(pages)("of %s are the setting's", (page) => {
    expect(misstatedSettingNumbers(read(page))).toEqual([]);
  });

  it('are found where the docs give them', () => {
    const checked = pages.filter((page) => /`CREDENTIALS_TTL_SECONDS` \(/.test(read(page)));
    expect(checked.length).toBeGreaterThan(0);
  });

  it('would catch a wrong default, a wrong bound and a wrong unit, and pass an example over', () => {
    expect(misstatedSettingNumbers('re-read within `CREDENTIALS_TTL_SECONDS` (5 minutes)')).toEqual([]);
    expect(misstatedSettingNumbers('re-read within `CREDENTIALS_TTL_SECONDS` (10 minutes)')).toEqual([
      '`CREDENTIALS_TTL_SECONDS` ( 10 minutes',
    ]);
    expect(misstatedSettingNumbers('`busRetentionDays` (1 to 366, default 14)')).toEqual([
      '`busRetentionDays` ( 366',
    ]);
    expect(misstatedSettingNumbers('(`SAFETY_MARGIN_MS`, 10 ms, at most a quarter)')).toEqual([
      '`SAFETY_MARGIN_MS` , 10 ms',
    ]);
    expect(misstatedSettingNumbers('`MAX_EVENT_ENTRY_BYTES` (60 000 here)')).toEqual([]);
  });
});

describe('the metrics of the runbook', () => {
  it('lists every metric the handler emits', () => {
    const runbook = read('docs/runbook.md');
    const metrics = runbook.slice(runbook.indexOf('\n## Metrics\n'));

    expect(METRIC_NAMES.filter((name) => !metrics.includes(`\`${name}\``))).toEqual([]);
  });
});

/** The default stack's template, as the infra tests pin it. */
const DEFAULT_TEMPLATE = JSON.parse(read('test/infra/classic-default-template.json')) as {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
};

describe('docs/cost.md', () => {
  const cost = read('docs/cost.md');
  const resources = Object.values(DEFAULT_TEMPLATE.Resources);

  it('names every type of resource the default stack creates', () => {
    const types = [...new Set(resources.map((resource) => resource.Type))];

    expect(types.length).toBeGreaterThan(15);
    expect(types.filter((type) => !cost.includes(`\`${type}\``))).toEqual([]);
  });

  it('counts the alarms as the template has them: per program and per deployment', () => {
    const alarms = resources.filter((resource) => resource.Type === 'AWS::CloudWatch::Alarm');
    const perProgram = alarms.filter((alarm) =>
      JSON.stringify(alarm.Properties?.Dimensions ?? []).includes('"Program"'),
    ).length;
    const stated = /alarms number\s+(\d+) \+ (\d+) per program \((\d+) with one\)/.exec(cost);

    expect(stated?.slice(1).map(Number)).toEqual([alarms.length - perProgram, perProgram, alarms.length]);
  });

  it("holds the fleet's table as the cost model renders it (run npm run generate:docs after changing it)", () => {
    expect(replaceTable(cost, COST_TABLE)).toBe(cost);
    const edited = cost.replace('| Secrets Manager |', '| Secrets |');
    expect(edited).not.toBe(cost);
    expect(replaceTable(edited, COST_TABLE)).toBe(cost);
    expect(cost).toContain(`| **A program-month** | the month ÷ programs |`);
  });

  it("builds the fleet's cost from today's measured run, prices and alarms, as this page states them", () => {
    const alarms = resources.filter((resource) => resource.Type === 'AWS::CloudWatch::Alarm');
    const perProgram = alarms.filter((alarm) =>
      JSON.stringify(alarm.Properties?.Dimensions ?? []).includes('"Program"'),
    ).length;
    const duration = /43,200 runs × ~(\d+) s × [\d.]+ GB = [\d,]+ GB-s \| \$([\d.]+) per GB-s/.exec(cost);
    const today = /\| \*\*A program\*\* \| \| \| \*\*\$([\d.]+)–/.exec(cost);
    const metrics = /about (\d+)–\d+ of its \d+ metrics/.exec(cost);

    expect(USAGE.runSeconds.value).toBe(Number(duration?.[1]));
    expect(PRICES.lambdaGbSecond).toBe(Number(duration?.[2]));
    expect(TODAY_PER_PROGRAM).toBe(Number(today?.[1]));
    expect(USAGE.perProgramMetrics.value).toBe(Number(metrics?.[1]));
    // The default stack has one worker: its stall alarm.
    expect([USAGE.stackAlarms.value + USAGE.conditionAlarms.value + 1, USAGE.perProgramAlarms.value]).toEqual(
      [alarms.length - perProgram, perProgram],
    );
  });

  it('prices the function the template deploys', () => {
    const [fn] = resources.filter((resource) => resource.Type === 'AWS::Lambda::Function');
    const duration = /43,200 runs × ~(\d+) s × ([\d.]+) GB/.exec(cost);

    expect(fn?.Properties?.Architectures).toEqual(['arm64']);
    expect(Number(duration?.[2])).toBe((fn?.Properties?.MemorySize as number) / 1024);
    // A run polls until its timeout less the safety margin.
    expect(Number(duration?.[1])).toBe(
      (fn?.Properties?.Timeout as number) - CYCLE_DEFAULTS.safetyMarginMs / 1000,
    );
  });
});

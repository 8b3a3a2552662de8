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
import { CLI_ERRORS } from '../../../functions/cli/cli-errors.ts';
import { createCli } from '../../../functions/cli/cli-program.ts';
import { POLLER_ERRORS } from '../../../functions/core/errors.ts';
import { settingEntries } from '../../../functions/settings/settings.ts';
import { SUBSCRIBER_ERRORS } from '../../../functions/subscriber/errors.ts';
import { CLI_REFERENCE } from '../../../scripts/cli-docs-renderer.ts';
import { CONSTRUCT_REFERENCE } from '../../../scripts/construct-docs-renderer.ts';
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

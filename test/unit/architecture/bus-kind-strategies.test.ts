/**
 * One strategy per kind of bus: the construct, the handler and the CLI each choose their kind's
 * strategy once, by a lookup (`infra/constructs/poller-bus-kinds.ts`,
 * `functions/poller/bus-kinds.ts`, `functions/cli/operator-bus-kinds.ts`), and ask it what differs.
 * So no shipped source compares anything with a kind of bus, nor switches on one: found with the
 * type checker, whatever the names (a literal, a constant, a property typed as a kind), against the
 * kinds the settings table declares. A planted fixture shows the check finds each form.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SETTINGS, type SettingValue } from '../../../functions/settings/settings.ts';
import type { ChoiceKind } from '../../../functions/settings/value-kinds.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** What ships: the construct and the app, the handler, the CLI, the kit. */
const SOURCE_DIRS = ['infra', 'functions'];
const FIXTURE = path.join(REPO, 'test/unit/architecture/bus-kind-branch.fixture.ts');
const KINDS: ReadonlySet<string> = new Set(
  (SETTINGS.eventBusKind.kind as ChoiceKind<SettingValue<'eventBusKind'>>).values,
);
const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [file] : [];
  });
}

/** Whether `type` is a kind of bus, or a union of them: a string literal of the settings' kinds. */
function isKindType(type: ts.Type): boolean {
  const parts = type.isUnion() ? type.types : [type];
  return parts.every((part) => part.isStringLiteral() && KINDS.has(part.value));
}

/** `file:line` of every comparison with a kind of bus, and every switch on one, in `files`. */
function kindBranches(program: ts.Program, files: readonly string[]): string[] {
  const checker = program.getTypeChecker();
  const kind = (node: ts.Expression) => isKindType(checker.getTypeAtLocation(node));
  const found: string[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (source === undefined) throw new Error(`${file} is not in the program`);
    const visit = (node: ts.Node): void => {
      const branch =
        (ts.isBinaryExpression(node) &&
          EQUALITY.has(node.operatorToken.kind) &&
          (kind(node.left) || kind(node.right))) ||
        (ts.isSwitchStatement(node) && kind(node.expression));
      if (branch) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push(`${path.relative(REPO, file)}:${line}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

// One type-checked program over every shipped source takes seconds of CPU, more on shared cores.
describe('the kinds of bus', { timeout: 180_000 }, () => {
  const files = SOURCE_DIRS.flatMap((dir) => sourceFiles(path.join(REPO, dir)));
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(REPO, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  const program = ts.createProgram([...files, FIXTURE], { ...config!.options, noEmit: true });

  it('are two, classic and custom, as the strategies below have them', () => {
    expect([...KINDS]).toEqual(['classic', 'custom']);
  });

  it('are never compared nor switched on in the shipped sources: each kind is a strategy', () => {
    expect(
      kindBranches(program, files),
      "ask the kind's strategy instead: infra/constructs/poller-bus.ts, functions/cli/operator-bus.ts, functions/poller/bus-kinds.ts",
    ).toEqual([]);
  });

  it('would be found in each form the fixture plants', () => {
    const planted = readFileSync(FIXTURE, 'utf8')
      .split('\n')
      .flatMap((line, index) =>
        line.trim() === '// planted' ? [`${path.relative(REPO, FIXTURE)}:${index + 2}`] : [],
      );

    expect(planted).toHaveLength(5);
    expect(kindBranches(program, [FIXTURE])).toEqual(planted);
  });
});

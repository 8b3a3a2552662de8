/**
 * The shape of the sources, as the style guide asks it and a reader relies on it: no import
 * circles (type-only imports included), a core that knows nothing of AWS, HTTP or Node's timers,
 * and core functions short enough to read in one sitting. Files are split by job, not by length:
 * no line count is asked of them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SOURCE_DIRS = ['functions', 'infra', 'scripts', 'bench'];
const CORE = path.join(REPO, 'functions/core');
/** Node modules the core may use: hashing only. Time is a port (`Clock`); the system clock is an adapter. */
const CORE_BUILTINS = new Set(['node:crypto']);
const MAX_CORE_FUNCTION_LINES = 80;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [file] : [];
  });
}

/** Every module specifier a file imports or re-exports, `import type` included. */
function specifiers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The repository files a file imports (relative specifiers), resolved. */
function localImports(file: string): string[] {
  return specifiers(file)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => path.resolve(path.dirname(file), specifier));
}

/** Every cycle of the graph, each as the list of files around it (relative to the repository). */
function cycles(files: readonly string[]): string[][] {
  const graph = new Map(files.map((file) => [file, localImports(file)]));
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') {
        found.push(stack.slice(stack.indexOf(next)).map((entry) => path.relative(REPO, entry)));
      } else if (!state.has(next) && graph.has(next)) {
        visit(next);
      }
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return found;
}

// Parsing every source takes seconds of CPU; on shared cores under the whole unit project it
// outruns Vitest's 5 s default, so these checks get their own bound.
describe('the sources', { timeout: 60_000 }, () => {
  const files = SOURCE_DIRS.flatMap((dir) => sourceFiles(path.join(REPO, dir)));
  const core = sourceFiles(CORE);

  it('have no import circles, type-only imports included', () => {
    expect(cycles(files)).toEqual([]);
  });

  it('keep AWS, HTTP and Node timers out of the core: it imports only itself and node:crypto', () => {
    const foreign = core.flatMap((file) =>
      specifiers(file)
        .filter((specifier) =>
          specifier.startsWith('.')
            ? !path.resolve(path.dirname(file), specifier).startsWith(`${CORE}${path.sep}`)
            : !CORE_BUILTINS.has(specifier),
        )
        .map((specifier) => `${path.relative(REPO, file)} imports ${specifier}`),
    );

    expect(foreign).toEqual([]);
  });

  it(`keep each core function within ${MAX_CORE_FUNCTION_LINES} lines`, () => {
    const long: string[] = [];
    for (const file of core) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
          const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
          const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
          const lines = end - start + 1;
          if (lines > MAX_CORE_FUNCTION_LINES) {
            const name = node.name?.getText(source) ?? '(anonymous)';
            long.push(`${path.relative(REPO, file)}:${start + 1} ${name}: ${lines} lines`);
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }

    expect(long).toEqual([]);
  });
});

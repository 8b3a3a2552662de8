/**
 * No import circles in the sources, type-only imports included: a module that needs a type of
 * another that needs it back wants the shared part moved down.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOURCE_DIRS = ['functions', 'infra', 'scripts', 'bench'];

/**
 * Circles that other work of issue 18 is taking apart (the core's rewrite; the simulator's
 * routes); listed so that any new circle fails here. Delete an entry once its circle is gone.
 */
const KNOWN_CIRCLES = [
  ['functions/core/event-model.ts', 'functions/core/invalid-event.ts'],
  ['functions/simulator/banking-simulator.ts', 'functions/simulator/http-routes.ts'],
];

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.relative(REPO_ROOT, path.join(entry.parentPath, entry.name)));
}

/** Every relative module a file imports or re-exports, `import type` and `import()` included. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(path.join(REPO_ROOT, file), 'utf8'), true, true);
  return importedFiles
    .map(({ fileName }) => fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => path.normalize(path.join(path.dirname(file), specifier)));
}

/** The strongly connected components of more than one module (Tarjan), each sorted. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('imports', () => {
  it('form no circle but those being taken apart elsewhere', () => {
    const files = SOURCE_DIRS.flatMap(sourceFiles);
    const graph = new Map(files.map((file) => [file, importsOf(file)]));
    const known = new Set(KNOWN_CIRCLES.map((circle) => circle.join(' ↔ ')));

    const found = circles(graph).map((circle) => circle.join(' ↔ '));

    expect(found.filter((circle) => !known.has(circle))).toEqual([]);
  });

  it('finds a circle through a type-only import', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);

    expect(circles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(
      ts.preProcessFile("import type { A } from './a.ts';\nexport type { B } from './b.ts';", true, true)
        .importedFiles.length,
    ).toBe(2);
  });
});

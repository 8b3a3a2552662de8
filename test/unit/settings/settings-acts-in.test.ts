/**
 * Each setting's `actsIn` names a module and an export that exist: the one hop from a setting's
 * name to the code it changes stays true when code moves.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { settingEntries } from '../../../functions/settings/settings.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Settings declared before the code that reads them lands (the custom bus, issue 27). */
const NOT_READ_YET = new Set(['busRetentionDays']);

/** The names a module exports: its exported declarations and `export { … }` lists. */
function exportedNames(file: string): Set<string> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const names = new Set<string>();
  for (const statement of source.statements) {
    const exported = ts.canHaveModifiers(statement)
      ? ts.getModifiers(statement)?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)
      : false;
    if (
      ts.isExportDeclaration(statement) &&
      statement.exportClause &&
      ts.isNamedExports(statement.exportClause)
    ) {
      for (const element of statement.exportClause.elements) names.add(element.name.text);
    } else if (exported && ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) names.add(declaration.name.text);
      }
    } else if (
      exported &&
      (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) &&
      statement.name !== undefined
    ) {
      names.add(statement.name.text);
    }
  }
  return names;
}

const places = settingEntries().flatMap(([name, setting]) =>
  setting.actsIn.map((place) => [name, place] as const),
);

describe('where each setting acts', () => {
  it('is named for every setting the code reads', () => {
    const unnamed = settingEntries()
      .filter(([name, setting]) => setting.actsIn.length === 0 && !NOT_READ_YET.has(name))
      .map(([name]) => name);

    expect(places.length).toBeGreaterThan(settingEntries().length);
    expect(unnamed).toEqual([]);
  });

  it.each(places)('%s acts in %s, a module with that export', (_name, place) => {
    const [file, exportName] = place.split('#') as [string, string];
    const absolute = path.join(ROOT, file);

    expect(existsSync(absolute), `${file} exists`).toBe(true);
    expect([...exportedNames(absolute)]).toContain(exportName);
  });
});

/**
 * Writes the configuration tables of README.md and docs/deploy.md from the settings table
 * (`npm run generate:docs`). `--check` writes nothing and exits 1 when a table differs from what
 * the settings give (the unit tests check the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DOCS_TABLES, replaceTable } from './settings-docs-renderer.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');

for (const table of DOCS_TABLES) {
  const file = path.join(root, table.file);
  const current = readFileSync(file, 'utf8');
  const rendered = replaceTable(current, table);
  if (current === rendered) continue;
  if (check) {
    console.error(`${table.file}: the ${table.name} table is out of date: run npm run generate:docs`);
    process.exitCode = 1;
  } else {
    writeFileSync(file, rendered);
    console.log(`Wrote the ${table.name} table of ${table.file}`);
  }
}

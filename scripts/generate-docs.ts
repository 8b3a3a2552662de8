/**
 * Writes the generated blocks of the docs (`npm run generate:docs`): the configuration tables of
 * docs/configuration.md from the settings table, the CLI reference of docs/cli.md from the
 * commands' own help, the API reference of docs/construct.md from the construct's declarations, and
 * the fleet cost table of docs/cost.md from the cost model. `--check` writes nothing and exits 1 when a block differs from what its
 * source gives (the unit tests check the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_REFERENCE } from './cli-docs-renderer.ts';
import { CONSTRUCT_REFERENCE } from './construct-docs-renderer.ts';
import { COST_TABLE } from './cost-docs-renderer.ts';
import { DOCS_TABLES, replaceTable } from './settings-docs-renderer.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');

for (const table of [...DOCS_TABLES, CLI_REFERENCE, CONSTRUCT_REFERENCE, COST_TABLE]) {
  const file = path.join(root, table.file);
  const current = readFileSync(file, 'utf8');
  const rendered = replaceTable(current, table);
  if (current === rendered) continue;
  if (check) {
    console.error(`${table.file}: the ${table.name} block is out of date: run npm run generate:docs`);
    process.exitCode = 1;
  } else {
    writeFileSync(file, rendered);
    console.log(`Wrote the ${table.name} block of ${table.file}`);
  }
}

/**
 * Writes `functions/event-schema/event-types.generated.ts` from the event JSON Schema
 * definitions (`npm run generate:types`). `--check` writes nothing and exits 1 when the committed
 * file differs from what the schema gives (the unit tests check the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENT_SCHEMA_DEFINITIONS } from '../functions/event-schema/event-json-schema.ts';
import { renderEventTypes } from './event-types-renderer.ts';

const target = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../functions/event-schema/event-types.generated.ts',
);
const rendered = renderEventTypes(EVENT_SCHEMA_DEFINITIONS);

if (process.argv.includes('--check')) {
  const current = readFileSync(target, 'utf8');
  if (current !== rendered) {
    console.error(`${path.relative(process.cwd(), target)} is out of date: run npm run generate:types`);
    process.exitCode = 1;
  }
} else {
  writeFileSync(target, rendered);
  console.log(`Wrote ${path.relative(process.cwd(), target)}`);
}

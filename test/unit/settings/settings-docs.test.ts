import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DOCS_TABLES, ENVIRONMENT_TABLE, replaceTable } from '../../../scripts/settings-docs-renderer.ts';

const REPO_ROOT = new URL('../../../', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, REPO_ROOT), 'utf8');

describe('the configuration tables of the docs', () => {
  it.each(DOCS_TABLES.map((table) => [`${table.file} (${table.name})`, table] as const))(
    '%s is what the settings table renders (run npm run generate:docs after changing a setting)',
    (_name, table) => {
      const document = read(table.file);

      expect(replaceTable(document, table)).toBe(document);
    },
  );

  it('would catch a default changed by hand in the docs', () => {
    const document = read(ENVIRONMENT_TABLE.file);
    const edited = document.replace('| `POLL_LIMIT` | `100` |', '| `POLL_LIMIT` | `50` |');

    expect(edited).not.toBe(document);
    expect(replaceTable(edited, ENVIRONMENT_TABLE)).toBe(document);
  });
});

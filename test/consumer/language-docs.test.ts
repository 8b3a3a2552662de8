/**
 * The construct's docs in other languages are those of the assembly `npm run package` just built:
 * the quick start of docs/construct.md in Python and Java is jsii-rosetta's translation of the
 * TypeScript above it (rendered again from the tablet and compared), and each API reference page
 * (docs/api/, rendered by jsii-docgen) records the fingerprint of the API it was rendered from,
 * which must be the assembly's. When either fails: `npm run generate:api-docs`, and commit.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { JSII_TABLET } from '../../scripts/build/jsii-assembly.ts';
import {
  apiFingerprint,
  QUICK_START_PAGE,
  REFERENCE_LANGUAGES,
  readTablet,
  recordedFingerprint,
  withQuickStartTranslations,
} from '../../scripts/language-docs-renderer.ts';
import { REPO_ROOT } from '../infra/support/poller-app-fixture.ts';

const read = (file: string): string => readFileSync(path.join(REPO_ROOT, file), 'utf8');

describe("the construct's docs in every language", () => {
  it("show the quick start in Python and Java as jsii-rosetta translates today's TypeScript", () => {
    const page = read(QUICK_START_PAGE);

    expect(withQuickStartTranslations(page, readTablet(JSII_TABLET)), 'run npm run generate:api-docs').toBe(
      page,
    );
    expect(page).toContain('poller = BankingEventsPoller(self, "Poller",');
    expect(page).toContain('BankingEventsPoller.Builder.create(this, "Poller")');
  });

  it.each(REFERENCE_LANGUAGES.map(({ page, title }) => [title, page] as const))(
    'have a %s API reference rendered from the packed assembly',
    (_title, page) => {
      const assembly = JSON.parse(
        execFileSync('tar', ['-xzOf', inject('packageTarball'), 'package/.jsii'], {
          encoding: 'utf8',
          maxBuffer: 64 * 2 ** 20,
        }),
      );

      expect(recordedFingerprint(read(page)), `${page}: run npm run generate:api-docs`).toBe(
        apiFingerprint(assembly),
      );
      expect(read(page)).toContain('BankingEventsPoller');
    },
  );
});

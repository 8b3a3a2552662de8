/**
 * `npm run generate:api-docs`: compiles the construct library with jsii and its examples with
 * jsii-rosetta (as `npm run package` does), then writes the construct's docs in every language
 * (scripts/language-docs-renderer.ts): the Python and Java quick start of docs/construct.md, and
 * docs/api/<language>.md by jsii-docgen. About a minute and a half: run it when the construct's
 * public API or its docs change (the consumer tests say when the pages are stale).
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Documentation, Language } from 'jsii-docgen';
import { REPO_ROOT } from './build/artifacts.ts';
import {
  compileJsiiAssembly,
  extractExamples,
  JSII_ASSEMBLY,
  JSII_PROJECT_DIR,
} from './build/jsii-assembly.ts';
import {
  QUICK_START_PAGE,
  REFERENCE_LANGUAGES,
  readAssembly,
  readTablet,
  referenceHeader,
  withQuickStartTranslations,
} from './language-docs-renderer.ts';

compileJsiiAssembly();
const tablet = readTablet(extractExamples());
const page = path.join(REPO_ROOT, QUICK_START_PAGE);
writeFileSync(page, withQuickStartTranslations(readFileSync(page, 'utf8'), tablet));
console.log(`Wrote the construct:languages block of ${QUICK_START_PAGE}`);

const assembly = readAssembly(JSII_ASSEMBLY);
// jsii-docgen finds the dependencies' assemblies (aws-cdk-lib, constructs) in the project's node_modules.
symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(JSII_PROJECT_DIR, 'node_modules'), 'dir');
const docs = await Documentation.forProject(JSII_PROJECT_DIR);
for (const { docgen, page, title } of REFERENCE_LANGUAGES) {
  const markdown = await docs.toMarkdown({
    language: Language.fromString(docgen),
    readme: false,
    allSubmodules: true,
  });
  const file = path.join(REPO_ROOT, page);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${referenceHeader(assembly, title)}\n${markdown.render()}`);
  console.log(`Wrote ${page}`);
}

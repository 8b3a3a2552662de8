#!/usr/bin/env node
// The `banking-events-poller` command (package.json "bin"): runs the bundle that `npm run build`
// makes from functions/cli/main.ts, shipped in the package; in a clone `npm ci` builds it ("prepare").
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/cli/main.mjs', import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write('banking-events-poller: the CLI is not built: run `npm run build` (npm ci does it)\n');
  process.exit(1);
}
await import(bundle.href);

/**
 * `npm run build`: the handler asset, the construct library and the CLI bundle under dist/ (see
 * scripts/build/artifacts.ts). `construct` builds the first two only (cdk.json runs it before every
 * synth, so a deploy never ships a stale handler); `--declarations` adds the library's .d.ts.
 */
import { parseArgs } from 'node:util';
import { buildCli, buildConstructLibrary, buildHandlerAsset, emitDeclarations } from './build/artifacts.ts';

const { values, positionals } = parseArgs({
  options: { declarations: { type: 'boolean', default: false } },
  allowPositionals: true,
});
const target = positionals[0] ?? 'all';
if (target !== 'all' && target !== 'construct') {
  console.error(`build: unknown target "${target}": use "construct" (handler and library) or nothing (all)`);
  process.exit(2);
}

await Promise.all([buildHandlerAsset(), buildConstructLibrary(), ...(target === 'all' ? [buildCli()] : [])]);
if (values.declarations) emitDeclarations();

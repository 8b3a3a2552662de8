/**
 * `npm run build`: what the package ships, under dist/ (see scripts/build/artifacts.ts). With no
 * argument, every part; or name the parts: `handler` (the poller's and the program seeder's) and `library` (cdk.json builds them before
 * every synth, so a deploy never ships a stale handler), `subscriber` (the kit), `cli`, `types` (the library's
 * declarations, which `npm run typecheck` checks the repository's app against).
 */
import {
  buildCli,
  buildConstructLibrary,
  buildHandlerAsset,
  buildProgramSeederAsset,
  buildSubscriberKit,
  emitDeclarations,
} from './build/artifacts.ts';

const PARTS: Readonly<Record<string, () => void | Promise<void>>> = {
  handler: async () => {
    await Promise.all([buildHandlerAsset(), buildProgramSeederAsset()]);
  },
  library: () => buildConstructLibrary(),
  subscriber: () => buildSubscriberKit(),
  cli: () => buildCli(),
  types: () => emitDeclarations(),
};

const requested = process.argv.slice(2);
const unknown = requested.filter((part) => PARTS[part] === undefined);
if (unknown.length > 0) {
  console.error(`build: unknown part(s) ${unknown.join(', ')}: choose from ${Object.keys(PARTS).join(', ')}`);
  process.exit(2);
}
await Promise.all((requested.length > 0 ? requested : Object.keys(PARTS)).map((part) => PARTS[part]!()));

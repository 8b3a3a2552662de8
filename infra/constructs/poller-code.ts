/**
 * The handler prebuilt into the package. `npm run build` bundles `functions/poller/handler.ts`
 * with `POLLER_BUNDLING` into `dist/assets/poller/` and the package ships that directory, so the
 * construct deploys it as it is: a consumer's synth runs no bundler and needs no Docker.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as lambda from 'aws-cdk-lib/aws-lambda';

/**
 * The prebuilt handler's directory. This module is two levels below the package root both as a
 * source (`infra/constructs/`) and bundled into the library (`dist/lib/`), so one relative path
 * finds it from either.
 */
export const PREBUILT_HANDLER_DIR = fileURLToPath(new URL('../../dist/assets/poller', import.meta.url));

/** The file Lambda loads: `index.handler` is its export `handler`. */
export const PREBUILT_HANDLER = 'index.handler';

/**
 * The prebuilt handler as the function's code.
 *
 * @throws Error naming the missing file and how to get it
 */
export function prebuiltHandlerCode(dir = PREBUILT_HANDLER_DIR): lambda.Code {
  const file = path.join(dir, 'index.mjs');
  if (!existsSync(file)) {
    throw new Error(
      `The prebuilt poller handler is missing (${file}): in a clone of banking-events-poller run ` +
        '`npm run build`; in an app, reinstall the package. Or give the construct an `entry` to bundle a handler yourself.',
    );
  }
  return lambda.Code.fromAsset(dir);
}

/**
 * How the poller's Lambda artifact is built and run: one definition, used by `npm run build` for
 * the handler the package ships (scripts/build/artifacts.ts), by the construct's `NodejsFunction`
 * when given an `entry`, and by the benchmarks, so what is tested and measured is what
 * `cdk deploy` ships.
 */
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';

/** The managed runtime the function runs on. */
export const POLLER_RUNTIME = lambda.Runtime.NODEJS_24_X;

export const POLLER_ARCHITECTURE = lambda.Architecture.ARM_64;

/** Node's options on the function; source maps make stack traces in the logs point at the TypeScript. */
export const POLLER_NODE_OPTIONS = '--enable-source-maps';

/** ESM bundles have no `require`; some dependencies still call it. */
const ESM_REQUIRE_SHIM =
  "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

/** esbuild settings of the function's bundle (local esbuild, never Docker). */
export const POLLER_BUNDLING: nodejs.BundlingOptions = Object.freeze({
  format: nodejs.OutputFormat.ESM,
  target: 'node22',
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_SHIM,
  minify: true,
  // Minified class names would turn PayloadValidationError into "r" in logs and the invocation's errorType.
  keepNames: true,
  sourceMap: true,
  sourcesContent: false,
  // Ship the SDK version the tests ran against rather than whatever the runtime carries.
  bundleAwsSDK: true,
  forceDockerBundling: false,
});

/**
 * Measures the deployed artifact, not the sources: builds the package's handler and synthesizes
 * the app, then runs the bundled handler (`index.mjs` from the cloud assembly) in a fresh Node process against
 * the banking simulator and moto, and reports cold-start time, throughput and peak memory.
 * The numbers behind the function's memory size and timeout (docs/performance.md):
 *
 *   npm run bench:footprint -- [backlog=20000] [budgetSeconds=30]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateEventBusCommand, EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { startSimulator } from '../functions/simulator/banking-simulator.ts';
import { createPollerApp } from '../infra/poller-app.ts';
import { buildConstructLibrary, buildHandlerAsset } from '../scripts/build/artifacts.ts';
import { cdkJsonContext } from '../test/infra/support/poller-app-fixture.ts';
import { startMoto } from '../test/support/moto-server.ts';

interface RunResult {
  readonly scenario: string;
  readonly importMs: number;
  readonly runMs: number;
  readonly published: number;
  readonly eventsPerSecond: number;
  readonly peakRssMiB: number;
  readonly peakHeapMiB: number;
  readonly baselineRssMiB: number;
}

/** Runs in the child: import the bundle, invoke once, sample memory, print one JSON line. */
const CHILD = `
const baseline = process.memoryUsage().rss;
let peakRss = baseline, peakHeap = process.memoryUsage().heapUsed;
const sampler = setInterval(() => {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss); peakHeap = Math.max(peakHeap, m.heapUsed);
}, 10);
const t0 = performance.now();
const { handler } = await import(process.env.BUNDLE);
const importMs = performance.now() - t0;
const budget = Number(process.env.BUDGET_MS);
const deadline = Date.now() + budget;
const context = { awsRequestId: 'measure', functionName: 'measure', getRemainingTimeInMillis: () => deadline - Date.now() };
const t1 = performance.now();
const summary = await handler({ program: 'default', secretId: process.env.SECRET_ID }, context);
const runMs = performance.now() - t1;
clearInterval(sampler);
const m = process.memoryUsage();
peakRss = Math.max(peakRss, m.rss);
process.stderr.write('RESULT ' + JSON.stringify({ importMs, runMs, published: summary.published, peakRss, peakHeap, baseline }) + '\\n');
`;

interface Template {
  readonly Resources: Record<
    string,
    { Type: string; Properties: { Environment?: { Variables?: Record<string, unknown> } } }
  >;
}

/** The literal environment variables of the poller function in the synthesized template. */
function deployedEnvironment(template: Template): Record<string, string> {
  const fn = Object.values(template.Resources).find(
    (resource) =>
      resource.Type === 'AWS::Lambda::Function' && resource.Properties.Environment?.Variables?.EVENT_SOURCE,
  );
  const variables = fn?.Properties.Environment?.Variables ?? {};
  return Object.fromEntries(
    Object.entries(variables).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

function findBundle(assemblyDir: string): string {
  for (const entry of readdirSync(assemblyDir)) {
    const candidate = path.join(assemblyDir, entry, 'index.mjs');
    if (entry.startsWith('asset.') && existsSync(candidate)) return candidate;
  }
  throw new Error(`No bundled index.mjs in ${assemblyDir}`);
}

function runChild(env: NodeJS.ProcessEnv): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('exit', (code) => {
      const line = /^RESULT (.*)$/m.exec(stderr)?.[1];
      if (code === 0 && line !== undefined) resolve(JSON.parse(line) as Record<string, number>);
      else reject(new Error(`handler run exited with ${code}:\n${stderr.slice(-4000)}`));
    });
  });
}

const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

async function main(): Promise<void> {
  const backlog = Number(process.argv[2] ?? 20_000);
  const budgetMs = Number(process.argv[3] ?? 30) * 1000;

  const outdir = mkdtempSync(path.join(tmpdir(), 'poller-measure-'));
  await Promise.all([buildHandlerAsset(), buildConstructLibrary()]);
  const { app } = createPollerApp({ context: cdkJsonContext(), outdir });
  const assembly = app.synth();
  const bundle = findBundle(assembly.directory);
  const functionEnvironment = deployedEnvironment(assembly.stacks[0]!.template as Template);

  const moto = await startMoto();
  const simulator = await startSimulator({ seed: 7, maxPollHoldMs: 20_000 });
  const results: RunResult[] = [];
  try {
    const aws = {
      region: 'us-east-1',
      endpoint: moto.endpoint,
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    };
    const program = simulator.programs[0]!;
    const secret = await new SecretsManagerClient(aws).send(
      new CreateSecretCommand({
        Name: 'measure-credentials',
        SecretString: JSON.stringify({
          base_url: simulator.url,
          client_id: program.clientId,
          client_secret: program.clientSecret,
        }),
      }),
    );
    await new DynamoDBClient(aws).send(
      new CreateTableCommand({
        TableName: 'measure-checkpoints',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    await new EventBridgeClient(aws).send(new CreateEventBusCommand({ Name: 'measure-bus' }));
    // The function's environment as deployed (NODE_OPTIONS included), resources swapped for moto's.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      ...functionEnvironment,
      BUNDLE: bundle,
      BUDGET_MS: String(budgetMs),
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'x',
      AWS_SECRET_ACCESS_KEY: 'x',
      AWS_ENDPOINT_URL: moto.endpoint,
      SECRET_ID: secret.ARN,
      ALLOWED_SECRET_IDS: secret.ARN,
      CHECKPOINT_TABLE: 'measure-checkpoints',
      EVENT_BUS_NAME: 'measure-bus',
    };

    for (const scenario of [`catch-up (${backlog} events backlog)`, 'caught up (long-poll, no new events)']) {
      if (scenario.startsWith('catch-up')) simulator.generate(backlog);
      const run = await runChild(env);
      results.push({
        scenario,
        importMs: Math.round(run.importMs!),
        runMs: Math.round(run.runMs!),
        published: run.published!,
        eventsPerSecond: Math.round((run.published! / run.runMs!) * 1000),
        peakRssMiB: mib(run.peakRss!),
        peakHeapMiB: mib(run.peakHeap!),
        baselineRssMiB: mib(run.baseline!),
      });
    }
  } finally {
    await simulator.close();
    await moto.stop();
    rmSync(outdir, { recursive: true, force: true });
  }
  console.table(results);
  console.log(JSON.stringify({ node: process.version, budgetMs, results }, null, 2));
}

await main();

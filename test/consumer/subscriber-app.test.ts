/**
 * The subscriber kit as a subscribing team gets it: `banking-events-poller/subscriber` from the
 * tarball, in an app that installs the kit's runtime libraries itself (the AWS SDK clients and
 * Powertools it uses), type-checks the "Write a subscriber" handler of docs/subscribers.md against the shipped
 * declarations, and loads the kit from ESM and from CommonJS.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  docsCodeBlock,
  docsCodeFiles,
  exec,
  installedVersion,
  npmInstall,
  temporaryDirectory,
} from '../support/consumer-app.ts';

/** What a subscriber's app brings for the kit (docs/subscribers.md lists them), at the versions tested here. */
const KIT_PEERS = [
  '@aws-lambda-powertools/batch',
  '@aws-lambda-powertools/idempotency',
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/client-s3',
  '@aws-sdk/lib-dynamodb',
  '@types/aws-lambda',
];

/** A transaction as an SQS body from a rule's queue: the EventBridge envelope and the bank's detail. */
const TRANSACTION = {
  version: '0',
  id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
  'detail-type': 'transaction',
  source: 'banking.events',
  account: '123456789012',
  time: '2026-11-24T10:00:00Z',
  region: 'us-east-1',
  resources: [],
  detail: {
    id: '0f3c1b9e-2d4a-4c8e-9b1f-6a2d3e4f5a6b',
    program_id: '792a815a-8e8d-4e17-b712-23c27145e12e',
    sequence_number: 42,
    created_dt: '2026-11-24T10:00:00.000+00:00',
    type: 'transaction',
    data: { transaction_id: 'tx-42', amount: 1250, type: 'card', status: 'COMPLETE' },
  },
};

describe('a subscriber app using banking-events-poller/subscriber', () => {
  const root = temporaryDirectory('consumer-subscriber-');
  const app = path.join(root.dir, 'app');

  beforeAll(async () => {
    mkdirSync(app);
    writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({ name: 'subscriber-consumer', private: true, type: 'module' }, null, 2),
    );
    await npmInstall(app, [
      ...KIT_PEERS.map((name) => `${name}@${installedVersion(name)}`),
      `typescript@${installedVersion('typescript')}`,
      `@types/node@${installedVersion('@types/node')}`,
      inject('packageTarball'),
    ]);
  });
  afterAll(() => root.dispose());

  it('type-checks the handler of docs/subscribers.md against the shipped declarations', async () => {
    // The handler books into `ledger`, the reader's own module: declared here.
    writeFileSync(
      path.join(app, 'ledger-handler.ts'),
      'declare const ledger: { book(entry: { eventId: string; sequence: number; amount?: number; type?: string }): Promise<void> };\n' +
        docsCodeBlock('docs/subscribers.md', 'Write a subscriber'),
    );
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['ledger-handler.ts'],
      }),
    );

    await expect(
      exec(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.'], { cwd: app }),
    ).resolves.toBeDefined();
  });

  it("type-checks the Custom Event Bus handler of docs/subscribers.md, reading the bus's fields", async () => {
    writeFileSync(
      path.join(app, 'custom-bus-handler.ts'),
      'declare const accounts: { apply(data: object, group: string | undefined): Promise<void> };\n' +
        docsCodeBlock('docs/subscribers.md', 'On the Custom Event Bus'),
    );
    writeFileSync(
      path.join(app, 'tsconfig.custom-bus.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['custom-bus-handler.ts'],
      }),
    );

    await expect(
      exec(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.custom-bus.json'], {
        cwd: app,
      }),
    ).resolves.toBeDefined();
  });

  it('type-checks the subscriber of docs/ordered-per-account.md against the shipped declarations', async () => {
    const handler = docsCodeFiles('docs/ordered-per-account.md').get('lambda/account-status-handler.ts');
    expect(handler).toBeDefined();
    writeFileSync(
      path.join(app, 'account-status-handler.ts'),
      'declare const accounts: { setStatus(accountId: string | undefined, status: string | undefined, sequence: number): Promise<void> };\n' +
        handler,
    );
    writeFileSync(
      path.join(app, 'tsconfig.ordered.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['account-status-handler.ts'],
      }),
    );

    await expect(
      exec(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.ordered.json'], {
        cwd: app,
      }),
    ).resolves.toBeDefined();
  });

  it('loads the kit from ESM and from CommonJS, and parses an event with either', async () => {
    const body = JSON.stringify(JSON.stringify(TRANSACTION));
    const esm = await exec(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { parseEvent } from 'banking-events-poller/subscriber';
         const event = parseEvent(${body});
         console.log(JSON.stringify({ kind: event.kind, sequence: event.detail.sequence_number, resolved: import.meta.resolve('banking-events-poller/subscriber') }));`,
      ],
      { cwd: app },
    );
    const cjs = await exec(
      process.execPath,
      [
        '--input-type=commonjs',
        '-e',
        `const { parseEvent } = require('banking-events-poller/subscriber');
         const event = parseEvent(${body});
         console.log(JSON.stringify({ kind: event.kind, sequence: event.detail.sequence_number, resolved: require.resolve('banking-events-poller/subscriber') }));`,
      ],
      { cwd: app },
    );

    const kit = path.join(app, 'node_modules/banking-events-poller/dist/subscriber');
    expect(JSON.parse(esm.stdout)).toEqual({
      kind: 'transaction',
      sequence: 42,
      resolved: `file://${path.join(kit, 'index.js')}`,
    });
    expect(JSON.parse(cjs.stdout)).toEqual({
      kind: 'transaction',
      sequence: 42,
      resolved: path.join(kit, 'index.cjs'),
    });
  });

  it('names the field of a bad event', async () => {
    const bad = JSON.stringify(
      JSON.stringify({ ...TRANSACTION, detail: { ...TRANSACTION.detail, data: { status: 'LOST' } } }),
    );
    const run = exec(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { parseEvent } from 'banking-events-poller/subscriber'; parseEvent(${bad});`,
      ],
      { cwd: app },
    );

    await expect(run).rejects.toThrow(/detail\.data\.status/);
  });
});

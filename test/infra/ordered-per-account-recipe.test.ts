/**
 * The recipe of docs/ordered-per-account.md, run as a reader would: its files (the stack and the
 * subscriber, each a `// <path>` block) are written out as given, type-checked against the
 * construct's and the kit's sources, and the stack synthesized by `tsx` in a process of its own,
 * importing the construct as `banking-events-poller` (the package this repository builds). The
 * template must then deliver each account's status changes in order: a FIFO subscriber grouped
 * by the event group onto a FIFO queue, the function grouping by account, and the recipe's Lambda
 * reading that queue with partial batch responses.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Match, Template } from 'aws-cdk-lib/assertions';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsCodeFiles } from '../support/consumer-app.ts';
import { REPO_ROOT } from './support/poller-app-fixture.ts';

const RECIPE = 'docs/ordered-per-account.md';
/** What the subscriber calls of the reader's own code. */
const READERS_CODE =
  'declare const accounts: { setStatus(accountId: string | undefined, status: string | undefined, sequence: number): Promise<void> };\n';

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;

/** The recipe's files written under `dir`, the subscriber with the reader's code declared. */
function layOut(dir: string, files: ReadonlyMap<string, string>): void {
  for (const [file, code] of files) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), file.startsWith('lambda/') ? READERS_CODE + code : code);
  }
}

/** tsc's diagnostics for `files`, with the package's names mapped to the sources they are built from. */
function typeErrors(dir: string, files: readonly string[]): string[] {
  const config = ts.readConfigFile(path.join(REPO_ROOT, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, REPO_ROOT);
  const program = ts.createProgram(
    files.map((file) => path.join(dir, file)),
    {
      ...options,
      noEmit: true,
      baseUrl: REPO_ROOT,
      paths: {
        'banking-events-poller': ['infra/constructs/index.ts'],
        'banking-events-poller/subscriber': ['functions/subscriber/index.ts'],
      },
    },
  );
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

/** Synthesizes the recipe's stack in its own process (cwd: the recipe's folder), without bundling the Lambda. */
function synthesize(dir: string, stackFile: string): Resources {
  const stackClass = /export class (\w+)/.exec(readFileSync(path.join(dir, stackFile), 'utf8'))?.[1];
  expect(stackClass, `${stackFile} exports no class`).toBeDefined();
  writeFileSync(
    path.join(dir, 'app.ts'),
    `import * as cdk from 'aws-cdk-lib/core';\n` +
      `import { ${stackClass} } from './${stackFile}';\n` +
      // No stack is bundled: NodejsFunction checks its entry and lock file, esbuild does not run.
      `const app = new cdk.App({ outdir: 'cdk.out', context: { 'aws:cdk:bundling-stacks': [] } });\n` +
      `new ${stackClass}(app, 'Recipe');\napp.synth();\n`,
  );
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'), 'app.ts'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const template = JSON.parse(readFileSync(path.join(dir, 'cdk.out/Recipe.template.json'), 'utf8')) as {
    Resources: Resources;
  };
  return template.Resources;
}

describe('the ordered-per-account recipe of docs/ordered-per-account.md', () => {
  const files = docsCodeFiles(RECIPE);
  // Inside the repository, so `banking-events-poller` resolves to this package as it would from an app.
  mkdirSync(path.join(REPO_ROOT, '.scratch'), { recursive: true });
  const dir = mkdtempSync(path.join(REPO_ROOT, '.scratch', 'recipe-'));
  let resources: Resources;
  let template: Template;

  beforeAll(() => {
    layOut(dir, files);
    resources = synthesize(dir, 'lib/accounts-stack.ts');
    template = Template.fromJSON({ Resources: resources });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives a stack and a subscriber', () => {
    expect([...files.keys()]).toEqual(['lib/accounts-stack.ts', 'lambda/account-status-handler.ts']);
  });

  it('type-checks against the construct and the subscriber kit', () => {
    expect(typeErrors(dir, [...files.keys()])).toEqual([]);
  });

  it('publishes to the Custom Event Bus, grouping events by account', () => {
    template.resourceCountIs('AWS::EventsV2::EventBus', 1);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ EVENT_BUS_KIND: 'custom', EVENT_GROUP_BY: 'account' }),
      },
    });
  });

  it('delivers account_status through a FIFO subscriber onto a FIFO queue, grouped by the event group', () => {
    const subscribers = Object.values(resources).filter(
      (resource) => resource.Type === 'AWS::EventsV2::Subscriber',
    );
    const accountStatus = subscribers.find((subscriber) =>
      JSON.stringify(subscriber.Properties?.FilterConfiguration).includes('account_status\\"]'),
    );
    expect(accountStatus?.Properties?.Type).toBe('FIFO');
    const invoke = accountStatus?.Properties?.InvokeConfiguration as {
      TargetArn: { 'Fn::GetAtt': [string, string] };
      SqsParameters?: { MessageGroupId?: string };
    };
    expect(invoke.SqsParameters?.MessageGroupId).toBe('{% $events.SystemMetadata.EventGroupId %}');
    const queue = resources[invoke.TargetArn['Fn::GetAtt'][0]];
    expect(queue?.Properties?.FifoQueue).toBe(true);
  });

  it("reads that queue with the recipe's Lambda, reporting failed records only", () => {
    const mappings = Object.values(resources).filter(
      (resource) => resource.Type === 'AWS::Lambda::EventSourceMapping',
    );
    expect(mappings).toHaveLength(1);
    const source = mappings[0]!.Properties?.EventSourceArn as { 'Fn::GetAtt': [string, string] };
    expect(resources[source['Fn::GetAtt'][0]]?.Properties?.FifoQueue).toBe(true);
    expect(mappings[0]!.Properties?.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });
});

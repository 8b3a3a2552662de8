/**
 * The construct for many programs (issue 35): the programs table, the seeding of the props'
 * programs as the stack's records, one schedule per worker, secrets under the deployment's prefix,
 * per-program alarms only when asked for, and a template whose resources do not grow with the
 * number of programs.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { assignedWorker } from '../../../functions/core/fleet/assignment.ts';
import { loadPollerConfig } from '../../../functions/poller/poller-config.ts';
import { SEED_FILE } from '../../../functions/program-seeder/seed-request.ts';
import {
  AlarmActions,
  BankingEventsPoller,
  type BankingEventsPollerProps,
} from '../../../infra/constructs/index.ts';
import type { ProgramSeeding } from '../../../infra/constructs/program-seeding.ts';
import { cdkJsonContext, logicalIdOf } from '../support/poller-app-fixture.ts';

type Json = Record<string, unknown>;

/** Lag, stall, failed entries, unfilled gaps, lease busy, and since issue 32 sequence jumps and oversize pages. */
const ALARMS_PER_PROGRAM = 7;

const LOANS_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/banking/loans-AbC123';

function newStack(app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } })): Stack {
  return new Stack(app, 'Host', { env: { account: '123456789012', region: 'eu-west-1' } });
}

function named(count: number): { name: string }[] {
  return Array.from({ length: count }, (_, index) => ({ name: `program-${index}` }));
}

function synth(props: BankingEventsPollerProps): {
  stack: Stack;
  poller: BankingEventsPoller;
  template: Template;
} {
  const stack = newStack();
  const poller = new BankingEventsPoller(stack, 'Poller', { alarmActions: AlarmActions.none(), ...props });
  return { stack, poller, template: Template.fromStack(stack) };
}

/** The poller function's environment (strings only). */
function pollerEnvironment(template: Template): Record<string, unknown> {
  const [fn] = Object.values(
    template.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler' } }),
  ) as { Properties: { Environment: { Variables: Record<string, unknown> } } }[];
  return fn!.Properties.Environment.Variables;
}

function seeding(poller: BankingEventsPoller): ProgramSeeding {
  return poller.node.findChild('ProgramSeeding') as ProgramSeeding;
}

/** The seed list the seeding provider deploys beside its code. */
function seedFileOf(stack: Stack, poller: BankingEventsPoller): unknown {
  const provider: lambda.Function = seeding(poller).providerFunction;
  const asset = provider.node.findChild('Code') as s3assets.Asset;
  const outdir = (stack.node.root as App).outdir;
  return JSON.parse(readFileSync(path.join(outdir, asset.assetPath, SEED_FILE), 'utf8'));
}

function statementsOfRole(template: Template, stack: Stack, role: CfnElement): Json[] {
  const roleRef = JSON.stringify([{ Ref: stack.getLogicalId(role) }]);
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify((policy as { Properties: Json }).Properties.Roles) === roleRef)
    .flatMap(
      (policy) =>
        (policy as { Properties: { PolicyDocument: { Statement: Json[] } } }).Properties.PolicyDocument
          .Statement,
    );
}

describe('a flat template', () => {
  it('holds as many resources for 1,000 programs as for 1 and 100', () => {
    const counts = [1, 100, 1000].map((count) => {
      const { template } = synth({
        programs: named(count),
        createProgramSecrets: false,
        perProgramAlarms: false,
        workers: 4,
      });
      return Object.keys(template.toJSON().Resources as Json).length;
    });

    expect(new Set(counts).size, `resources for 1, 100, 1,000 programs: ${counts.join(', ')}`).toBe(1);
  });

  it('grows by a secret and six alarms per program with the defaults of before', () => {
    const count = (programs: number) =>
      Object.keys(
        synth({ programs: named(programs), perProgramAlarms: true }).template.toJSON().Resources as Json,
      ).length;

    expect(count(3) - count(2)).toBe(1 + ALARMS_PER_PROGRAM);
  });

  it('names no program in any resource with createProgramSecrets false and no per-program alarms', () => {
    const { template } = synth({
      programs: [{ name: 'zebra-cards' }, { name: 'zebra-loans' }],
      createProgramSecrets: false,
      perProgramAlarms: false,
    });
    const resources = JSON.stringify(template.toJSON().Resources);

    // The default program is the function's DEFAULT_PROGRAM and SECRET_ID; nothing else names one.
    expect(resources.match(/zebra-loans/g) ?? []).toEqual([]);
    expect(Object.keys(template.toJSON().Resources as Json).filter((id) => /Zebra/.test(id))).toEqual([]);
  });
});

describe('the programs table', () => {
  it('is on demand, recoverable to a point in time, keyed by pk and retained', () => {
    const { template, poller, stack } = synth({});

    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
      },
    });
    expect(logicalIdOf(stack, poller.programsTable)).toMatch(/^PollerProgramsTable/);
    expect(pollerEnvironment(template).PROGRAMS_TABLE).toEqual({
      Ref: logicalIdOf(stack, poller.programsTable),
    });
  });

  it('is scanned by the function, which writes none of it', () => {
    const { template, poller, stack } = synth({});
    const table = { 'Fn::GetAtt': [logicalIdOf(stack, poller.programsTable), 'Arn'] };

    const onTable = statementsOfRole(
      template,
      stack,
      poller.pollerFunction.role!.node.defaultChild as CfnElement,
    ).filter((statement) =>
      JSON.stringify(statement.Resource).includes(logicalIdOf(stack, poller.programsTable)),
    );

    expect(onTable).toEqual([
      { Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:Scan'], Resource: table },
    ]);
  });
});

describe('seeding the props programs as the stack records', () => {
  it('lists each program in the provider asset, a created secret by name with its ARN in the resource', () => {
    const stack = newStack();
    const poller = new BankingEventsPoller(stack, 'Poller', {
      programs: [
        { name: 'cards' },
        {
          name: 'loans',
          existingSecret: secretsmanager.Secret.fromSecretCompleteArn(stack, 'L', LOANS_SECRET_ARN),
        },
      ],
      alarmActions: AlarmActions.none(),
    });
    const template = Template.fromStack(stack);

    expect(seedFileOf(stack, poller)).toEqual({
      format: 1,
      programs: [{ name: 'cards' }, { name: 'loans', secretId: LOANS_SECRET_ARN }],
    });
    template.hasResourceProperties('Custom::ProgramSeeding', {
      ServiceToken: { 'Fn::GetAtt': [logicalIdOf(stack, seeding(poller).providerFunction), 'Arn'] },
      ProgramsTable: { Ref: logicalIdOf(stack, poller.programsTable) },
      SeedDigest: Match.stringLikeRegexp('^[0-9a-f]{64}$'),
      StackSecrets: { cards: { Ref: logicalIdOf(stack, poller.secrets.get('cards')!) } },
    });
  });

  it('names the secrets under the prefix with createProgramSecrets false, and creates none', () => {
    const stack = newStack();
    const poller = new BankingEventsPoller(stack, 'Poller', {
      programs: [{ name: 'cards' }, { name: 'loans' }],
      createProgramSecrets: false,
      alarmActions: AlarmActions.none(),
    });
    const template = Template.fromStack(stack);

    template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    expect(poller.secrets.size).toBe(0);
    expect(seedFileOf(stack, poller)).toEqual({
      format: 1,
      programs: [
        { name: 'cards', secretId: 'banking-events-poller/Host/cards' },
        { name: 'loans', secretId: 'banking-events-poller/Host/loans' },
      ],
    });
    template.hasResourceProperties('Custom::ProgramSeeding', { StackSecrets: {} });
    const environment = pollerEnvironment(template);
    expect(environment).toMatchObject({
      DEFAULT_PROGRAM: 'cards',
      SECRET_ID: 'banking-events-poller/Host/cards',
      SECRETS_PREFIX: 'banking-events-poller/Host/',
    });
    expect(environment).not.toHaveProperty('PROGRAM_SECRETS');
  });

  it('changes the digest, not the resources, when the list changes', () => {
    const digest = (programs: { name: string }[]) => {
      const { template } = synth({ programs, createProgramSecrets: false, perProgramAlarms: false });
      const [resource] = Object.values(template.findResources('Custom::ProgramSeeding')) as {
        Properties: Json;
      }[];
      return resource!.Properties.SeedDigest;
    };

    expect(digest(named(3))).toBe(digest(named(3)));
    expect(digest(named(3))).not.toBe(digest(named(4)));
  });

  it('gives the provider reads and item writes of the programs table, and nothing of the checkpoints', () => {
    const { template, poller, stack } = synth({});
    const role = seeding(poller).providerFunction.role!.node.defaultChild as CfnElement;

    const statements = statementsOfRole(template, stack, role);

    expect(statements).toEqual([
      expect.objectContaining({ Action: ['logs:CreateLogStream', 'logs:PutLogEvents'] }),
      {
        Effect: 'Allow',
        Action: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Scan'],
        Resource: { 'Fn::GetAtt': [logicalIdOf(stack, poller.programsTable), 'Arn'] },
      },
    ]);
  });

  it('runs before any worker: each schedule depends on it', () => {
    const { template, poller, stack } = synth({ workers: 3 });
    const resource = logicalIdOf(stack, seeding(poller).resource);

    expect(Object.values(template.findResources('AWS::Scheduler::Schedule'))).toEqual(
      Array(3).fill(expect.objectContaining({ DependsOn: [resource] })),
    );
  });
});

describe('workers', () => {
  it('makes one schedule per worker sending {"worker": i}, and tells the function their number', () => {
    const { template, poller } = synth({ programs: named(20), workers: 4, maxConcurrentPrograms: 10 });

    template.resourceCountIs('AWS::Scheduler::Schedule', 4);
    for (const worker of [0, 1, 2, 3]) {
      template.hasResourceProperties('AWS::Scheduler::Schedule', {
        Target: Match.objectLike({ Input: JSON.stringify({ worker }) }),
      });
    }
    const environment = pollerEnvironment(template);
    expect(environment).toMatchObject({ WORKER_COUNT: '4', MAX_CONCURRENT_PROGRAMS: '10' });
    // The handler reads them back as the construct wrote them.
    const config = loadPollerConfig({
      ...Object.fromEntries(Object.entries(environment).filter(([, value]) => typeof value === 'string')),
      SECRET_ID: 's',
      CHECKPOINT_TABLE: 't',
      EVENT_BUS_NAME: 'b',
    } as Record<string, string>);
    expect(config).toMatchObject({ workerCount: 4, maxConcurrentPrograms: 10 });
    expect(poller.workerSchedules).toHaveLength(4);
  });

  it("maps each props program to its worker's schedule, as the workers assign them", () => {
    const { poller } = synth({ programs: named(20), workers: 4 });

    for (const { name } of named(20)) {
      expect(poller.schedules.get(name), name).toBe(poller.workerSchedules[assignedWorker(name, 4)]);
    }
  });

  it.each<[string, BankingEventsPollerProps, RegExp]>([
    ['no worker', { workers: 0 }, /workers must be an integer from 1 to 100/],
    ['101 workers', { workers: 101 }, /workers must be an integer from 1 to 100/],
    ['a fraction of a worker', { workers: 1.5 }, /workers must be an integer/],
    [
      'no concurrent program',
      { maxConcurrentPrograms: 0 },
      /maxConcurrentPrograms must be an integer from 1 to 1000/,
    ],
    [
      'fewer reserved executions than workers',
      { workers: 4, reservedConcurrency: 3 },
      /reservedConcurrency must be a whole number of at least 4 \(one run per worker; 8 covers/,
    ],
  ])('refuses %s at synth, naming the prop', (_case, props, message) => {
    expect(() => synth(props)).toThrow(message);
  });
});

describe('secrets under the prefix', () => {
  const prefixArn = (prefix: string) => `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${prefix}*`;

  it('lets the function read the secrets under the prefix derived from the stack, or under the one given', () => {
    for (const [props, prefix] of [
      [{}, 'banking-events-poller/Host/'],
      [{ secretsPrefix: 'payments/pollers/prod/' }, 'payments/pollers/prod/'],
    ] as const) {
      const { template, poller, stack } = synth(props);
      const statements = statementsOfRole(
        template,
        stack,
        poller.pollerFunction.role!.node.defaultChild as CfnElement,
      );

      expect(poller.secretsPrefix).toBe(prefix);
      expect(pollerEnvironment(template).SECRETS_PREFIX).toBe(prefix);
      const read = statements.find((statement) =>
        JSON.stringify(statement.Resource).includes(prefixArn(prefix)),
      );
      expect(read?.Action).toEqual(['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
    }
  });

  it('refuses a prefix that does not end with "/": it would also cover the names that continue it', () => {
    expect(() => synth({ secretsPrefix: 'bep/Prod' })).toThrow(/secretsPrefix must be a secret name path/);
  });

  it('refuses two pollers of a stack under one prefix, and takes two under their own', () => {
    const stack = newStack();
    new BankingEventsPoller(stack, 'One', { alarmActions: AlarmActions.none() });

    expect(() => new BankingEventsPoller(stack, 'Two', { alarmActions: AlarmActions.none() })).toThrow(
      /secretsPrefix banking-events-poller\/Host\/ is already the prefix of another BankingEventsPoller/,
    );
    expect(
      () =>
        new BankingEventsPoller(stack, 'Three', {
          alarmActions: AlarmActions.none(),
          secretsPrefix: 'banking-events-poller/Host-three/',
        }),
    ).not.toThrow();
  });

  it('leaves the prefix to the next poller when one is refused for another prop', () => {
    const stack = newStack();

    expect(
      () =>
        new BankingEventsPoller(stack, 'Refused', {
          alarmActions: AlarmActions.none(),
          eventBusKind: 'custom',
          routes: { transaction: { targets: () => [] } },
        }),
    ).toThrow(/the custom bus has no rules/);
    expect(
      () => new BankingEventsPoller(stack, 'Poller', { alarmActions: AlarmActions.none() }),
    ).not.toThrow();
  });
});

describe('per-program alarms', () => {
  const programAlarms = (template: Template) =>
    Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter((alarm) =>
      JSON.stringify(alarm).includes('"Name":"Program"'),
    ).length;

  // Seven each: lag, stall, rejected entries, sequence gaps, sequence jumps, lease busy, oversize pages.
  it('are on by default up to 5 programs, as before, and off above', () => {
    expect(programAlarms(synth({ programs: named(5) }).template)).toBe(5 * ALARMS_PER_PROGRAM);
    expect(programAlarms(synth({ programs: named(6) }).template)).toBe(0);
  });

  it('follow perProgramAlarms when it is given', () => {
    expect(programAlarms(synth({ programs: named(6), perProgramAlarms: true }).template)).toBe(
      6 * ALARMS_PER_PROGRAM,
    );
    expect(programAlarms(synth({ programs: named(2), perProgramAlarms: false }).template)).toBe(0);
  });
});

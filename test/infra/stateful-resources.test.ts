/**
 * Upgrade safety: deploying a new release over a stack must never replace what holds state (the
 * checkpoint table, the secrets, the bus, archive and schema registry, the claim-check bucket,
 * every queue and DLQ, the log group, the alarm topic). Each configuration recorded in
 * stateful-resources.json is synthesized and compared with what deployed stacks have.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, synthPollerApp } from './support/poller-app-fixture.ts';
import { replacementPropertiesOf } from './support/registry-schema.ts';
import {
  constructPaths,
  STATEFUL_TYPES,
  type StatefulResources,
  statefulResourcesOf,
  upgradeProblems,
} from './support/stateful-resources.ts';

interface RecordedConfiguration {
  readonly name: string;
  readonly context: Readonly<Record<string, unknown>>;
  readonly resources: StatefulResources;
}

const RECORD = JSON.parse(
  readFileSync(path.join(REPO_ROOT, 'test/infra/stateful-resources.json'), 'utf8'),
) as {
  configurations: RecordedConfiguration[];
};

const HOW_TO_PROCEED =
  'An upgrade must not replace a stateful resource. Keep the construct ids and the properties above as ' +
  'they were. If the replacement is intended, it is a major release: write the migration (how to keep ' +
  'or move the data) in CHANGELOG.md, then record the new state with `npx tsx scripts/record-stateful-resources.ts`.';

function currentStatefulResources(context: Readonly<Record<string, unknown>>): StatefulResources {
  const synth = synthPollerApp(context);
  try {
    const template = synth.template.toJSON() as Parameters<typeof statefulResourcesOf>[0];
    return statefulResourcesOf(template, constructPaths(synth.stack));
  } finally {
    synth.dispose();
  }
}

describe('an upgrade replaces no stateful resource', () => {
  it.each(RECORD.configurations.map((configuration) => [configuration.name, configuration] as const))(
    'configuration %s keeps the recorded logical ids and replacement properties',
    (_name, configuration) => {
      const current = currentStatefulResources(configuration.context);

      expect(upgradeProblems(configuration.resources, current), HOW_TO_PROCEED).toEqual([]);
    },
  );

  it('records the stateful resources the issue names, in every configuration', () => {
    const everywhere = [
      'AWS::DynamoDB::Table',
      'AWS::EventSchemas::Registry',
      'AWS::Lambda::Function',
      'AWS::Logs::LogGroup',
      'AWS::S3::Bucket',
      'AWS::SNS::Topic',
      'AWS::SQS::Queue',
      'AWS::SecretsManager::Secret',
    ];
    for (const configuration of RECORD.configurations) {
      const types = new Set(Object.values(configuration.resources).map((resource) => resource.type));
      const bus =
        configuration.context.eventBusKind === 'custom'
          ? ['AWS::EventsV2::EventBus', 'AWS::EventsV2::Subscriber']
          : ['AWS::Events::Archive', 'AWS::Events::EventBus'];
      // Without created secrets the programs' secrets are outside the stack (under its secrets prefix).
      const expected = [...everywhere, ...bus].filter(
        (type) =>
          type !== 'AWS::SecretsManager::Secret' || configuration.context.createProgramSecrets !== false,
      );
      expect([...types].sort(), configuration.name).toEqual(expected.sort());
    }
  });

  it('records the programs table in every configuration, retained', () => {
    for (const configuration of RECORD.configurations) {
      const tables = Object.values(configuration.resources).filter(
        (resource) => resource.path === 'Poller/ProgramsTable',
      );
      expect(tables, configuration.name).toEqual([
        expect.objectContaining({ type: 'AWS::DynamoDB::Table', deletionPolicy: 'Retain' }),
      ]);
    }
  });

  it('records the custom bus, every subscriber and the FIFO queues of an ordered route', () => {
    const custom = RECORD.configurations.find(({ context }) => context.eventBusKind === 'custom')!;
    const byPath = (type: string) =>
      Object.values(custom.resources)
        .filter((resource) => resource.type === type)
        .map((resource) => resource.path)
        .sort();

    expect(byPath('AWS::EventsV2::EventBus')).toEqual(['Poller/CustomEventBus']);
    expect(byPath('AWS::EventsV2::Subscriber')).toEqual([
      'Poller/Routing/Quarantine/Subscriber',
      'Poller/Routing/RouteAccountStatus/Subscriber',
      'Poller/Routing/RouteTransaction/Subscriber',
      'Poller/Routing/Unrouted/Subscriber',
    ]);
    const fifo = Object.values(custom.resources).filter((resource) => resource.properties.FifoQueue === true);
    expect(fifo.map((resource) => resource.path).sort()).toEqual([
      'Poller/Routing/RouteAccountStatus/FifoDeadLetterQueue',
      'Poller/Routing/RouteAccountStatus/FifoQueue',
    ]);
  });

  it.each(['AWS::EventsV2::EventBus', 'AWS::EventsV2::Subscriber'])(
    'watches every property of %s whose change replaces it, per its registry schema',
    (type) => {
      expect([...STATEFUL_TYPES[type]!.replacementProperties].sort()).toEqual(
        replacementPropertiesOf(type).sort(),
      );
    },
  );
});

describe('upgradeProblems', () => {
  const table = {
    type: 'AWS::DynamoDB::Table',
    path: 'Poller/CheckpointTable',
    properties: {
      TableName: null,
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      LocalSecondaryIndexes: null,
      ImportSourceSpecification: null,
    },
    deletionPolicy: 'Retain',
  };
  const queue = {
    type: 'AWS::SQS::Queue',
    path: 'Poller/Routing/UnroutedQueue',
    properties: { QueueName: null, FifoQueue: null },
    deletionPolicy: 'Delete',
  };
  const recorded: StatefulResources = { PollerCheckpointTable139320BC: table, PollerUnroutedQueueA1: queue };

  it('finds nothing when nothing changed', () => {
    expect(upgradeProblems(recorded, structuredClone(recorded))).toEqual([]);
  });

  it('names a logical id that changed, with the resource that would take its place', () => {
    const renamed = { ...table, path: 'Poller/Checkpoints' };
    const current = { PollerCheckpointsB00C1E8A: renamed, PollerUnroutedQueueA1: queue };

    expect(upgradeProblems(recorded, current)).toEqual([
      'PollerCheckpointTable139320BC (AWS::DynamoDB::Table at Poller/CheckpointTable) is gone: ' +
        "CloudFormation would delete it and lose every program's checkpoint and lease: the poller would " +
        'publish each feed again from its start (new in its place? PollerCheckpointsB00C1E8A at Poller/Checkpoints)',
      'PollerCheckpointsB00C1E8A (AWS::DynamoDB::Table at Poller/Checkpoints) is a stateful resource the ' +
        'record does not list: record it so that later releases keep it',
    ]);
  });

  it('names a property that forces a replacement, a name set where there was none included', () => {
    const current = {
      PollerCheckpointTable139320BC: {
        ...table,
        properties: { ...table.properties, TableName: 'checkpoints' },
      },
      PollerUnroutedQueueA1: { ...queue, properties: { QueueName: null, FifoQueue: true } },
    };

    const problems = upgradeProblems(recorded, current);

    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      /^PollerCheckpointTable139320BC .*TableName changed from null to "checkpoints"/,
    );
    expect(problems[1]).toMatch(
      /^PollerUnroutedQueueA1 .*FifoQueue changed from null to true.*messages waiting/,
    );
  });

  it('names a removed resource, an unrecorded one and a Retain policy dropped', () => {
    const current = {
      PollerCheckpointTable139320BC: { ...table, deletionPolicy: 'Delete' },
      Other: { ...queue, path: 'Elsewhere', type: 'AWS::SQS::Queue' },
    };

    expect(upgradeProblems(recorded, current)).toEqual([
      expect.stringMatching(/^PollerCheckpointTable139320BC .*DeletionPolicy changed from Retain to Delete/),
      expect.stringMatching(/^PollerUnroutedQueueA1 .* is gone: CloudFormation would delete it/),
      expect.stringMatching(/^Other .* is a stateful resource the record does not list/),
    ]);
  });
});

/**
 * Routing proven by a real rule engine: the rules' event patterns and targets are read from the
 * synthesized template, recreated in moto's EventBridge with a queue per target, and sample
 * events of every type (plus one nobody routes, and one from another source) are published.
 */
import {
  CreateEventBusCommand,
  PutEventsCommand,
  PutRuleCommand,
  PutTargetsCommand,
} from '@aws-sdk/client-eventbridge';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type DeliveredEvent, type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { createQueue } from '../../support/sqs-queues.ts';
import { logicalIdOf, type SynthesizedPollerApp, synthPollerApp } from '../support/poller-app-fixture.ts';

const SOURCE = 'banking.events';
const EVENTS_PER_TYPE = 3;
const UNKNOWN_TYPE = 'card_limit_changed';

interface TemplateRule {
  readonly Properties: {
    readonly EventPattern: unknown;
    readonly Targets: readonly {
      readonly Id: string;
      readonly Arn: { readonly 'Fn::GetAtt': [string, string] };
    }[];
  };
}

let aws: MotoEnvironment;
let synth: SynthesizedPollerApp;
/** Template logical id of a queue → what moto delivered to it. */
const delivered = new Map<string, DeliveredEvent[]>();

/** A banking event as the handler publishes it (`Detail` of the PutEvents entry). */
function detail(type: string, sequence: number): string {
  return JSON.stringify({
    id: `evt-${type}-${sequence}`,
    program_id: 'default',
    sequence_number: sequence,
    created_dt: '2026-01-01T00:00:00Z',
    type,
    data: { sample: true },
  });
}

beforeAll(async () => {
  aws = useMotoEnvironment(inject('motoEndpoint'));
  synth = synthPollerApp();
  const busName = aws.uniqueName('routing');
  await aws.eventBridge.send(new CreateEventBusCommand({ Name: busName }));

  const queueUrls = new Map<string, string>();
  const rules = synth.template.findResources('AWS::Events::Rule') as Record<string, TemplateRule>;
  for (const [ruleId, rule] of Object.entries(rules)) {
    const ruleName = aws.uniqueName('rule');
    await aws.eventBridge.send(
      new PutRuleCommand({
        Name: ruleName,
        EventBusName: busName,
        EventPattern: JSON.stringify(rule.Properties.EventPattern),
      }),
    );
    for (const target of rule.Properties.Targets) {
      const [queueId] = target.Arn['Fn::GetAtt'];
      const queue = await createQueue(aws.sqs, aws.uniqueName('q'));
      queueUrls.set(queueId, queue.url);
      await aws.eventBridge.send(
        new PutTargetsCommand({
          Rule: ruleName,
          EventBusName: busName,
          Targets: [{ Id: `${ruleId}-${target.Id}`.slice(0, 64), Arn: queue.arn }],
        }),
      );
    }
  }

  const entries = ['account_status', 'transaction', 'invalid_event', UNKNOWN_TYPE].flatMap((type) =>
    Array.from({ length: EVENTS_PER_TYPE }, (_, index) => ({
      EventBusName: busName,
      Source: SOURCE,
      DetailType: type,
      Detail: detail(type, index + 1),
    })),
  );
  // Another publisher on a shared bus: no rule of ours may take it.
  entries.push({
    EventBusName: busName,
    Source: 'payments.other',
    DetailType: 'transaction',
    Detail: detail('transaction', 99),
  });
  for (let start = 0; start < entries.length; start += 10) {
    const result = await aws.eventBridge.send(
      new PutEventsCommand({ Entries: entries.slice(start, start + 10) }),
    );
    expect(result.FailedEntryCount).toBe(0);
  }

  for (const [queueId, queueUrl] of queueUrls) delivered.set(queueId, await aws.drainQueue(queueUrl));
});

afterAll(() => {
  aws?.restore();
  synth?.dispose();
});

/** The detail-types that reached the queue of this route, as published. */
function typesReaching(routeName: string): string[] {
  const route = synth.stack.poller.routing!.routes.find((candidate) => candidate.name === routeName)!;
  const events = delivered.get(logicalIdOf(synth.stack, route.queue!)) ?? [];
  return events.map((event) => event['detail-type']);
}

describe('routing on a real rule engine (moto)', () => {
  it('targets a queue from every rule in the template', () => {
    expect(delivered.size).toBe(4);
  });

  it.each(['account_status', 'transaction'])(
    'delivers every %s event, and only those, to its queue',
    (type) => {
      expect(typesReaching(type)).toEqual(Array(EVENTS_PER_TYPE).fill(type));
    },
  );

  it('delivers events that failed validation to the quarantine queue, not to the catch-all', () => {
    expect(typesReaching('invalid_event')).toEqual(Array(EVENTS_PER_TYPE).fill('invalid_event'));
  });

  it('delivers a type no route names to the catch-all queue', () => {
    expect(typesReaching('unrouted')).toEqual(Array(EVENTS_PER_TYPE).fill(UNKNOWN_TYPE));
  });

  it('delivers the event intact, source and detail as published', () => {
    const route = synth.stack.poller.routing!.routes.find((candidate) => candidate.name === 'transaction')!;
    const [first] = delivered.get(logicalIdOf(synth.stack, route.queue!)) ?? [];

    expect(first?.source).toBe(SOURCE);
    expect(first?.detail).toMatchObject({
      type: 'transaction',
      sequence_number: expect.any(Number),
      program_id: 'default',
    });
  });

  it('takes nothing from another source on the same bus', () => {
    const all = [...delivered.values()].flat();

    expect(all).toHaveLength(4 * EVENTS_PER_TYPE);
    expect(all.every((event) => event.source === SOURCE)).toBe(true);
  });
});

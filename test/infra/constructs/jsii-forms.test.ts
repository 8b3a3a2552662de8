/**
 * The forms Python, Java, .NET and Go users give and read (the jsii assembly's) do what the
 * TypeScript forms do: `routeTargets` as `targets`, the enums as the strings, the plain-object
 * members as the `Map` members, the static helpers as the module's functions. The kernel test
 * (test/consumer/construct-through-jsii-kernel.test.ts) drives them from outside; this checks
 * them against the TypeScript forms, one by one.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import {
  BankingEventsPoller,
  type BankingEventsPollerProps,
  CustomBusRouting,
  EVENT_GROUP_MESSAGE_GROUP_ID,
  EventBusKind,
  EventGroupBy,
  EventSchemas,
  eventJsonSchema,
  FeedMode,
  type IRouteTargets,
  POLLER_SERVICE_NAME,
  PollerMetrics,
  type RouteTargetOptions,
  StartPosition,
  StreamRecovery,
  schemaName,
} from '../../../infra/constructs/index.ts';
import { cdkJsonContext } from '../support/poller-app-fixture.ts';

function newStack(): Stack {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  return new Stack(app, 'Host', { env: { account: '123456789012', region: 'eu-west-1' } });
}

function consumer(stack: Stack): lambda.IFunction {
  return lambda.Function.fromFunctionArn(
    stack,
    'Consumer',
    'arn:aws:lambda:eu-west-1:123456789012:function:c',
  );
}

function templateOf(props: (stack: Stack) => BankingEventsPollerProps): Record<string, unknown> {
  const stack = newStack();
  new BankingEventsPoller(stack, 'Poller', props(stack));
  return Template.fromStack(stack).toJSON();
}

/** An `IRouteTargets` as a Python or Java class implements it: an object with `bind`. */
class LambdaRouteTargets implements IRouteTargets {
  constructor(private readonly fn: lambda.IFunction) {}

  bind(options: RouteTargetOptions): events.IRuleTarget[] {
    return [new targets.LambdaFunction(this.fn, options)];
  }
}

describe('routeTargets', () => {
  it('builds the rule targets that targets builds', () => {
    const withFunction = templateOf((stack) => ({
      routes: {
        transaction: { targets: (options) => [new targets.LambdaFunction(consumer(stack), options)] },
      },
    }));
    const withObject = templateOf((stack) => ({
      routes: { transaction: { routeTargets: new LambdaRouteTargets(consumer(stack)) } },
    }));

    expect(withObject).toEqual(withFunction);
    expect(JSON.stringify(withObject)).toContain('arn:aws:lambda:eu-west-1:123456789012:function:c');
  });

  it('is refused beside targets, and on the custom bus', () => {
    const stack = newStack();
    const routeTargets = new LambdaRouteTargets(consumer(stack));
    const both = { targets: () => [], routeTargets };

    expect(() => new BankingEventsPoller(stack, 'Both', { routes: { transaction: both } })).toThrow(
      /Route "transaction": targets and routeTargets both build the rule's targets; give one of them/,
    );
    expect(
      () =>
        new BankingEventsPoller(stack, 'Custom', {
          eventBusKind: 'custom',
          routes: { transaction: { routeTargets } },
        }),
    ).toThrow(/Route "transaction": targets builds rule targets, and the custom bus has no rules/);
  });
});

describe('the enums', () => {
  it('give the template the strings give', () => {
    const strings = templateOf(() => ({
      feedMode: 'stream',
      streamRecovery: 'lookup',
      startPosition: 'latest',
      eventBusKind: 'custom',
      eventGroupBy: 'account',
    }));
    const enums = templateOf(() => ({
      feedMode: FeedMode.STREAM,
      streamRecovery: StreamRecovery.LOOKUP,
      startPosition: StartPosition.LATEST,
      eventBusKind: EventBusKind.CUSTOM,
      eventGroupBy: EventGroupBy.ACCOUNT,
    }));

    expect(enums).toEqual(strings);
    expect(enums).not.toEqual(templateOf(() => ({})));
  });
});

describe('the plain-object members', () => {
  it('hold what the Map members hold, frozen', () => {
    const stack = newStack();
    const poller = new BankingEventsPoller(stack, 'Poller', {
      programs: [{ name: 'cards' }, { name: 'loans' }],
      eventBusKind: 'custom',
    });
    const pairs: [ReadonlyMap<string, unknown>, Readonly<Record<string, unknown>>][] = [
      [poller.secrets, poller.secretsByProgram],
      [poller.schedules, poller.schedulesByProgram],
      [poller.alarms.lagAlarms, poller.alarms.lagAlarmsByProgram],
      [poller.alarms.stallAlarms, poller.alarms.stallAlarmsByProgram],
      [poller.alarms.failedEntriesAlarms, poller.alarms.failedEntriesAlarmsByProgram],
      [poller.alarms.sequenceGapsAlarms, poller.alarms.sequenceGapsAlarmsByProgram],
      [poller.alarms.leaseBusyAlarms, poller.alarms.leaseBusyAlarmsByProgram],
      [poller.alarms.orderBrokenAlarms, poller.alarms.orderBrokenAlarmsByProgram],
      [poller.alarms.sequenceJumpsAlarms, poller.alarms.sequenceJumpsAlarmsByProgram],
      [poller.alarms.deadLetterAlarms, poller.alarms.deadLetterAlarmsByRoute],
      [poller.schemas.schemas, poller.schemas.schemasByType],
    ];

    for (const [map, record] of pairs) {
      expect(Object.entries(record)).toEqual([...map.entries()]);
      expect(Object.isFrozen(record)).toBe(true);
    }
    expect(Object.keys(poller.secretsByProgram)).toEqual(['cards', 'loans']);
    expect(Object.keys(poller.alarms.deadLetterAlarmsByRoute)).toEqual([
      'account_status',
      'transaction',
      'invalid_event',
      'unrouted',
    ]);
  });
});

describe('the static helpers', () => {
  it('are the module exports', () => {
    expect(CustomBusRouting.EVENT_GROUP_MESSAGE_GROUP_ID).toBe(EVENT_GROUP_MESSAGE_GROUP_ID);
    expect(PollerMetrics.SERVICE_NAME).toBe(POLLER_SERVICE_NAME);
    expect(EventSchemas.schemaName('banking.events', 'account_status')).toBe(
      schemaName('banking.events', 'account_status'),
    );
    expect(EventSchemas.jsonSchema('banking.events', 'transaction')).toEqual(
      eventJsonSchema('banking.events', 'transaction'),
    );
  });
});

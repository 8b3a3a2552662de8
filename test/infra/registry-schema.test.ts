/**
 * CloudFormation validation of the custom bus's resources where cfn-lint cannot (it does not know
 * `AWS::EventsV2::*`): CDK's own property validation at synth, and the check against the types'
 * registry schemas (`support/registry-schema.ts`), shown to catch what each is for.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as eventsv2 from 'aws-cdk-lib/aws-eventsv2';
import * as kms from 'aws-cdk-lib/aws-kms';
import { beforeAll, describe, expect, it } from 'vitest';
import { BankingEventsPoller } from '../../infra/constructs/index.ts';
import { registrySchemaProblems, SPEC_GAPS, specResource } from './support/registry-schema.ts';

type TemplateJson = { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };

function customBusTemplate(): TemplateJson {
  const stack = new Stack(new App(), 'Custom');
  new BankingEventsPoller(stack, 'Poller', {
    eventBusKind: 'custom',
    encryptionKey: new kms.Key(stack, 'Key', { enableKeyRotation: true }),
    routes: { account_status: { ordered: true }, transaction: {} },
  });
  return Template.fromStack(stack).toJSON() as TemplateJson;
}

let template: TemplateJson;
beforeAll(() => {
  template = customBusTemplate();
});

describe('the registry-schema check', () => {
  it('finds the synthesized custom bus and its subscribers conform', () => {
    const types = Object.values(template.Resources)
      .map((resource) => resource.Type)
      .filter((type) => type.startsWith('AWS::EventsV2::'));

    expect(types.sort()).toEqual([
      'AWS::EventsV2::EventBus',
      'AWS::EventsV2::ResourcePolicy',
      ...Array<string>(4).fill('AWS::EventsV2::Subscriber'),
    ]);
    expect(registrySchemaProblems(template, 'AWS::EventsV2::')).toEqual([]);
  });

  it('catches a property renamed in the synthesized template, however deep', () => {
    const broken = structuredClone(template);
    const [busId, bus] = Object.entries(broken.Resources).find(
      ([, resource]) => resource.Type === 'AWS::EventsV2::EventBus',
    )!;
    bus.Properties.StorageConfiguration = { RetentionDays: 14 };

    expect(registrySchemaProblems(broken, 'AWS::EventsV2::')).toEqual([
      `${busId}.StorageConfiguration.RetentionDays: StorageConfiguration has no property RetentionDays`,
    ]);
  });

  it('catches an unknown property, a missing required one, a wrong type and a value outside the enum', () => {
    const bad = {
      Resources: {
        Bad: {
          Type: 'AWS::EventsV2::Subscriber',
          Properties: {
            Name: 'bad',
            EventBusArn: { 'Fn::GetAtt': ['Bus', 'EventBusArn'] },
            Type: 'ORDERED',
            RetryPolicy: { MaxRetryAttempts: 'many' },
            FilterConfiguration: { Filters: [{ Pattern: '{}' }] },
            DeadLetterQueue: { Arn: 'arn:aws:sqs:eu-west-1:123456789012:dlq' },
            InvokeConfiguration: { TargetArn: 'arn:aws:sqs:eu-west-1:123456789012:q', SqsParameter: {} },
          },
        },
      },
    };

    expect(registrySchemaProblems(bad, 'AWS::EventsV2::')).toEqual([
      'Bad.Type: "ORDERED" is not one of FIFO, UNORDERED',
      'Bad.RetryPolicy.MaxRetryAttempts: expected an integer, got "many"',
      'Bad.FilterConfiguration.Filters[0]: Filter requires Scope',
      'Bad.DeadLetterQueue: Subscriber has no property DeadLetterQueue',
      'Bad.InvokeConfiguration.SqsParameter: InvokeConfiguration has no property SqsParameter',
      'Bad.InvokeConfiguration: InvokeConfiguration requires RoleArn',
    ]);
    const { InvokeConfiguration: _left, ...without } = bad.Resources.Bad.Properties;

    expect(
      registrySchemaProblems(
        { Resources: { Bad: { ...bad.Resources.Bad, Properties: without } } },
        'AWS::EventsV2::',
      ),
    ).toContain('Bad: Subscriber requires InvokeConfiguration');
  });

  it('fills only what the spec drops, and is told when the spec has it (then SPEC_GAPS goes)', () => {
    for (const [type, properties] of Object.entries(SPEC_GAPS)) {
      const spec = specResource(type)!;
      for (const name of Object.keys(properties))
        expect(spec.properties[name], `${type} ${name}`).toBeUndefined();
      // The spec knows the property is there: it names a part of it among the replacement properties.
      expect(spec.additionalReplacementProperties?.map((path) => path[0])).toContain('InvokeConfiguration');
    }
  });

  it('names a type the schemas do not know', () => {
    const unknown = { Resources: { X: { Type: 'AWS::EventsV2::Nothing', Properties: {} } } };

    expect(registrySchemaProblems(unknown, 'AWS::EventsV2::')).toEqual([
      'X: no registry schema for AWS::EventsV2::Nothing',
    ]);
  });
});

describe("CDK's own property validation at synth", () => {
  function subscriber(props: Partial<eventsv2.CfnSubscriberProps>): Stack {
    const stack = new Stack(new App(), 'Subscriber');
    new eventsv2.CfnSubscriber(stack, 'Subscriber', {
      name: 'subscriber',
      eventBusArn: 'arn:aws:events:eu-west-1:123456789012:event-busv2/bus/abcdefghijklmnopqrstuvwxy',
      invokeConfiguration: {
        targetArn: 'arn:aws:sqs:eu-west-1:123456789012:queue',
        roleArn: 'arn:aws:iam::123456789012:role/delivery',
      },
      ...props,
    });
    return stack;
  }

  it('refuses a value of the wrong type', () => {
    const stack = subscriber({ retryPolicy: { maxRetryAttempts: 'many' as unknown as number } });

    expect(() => Template.fromStack(stack)).toThrow(
      /Supplied properties not correct for "CfnSubscriberProps"[\s\S]*maxRetryAttempts: "many" should be a number/,
    );
  });

  it('lets a value outside the enum through, which the registry-schema check catches', () => {
    const stack = subscriber({ type: 'ORDERED' });
    const synthesized = Template.fromStack(stack).toJSON() as TemplateJson;

    expect(registrySchemaProblems(synthesized, 'AWS::EventsV2::')).toEqual([
      'Subscriber.Type: "ORDERED" is not one of FIFO, UNORDERED',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import {
  compileParameter,
  UnsupportedExpressionError,
} from '../../../support/custom-bus/target-expressions.ts';

const events = {
  Data: { detail: { account_id: 'acc-1', amount: 12 } },
  Metadata: {},
  SystemMetadata: { EventGroupId: 'program-a', 'aws:EventId': 'evt-id' },
};

describe('target parameter expressions in the stand-in', () => {
  it('passes a literal through', () => {
    expect(compileParameter('fixed-group', 'MessageGroupId')(events)).toBe('fixed-group');
  });

  it.each([
    ['{% $events.SystemMetadata.EventGroupId %}', 'program-a'],
    ['{% $events.SystemMetadata.`aws:EventId` %}', 'evt-id'],
    ['{%$events.SystemMetadata."aws:EventId"%}', 'evt-id'],
    ['{% $events.Data.detail.account_id %}', 'acc-1'],
    ['{% $events.Data.detail.amount %}', '12'],
  ])('evaluates the field path %s', (expression, expected) => {
    expect(compileParameter(expression, 'MessageGroupId')(events)).toBe(expected);
  });

  it('resolves to nothing where the path leads nowhere (a delivery-time failure)', () => {
    expect(
      compileParameter('{% $events.SystemMetadata.`aws:EventGroupId` %}', 'MessageGroupId')(events),
    ).toBeUndefined();
    expect(compileParameter('{% $events.Data.detail %}', 'MessageGroupId')(events)).toBeUndefined();
  });

  it.each([
    '{% $uuid() %}',
    '{% $events.Data.a & "-" & $events.Data.b %}',
    '{% $events.Data[0] %}',
    'prefix-{% $events.Data.a %}',
  ])('refuses what it cannot evaluate: %s', (expression) => {
    expect(() => compileParameter(expression, 'MessageGroupId')).toThrow(UnsupportedExpressionError);
  });
});

import { describe, expect, it } from 'vitest';
import { isCustomBusArn } from '../../../functions/cli/custom-bus-operations.ts';

describe('isCustomBusArn', () => {
  it('tells a Custom Event Bus ARN from a classic bus name or ARN', () => {
    expect(
      isCustomBusArn(
        'arn:aws:events:eu-west-1:123456789012:event-busv2/banking-events/0123456789abcdefghijklmno',
      ),
    ).toBe(true);
    expect(
      isCustomBusArn(
        'arn:aws-cn:events:cn-north-1:123456789012:event-busv2/b.x_y-z/0123456789abcdefghijklmno',
      ),
    ).toBe(true);
    expect(isCustomBusArn('arn:aws:events:eu-west-1:123456789012:event-bus/banking-events')).toBe(false);
    expect(isCustomBusArn('banking-events')).toBe(false);
    expect(isCustomBusArn('arn:aws:events:eu-west-1:123456789012:event-busv2/banking-events')).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import {
  ProgramSecretScope,
  programSecretName,
  SECRETS_PREFIX_PATTERN,
} from '../../../../functions/adapters/aws/program-secret-scope.ts';
import { ProgramSecretRefusedError } from '../../../../functions/core/errors.ts';

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:';
const scope = new ProgramSecretScope({
  prefix: 'banking-events-poller/Prod/',
  stackSecrets: [`${ARN}BankingEventsPollerSecret-AbCdEf`, 'legacy-loans'],
  region: 'eu-west-1',
});

describe('ProgramSecretScope', () => {
  it.each([
    ['a name under the prefix', 'banking-events-poller/Prod/cards'],
    ['an ARN of a name under the prefix', `${ARN}banking-events-poller/Prod/cards-Xy12Zq`],
    ["one of the stack's secrets, by ARN", `${ARN}BankingEventsPollerSecret-AbCdEf`],
    ["one of the stack's secrets, by name", 'legacy-loans'],
  ])('takes %s', (_name, secretId) => {
    expect(scope.includes(secretId)).toBe(true);
    expect(scope.check('cards', secretId)).toBe(secretId);
  });

  it.each([
    ["another deployment's prefix that shares the start", 'banking-events-poller/Production/cards'],
    ['a name elsewhere', 'other-team/cards'],
    ['an ARN of a name elsewhere', `${ARN}other-team/cards-Xy12Zq`],
    [
      'an ARN of another region',
      'arn:aws:secretsmanager:us-east-1:123456789012:secret:banking-events-poller/Prod/cards-Xy12Zq',
    ],
  ])('refuses %s, naming the program and not the secret', (_name, secretId) => {
    expect(scope.includes(secretId)).toBe(false);
    expect(() => scope.check('cards', secretId)).toThrow(ProgramSecretRefusedError);
    try {
      scope.check('cards', secretId);
    } catch (error) {
      expect((error as ProgramSecretRefusedError).context).toMatchObject({ program: 'cards' });
      expect((error as Error).message).not.toContain(secretId);
    }
  });

  it('refuses the prefix alone: it names no program', () => {
    expect(scope.includes('banking-events-poller/Prod/')).toBe(false);
  });

  it("takes only the stack's secrets without a prefix", () => {
    const stackOnly = new ProgramSecretScope({ prefix: undefined, stackSecrets: ['legacy-loans'] });

    expect(stackOnly.includes('legacy-loans')).toBe(true);
    expect(stackOnly.includes('banking-events-poller/Prod/cards')).toBe(false);
  });
});

describe('the secrets prefix', () => {
  it('is a name path ending with "/", so that it covers no longer sibling', () => {
    expect(SECRETS_PREFIX_PATTERN.test('banking-events-poller/Prod/')).toBe(true);
    expect(SECRETS_PREFIX_PATTERN.test('banking-events-poller/Prod')).toBe(false);
    expect(SECRETS_PREFIX_PATTERN.test('/')).toBe(false);
    expect(SECRETS_PREFIX_PATTERN.test('bad prefix/')).toBe(false);
  });

  it("names a program's secret under it", () => {
    expect(programSecretName('banking-events-poller/Prod/', 'cards')).toBe(
      'banking-events-poller/Prod/cards',
    );
  });
});

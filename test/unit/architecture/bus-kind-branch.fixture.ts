/**
 * Kind branches planted for `bus-kind-strategies.test.ts`, which must find the line after each
 * `// planted` comment and nothing else here. Never imported.
 */
import type { SettingValue } from '../../../functions/settings/settings.ts';

type Kind = SettingValue<'eventBusKind'>;

const CUSTOM: Kind = 'custom';

export function planted(
  kind: Kind,
  output: string | undefined,
  kinds: Readonly<Record<Kind, number>>,
): number {
  // A lookup, not a branch.
  let found = kinds[kind];
  // planted
  if (kind === 'custom') found += 1;
  // planted
  if (output !== 'classic') found += 1;
  // planted
  if (CUSTOM === kind) found += 1;
  // planted
  found += kind !== CUSTOM ? 1 : 0;
  // planted
  switch (kind) {
    case 'classic':
      return found;
    default:
      return found + 1;
  }
}

/**
 * The ARN of a Custom Event Bus, as the EventBridgeV2 API takes it (`EventBusArn`): the API
 * addresses a bus by ARN only, never by name.
 */
import { ConfigurationError } from '../../../core/errors.ts';

/** The service model's pattern for `EventBusArn`, anchored. */
export const EVENT_BUS_V2_ARN_PATTERN =
  /^arn:aws(-[a-z0-9]+)*:events:[a-z][a-z0-9]*(-[a-z0-9]+)*:([0-9]{12}):event-busv2\/[A-Za-z0-9][.\-_A-Za-z0-9]{0,255}\/[a-z0-9]{25}$/;

export const EVENT_BUS_V2_ARN_EXPECTED =
  'the ARN of a Custom Event Bus, arn:aws:events:<region>:<account>:event-busv2/<name>/<25-character id>';

/**
 * `value` when it is a Custom Event Bus ARN; else a `ConfigurationError` whose message starts
 * with `where` (e.g. `Environment variable EVENT_BUS_NAME`) and says the expected form.
 */
export function parseEventBusV2Arn(value: string, where: string, variable?: string): string {
  const trimmed = value.trim();
  if (!EVENT_BUS_V2_ARN_PATTERN.test(trimmed)) {
    const hint = trimmed.includes(':event-bus/')
      ? ' (this is the ARN of a classic bus: use EVENT_BUS_KIND=classic, or the custom bus ARN)'
      : trimmed.startsWith('arn:')
        ? ''
        : ' (a bus name is not enough on the custom bus: give its ARN)';
    throw new ConfigurationError(
      `${where} must be ${EVENT_BUS_V2_ARN_EXPECTED} when the bus kind is custom, got ${JSON.stringify(trimmed)}${hint}`,
      { where, ...(variable === undefined ? {} : { variable }) },
    );
  }
  return trimmed;
}

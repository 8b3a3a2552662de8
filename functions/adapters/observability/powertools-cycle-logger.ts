import type { Logger } from '@aws-lambda-powertools/logger';
import type { CycleLogger } from '../../core/ports.ts';

/** Adapts Powertools Logger to the core's logger port; attributes become top-level JSON keys. */
export function cycleLoggerFrom(logger: Logger): CycleLogger {
  const write =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (message: string, attributes?: Record<string, unknown>): void => {
      if (attributes === undefined) logger[level](message);
      else logger[level](message, attributes);
    };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

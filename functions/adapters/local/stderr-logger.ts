import type { CycleLogger } from '../../core/ports.ts';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

/** Local mode's logger: one JSON line per entry on stderr, so stdout stays pure NDJSON events. */
export function stderrLogger(
  minimum: string = 'warn',
  write: (line: string) => void = (l) => process.stderr.write(l),
): CycleLogger {
  const threshold = Math.max(0, LEVELS.indexOf(minimum.toLowerCase() as Level));
  const at =
    (level: Level) =>
    (message: string, attributes?: Record<string, unknown>): void => {
      if (LEVELS.indexOf(level) < threshold) return;
      write(
        `${JSON.stringify({ level, time: new Date().toISOString(), message, ...attributes }, errorReplacer)}\n`,
      );
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const coded = value as Error & { code?: unknown; context?: unknown };
    return { name: value.name, message: value.message, code: coded.code, context: coded.context };
  }
  return value;
}

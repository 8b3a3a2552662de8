/**
 * What the kit logs of an event it could not handle: the error described by its name, code,
 * field, message and context (the kit's errors keep payloads out of all four), never the message
 * body or the event.
 */
export function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const { code, field, context } = error as Error & { code?: unknown; field?: unknown; context?: unknown };
  return {
    name: error.name,
    message: error.message,
    ...(code === undefined ? {} : { code }),
    ...(field === undefined ? {} : { field }),
    ...(context === undefined ? {} : { context }),
  };
}

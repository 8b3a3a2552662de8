/**
 * Target parameters on a subscriber (`SqsParameters.MessageGroupId`, ...) hold a literal or one
 * JSONata expression in `{% ... %}`, evaluated per event against `$events` = `{ Data, Metadata,
 * SystemMetadata }`. The stand-in evaluates the one form this repository needs, a field path such as
 * `{% $events.SystemMetadata.EventGroupId %}` or `{% $events.Data.detail.account_id %}` (a name with a
 * colon quoted with backticks or double quotes: `` $events.SystemMetadata.`aws:EventId` ``), and
 * refuses any other expression when the subscriber is created.
 */

export class UnsupportedExpressionError extends Error {}

/** Resolves one event's value; `undefined` when the path leads nowhere or to a non-scalar. */
export type ParameterValue = (events: unknown) => string | undefined;

const EXPRESSION = /^\{%([\s\S]*)%\}$/;
const SEGMENT = /^\.(?:([A-Za-z_][A-Za-z0-9_]*)|`([^`]+)`|"([^"]+)")/;

/** Compiles a literal or a supported expression; throws `UnsupportedExpressionError` for the rest. */
export function compileParameter(text: string, where: string): ParameterValue {
  const expression = EXPRESSION.exec(text)?.[1]?.trim();
  if (expression === undefined) {
    if (text.includes('{%') || text.includes('%}')) {
      throw new UnsupportedExpressionError(`${where}: an expression must be the whole value, in {% ... %}`);
    }
    return () => text;
  }
  const path = parsePath(expression, where);
  return (events) => {
    let value: unknown = events;
    for (const name of path) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
      value = (value as Record<string, unknown>)[name];
    }
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    return undefined;
  };
}

function parsePath(expression: string, where: string): string[] {
  if (!expression.startsWith('$events')) {
    throw new UnsupportedExpressionError(
      `${where}: the stand-in evaluates only field paths from $events (got {% ${expression} %})`,
    );
  }
  const names: string[] = [];
  let rest = expression.slice('$events'.length);
  while (rest.length > 0) {
    const match = SEGMENT.exec(rest);
    if (match === null) {
      throw new UnsupportedExpressionError(
        `${where}: the stand-in evaluates only field paths from $events (got {% ${expression} %})`,
      );
    }
    names.push((match[1] ?? match[2] ?? match[3]) as string);
    rest = rest.slice(match[0].length);
  }
  return names;
}

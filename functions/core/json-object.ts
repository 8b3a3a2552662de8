/** A parsed JSON value that is an object (not an array, not null): the shape every payload starts as. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

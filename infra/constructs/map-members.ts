/**
 * The jsii form of a `ReadonlyMap` member. jsii has no `Map` type, so each `ReadonlyMap` member
 * that TypeScript users already read (`poller.secrets.get('cards')`) stays, hidden from jsii
 * (`@jsii ignore`), beside a twin every language sees: a plain object with the same keys
 * (`poller.secretsByProgram['cards']`, Python `poller.secrets_by_program["cards"]`). New members
 * are plain objects from the start (STYLE.md, "Packaging").
 */

/** The entries of `map` as a frozen plain object, in the map's order. */
export function mapRecord<T>(map: ReadonlyMap<string, T>): { readonly [key: string]: T } {
  return Object.freeze(Object.fromEntries(map));
}

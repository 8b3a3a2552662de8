/**
 * The ways a server may echo a credential back (raw, JSON-escaped, `\/`, `\uXXXX`, percent-encoded
 * in either case, form-encoded), written out by hand rather than by the code under test, and the
 * check that none of them, of the credential or of a prefix of 8 or more of it, shows in a text.
 */

/** The runtime's own `toWellFormed` (Node 20+), independent of the code under test. */
export const wellFormed = (text: string): string =>
  (text as unknown as { toWellFormed(): string }).toWellFormed();

const hex = (code: number, digits: number) => code.toString(16).toUpperCase().padStart(digits, '0');
const utf8Bytes = (text: string) => [...new TextEncoder().encode(wellFormed(text))];

/** Every way a server may echo `text`, each written out by hand rather than by the code under test. */
export const ENCODINGS: Readonly<Record<string, (text: string) => string>> = {
  raw: (text) => text,
  'well-formed': wellFormed,
  'JSON-escaped': (text) => JSON.stringify(text).slice(1, -1),
  'JSON-escaped with \\/': (text) => JSON.stringify(text).slice(1, -1).replaceAll('/', '\\/'),
  '\\uXXXX for every character': (text) =>
    [...Array(text.length).keys()].map((i) => `\\u${hex(text.charCodeAt(i), 4).toLowerCase()}`).join(''),
  'percent-encoded, upper case': (text) =>
    utf8Bytes(text)
      .map((b) => `%${hex(b, 2)}`)
      .join(''),
  'percent-encoded, lower case': (text) =>
    utf8Bytes(text)
      .map((b) => `%${hex(b, 2).toLowerCase()}`)
      .join(''),
  'form-encoded': (text) => new URLSearchParams({ s: text }).toString().slice(2),
};

/** What must never appear in a summary: the secret, each prefix of 8 or more, in every encoding. */
export function forbiddenForms(secret: string): string[] {
  const forms = new Set<string>();
  for (let end = Math.min(8, secret.length); end <= secret.length; end += 1) {
    for (const encode of Object.values(ENCODINGS)) forms.add(encode(secret.slice(0, end)));
  }
  return [...forms];
}

export function leaks(shown: string, secrets: readonly string[]): string[] {
  return secrets.flatMap((secret) => forbiddenForms(secret).filter((form) => shown.includes(form)));
}

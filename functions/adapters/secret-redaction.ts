/**
 * Redacting the credentials we hold from text that a server sent back (an error body, an AWS
 * error message), whatever encoding the server echoed them in: raw, JSON-escaped (`\/`, `\"`,
 * `\\`, `\uXXXX`), percent-encoded in either case, form-encoded (`+` for a space), or cut short.
 * Pure functions; the HTTP and AWS adapters call them before any such text reaches an error.
 */

/** What stands in for a secret, or a prefix of one. Nothing in it decodes to anything else. */
export const REDACTED = '[redacted]';
/** What stands in for the whole text when redaction itself failed: the text is dropped, not shown. */
export const WITHHELD = '[withheld: could not be redacted]';

/** An echo cut short by the server is redacted once this many characters of a secret match. */
export const MIN_REDACTED_PREFIX = 8;
/** Enough for an encoding nested a few times (a JSON string of a percent-encoded form); more is hostile. */
const MAX_DECODING_ROUNDS = 4;

/**
 * The text with every secret, and every run of 8 or more of its first characters, replaced by
 * `[redacted]`, in each form a server may echo it in. The result is the text decoded (JSON escapes
 * and percent-encoding undone, as far as they go) and redacted at each step of the decoding, so
 * that no layer of encoding hides a secret. Never throws: when anything goes wrong the whole text
 * is dropped for `WITHHELD`.
 *
 * @example
 * redact('{"detail":"bad client_secret s3cr3t\\/with+plus"}', ['s3cr3t/with+plus']);
 * // '{"detail":"bad client_secret [redacted]"}'
 */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  try {
    const patterns = patternsOf(secrets);
    if (patterns.length === 0) return text;
    let current = redactForms(text, patterns);
    for (let round = 0; round < MAX_DECODING_ROUNDS; round += 1) {
      const before = current;
      current = redactForms(unescapeJson(current), patterns);
      current = redactForms(percentDecode(current), patterns);
      if (current === before) return current;
    }
    // Still decoding after this many layers: not an echo we can vouch for.
    return WITHHELD;
  } catch {
    return WITHHELD;
  }
}

/**
 * Control characters as spaces, runs of white space as one space: what a one-line summary shows.
 * Not trimmed, so that it also serves as a form of a secret (see `formsOf`).
 */
export function collapseWhitespace(text: string): string {
  return text.replace(/\p{Cc}+/gu, ' ').replace(/\s+/g, ' ');
}

/** Undoes JSON string escapes: `\"`, `\\`, `\/`, `\b\f\n\r\t` and `\uXXXX` (lone surrogates too). */
export function unescapeJson(text: string): string {
  return text.replace(/\\(u[0-9a-fA-F]{4}|["\\/bfnrt])/g, (_, sequence: string) => {
    if (sequence.length === 5) return String.fromCharCode(Number.parseInt(sequence.slice(1), 16));
    return JSON_ESCAPES[sequence] ?? sequence;
  });
}

const JSON_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/**
 * Undoes percent-encoding in either case of hex digit; the bytes are read as UTF-8, leniently
 * (a broken sequence becomes U+FFFD). A `%` not followed by two hex digits stays as it is.
 */
export function percentDecode(text: string): string {
  const decoder = new TextDecoder('utf-8');
  return text.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    const bytes = new Uint8Array(run.length / 3);
    for (let i = 0; i < bytes.length; i += 1) bytes[i] = Number.parseInt(run.slice(i * 3 + 1, i * 3 + 3), 16);
    return decoder.decode(bytes);
  });
}

/**
 * A string for comparison, of the same length as `text` (so a match's position is the same in
 * both): `+` as a space (form encoding), and every UTF-16 surrogate as U+FFFD, which is what a
 * UTF-8 encoder sends for a lone one and a lenient decoder gives for a character cut in two.
 * Two different astral characters then compare equal: that redacts more, never less.
 */
function comparable(text: string): string {
  return text.replace(/[\uD800-\uDFFF]/g, '\uFFFD').replace(/\+/g, ' ');
}

/** `String.prototype.toWellFormed` (ES2024): each lone surrogate as U+FFFD. */
function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

// Without the `u` flag a regular expression sees UTF-16 code units, so it can find a lone half.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The forms of each secret that a server may echo, as `comparable` strings, longest first. */
function patternsOf(secrets: readonly (string | undefined)[]): string[] {
  const patterns = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    for (const form of formsOf(secret)) if (form !== '') patterns.add(comparable(form));
  }
  return [...patterns].sort((a, b) => b.length - a.length);
}

function formsOf(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const percent = encodeURIComponent(wellFormed(secret));
  return [
    secret,
    wellFormed(secret),
    collapseWhitespace(secret),
    json,
    json.replace(/\//g, '\\/'),
    percent,
    percent.replace(/%[0-9A-F]{2}/g, (pair) => pair.toLowerCase()),
    new URLSearchParams({ s: secret }).toString().slice(2),
  ];
}

/**
 * Replaces every match of a pattern, or of a prefix of one of at least `MIN_REDACTED_PREFIX`
 * characters. Spans are found for all patterns first and merged, so that a prefix of one form
 * (the form-encoded secret's first characters) cannot cut short the match of another (the raw one).
 */
function redactForms(text: string, patterns: readonly string[]): string {
  const key = comparable(text);
  const spans = patterns.flatMap((pattern) => matchesOf(key, pattern)).sort((a, b) => a[0] - b[0]);
  if (spans.length === 0) return text;
  let redacted = '';
  let from = 0;
  let open: [number, number] | undefined;
  for (const [start, end] of spans) {
    if (open && start <= open[1]) {
      open[1] = Math.max(open[1], end);
      continue;
    }
    if (open) {
      redacted += `${text.slice(from, open[0])}${REDACTED}`;
      from = open[1];
    }
    open = [start, end];
  }
  if (open) {
    redacted += `${text.slice(from, open[0])}${REDACTED}`;
    from = open[1];
  }
  return redacted + text.slice(from);
}

/**
 * Non-overlapping `[start, end)` spans of `text` that equal `pattern`, or, when the pattern is long
 * enough, begin with its first `MIN_REDACTED_PREFIX` characters and follow it as far as they can.
 */
function matchesOf(text: string, pattern: string): [number, number][] {
  const head = pattern.slice(0, Math.min(MIN_REDACTED_PREFIX, pattern.length));
  const spans: [number, number][] = [];
  let at = text.indexOf(head);
  while (at !== -1) {
    let length = head.length;
    while (length < pattern.length && text[at + length] === pattern[length]) length += 1;
    if (length === pattern.length || length >= MIN_REDACTED_PREFIX) {
      spans.push([at, at + length]);
      at = text.indexOf(head, at + length);
    } else {
      at = text.indexOf(head, at + 1);
    }
  }
  return spans;
}

/**
 * Where JSON values sit in a JSON text, found without building them: so an event can be
 * republished exactly as the bank sent it (every number digit for digit, every string with its
 * escapes), while `JSON.parse` still serves validation. The functions expect text that
 * `JSON.parse` has already accepted; they do not validate it again.
 */

/** A value's place in a text: `text.slice(start, end)` is the value. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** A JSON text and the value `JSON.parse` made of it. */
export interface JsonDocument {
  readonly text: string;
  readonly value: unknown;
}

/** One member of an object: its decoded key, the key's token and the value's span. */
export interface MemberSpan {
  readonly key: string;
  readonly keyToken: Span;
  readonly value: Span;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

export function skipWhitespace(text: string, index: number): number {
  let i = index;
  while (i < text.length && isWhitespace(text.charCodeAt(i))) i += 1;
  return i;
}

/** The index just past the string token whose opening quote is at `index`. */
function stringEnd(text: string, index: number): number {
  let from = index + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    let backslashes = 0;
    for (let j = quote - 1; j > index && text.charCodeAt(j) === BACKSLASH; j -= 1) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The index just past the value that starts at `index` (whitespace already skipped). */
export function valueEnd(text: string, index: number): number {
  const first = text.charCodeAt(index);
  if (first === QUOTE) return stringEnd(text, index);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A number or a literal: it ends at the first delimiter.
    let i = index + 1;
    while (i < text.length) {
      const code = text.charCodeAt(i);
      if (code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET || isWhitespace(code)) break;
      i += 1;
    }
    return i;
  }
  let depth = 0;
  let i = index;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = stringEnd(text, i);
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) depth += 1;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
    i += 1;
  }
  return i;
}

/** The span of the whole document's value. */
export function rootSpan(text: string): Span {
  const start = skipWhitespace(text, 0);
  return { start, end: valueEnd(text, start) };
}

/** The spans of an array's elements, in order. `array` must be the span of an array. */
export function elementSpans(text: string, array: Span): Span[] {
  const spans: Span[] = [];
  let i = skipWhitespace(text, array.start + 1);
  while (i < array.end && text.charCodeAt(i) !== CLOSE_BRACKET) {
    const end = valueEnd(text, i);
    spans.push({ start: i, end });
    i = skipWhitespace(text, end);
    if (text.charCodeAt(i) === COMMA) i = skipWhitespace(text, i + 1);
  }
  return spans;
}

/** The members of an object, in order, duplicates included. `object` must be the span of an object. */
export function memberSpans(text: string, object: Span): MemberSpan[] {
  const members: MemberSpan[] = [];
  let i = skipWhitespace(text, object.start + 1);
  while (i < object.end && text.charCodeAt(i) !== CLOSE_BRACE) {
    const keyEnd = stringEnd(text, i);
    const keyToken = { start: i, end: keyEnd };
    // Keys rarely hold escapes; JSON.parse decodes the ones that do.
    const raw = text.slice(i + 1, keyEnd - 1);
    const key = raw.includes('\\') ? (JSON.parse(text.slice(i, keyEnd)) as string) : raw;
    const valueStart = skipWhitespace(text, skipWhitespace(text, keyEnd) + 1);
    const end = valueEnd(text, valueStart);
    members.push({ key, keyToken, value: { start: valueStart, end } });
    i = skipWhitespace(text, end);
    if (text.charCodeAt(i) === COMMA) i = skipWhitespace(text, i + 1);
  }
  return members;
}

/** The span of `key`'s value in an object (its last occurrence, as `JSON.parse` keeps), if any. */
export function memberSpan(text: string, object: Span, key: string): Span | undefined {
  return memberSpans(text, object).findLast((member) => member.key === key)?.value;
}

/**
 * The value's text without the whitespace between tokens: every token (string, number,
 * literal) stays exactly as written.
 */
export function compactText(text: string, span: Span): string {
  let out = '';
  let segmentStart = span.start;
  let i = span.start;
  while (i < span.end) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = stringEnd(text, i);
      continue;
    }
    if (isWhitespace(code)) {
      out += text.slice(segmentStart, i);
      i = skipWhitespace(text, i);
      segmentStart = i;
      continue;
    }
    i += 1;
  }
  // Compact input (the usual case) comes back as one slice.
  return segmentStart === span.start
    ? text.slice(span.start, span.end)
    : out + text.slice(segmentStart, span.end);
}

/**
 * How deeply the value's arrays and objects nest (a scalar is 0, `{}` and `[]` are 1), counted by
 * scanning the text: no recursion, so a value nested 100,000 deep is measured, not a stack overflow.
 */
export function nestingDepth(text: string, span: Span): number {
  let depth = 0;
  let deepest = 0;
  let i = span.start;
  while (i < span.end) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = stringEnd(text, i);
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth += 1;
      if (depth > deepest) deepest = depth;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) depth -= 1;
    i += 1;
  }
  return deepest;
}

/**
 * A page of `GET /events` cut short: its body was longer than the feed reads at once (a bank that
 * ignores `limit`, or large events in little memory), so only its first bytes were read. The
 * events complete in them make a page of their own: the text up to the end of the last complete
 * element of `data`, closed with `]}`, parsed and validated like any page (`parsePollResponse`,
 * `recoverPage`). The rest is asked for again after them, so a page of any size is read in parts
 * within the same memory.
 *
 * The events are those the bank sent first. The interface says the feed comes in sequence order;
 * should a cut page not, a number left in its unread part is below the next cursor and shows as a
 * skipped number, looked up by gap repair like any other.
 */
import type { FeedPage } from './banking-event.ts';
import type { BusEntryRules } from './bus-entry-rules.ts';
import { PageTooLargeError, PageUnreadableError } from './errors.ts';
import { type PayloadOrigin, parsePollResponse } from './event-model.ts';
import { skipWhitespace, valueEnd } from './json-text.ts';
import { recoverPage } from './page-recovery.ts';

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const QUOTE = 0x22;

/** Where the scan of a cut body stopped: the document its complete part makes, and whether `data` began. */
interface CompletePart {
  readonly document: string;
  /** A `data` array began within what was read. */
  readonly dataSeen: boolean;
  /** The object ended within what was read (what follows it is not the page's). */
  readonly closed: boolean;
}

class Malformed extends Error {}

/**
 * The events complete in `text`, the first `bytesRead` bytes of a longer poll answer, as a page
 * marked `cut`.
 *
 * @throws PageUnreadableError when what was read is not the start of a JSON object with `data`
 * @throws PageTooLargeError when no event of `data` ends within what was read
 */
export function parsePagePrefix(
  text: string,
  origin: PayloadOrigin,
  bytesRead: number,
  rules: BusEntryRules,
): FeedPage {
  const where = origin.status === undefined ? origin.source : `${origin.source} (HTTP ${origin.status})`;
  const context = { source: origin.source, status: origin.status, bytesRead };
  let part: CompletePart;
  try {
    part = completePart(text);
  } catch (error) {
    if (!(error instanceof Malformed)) throw error;
    throw new PageUnreadableError(
      `${where}: the first ${bytesRead} bytes of an answer too long to read at once are not JSON (${error.message})`,
      context,
    );
  }
  const noEvent = () =>
    new PageTooLargeError(
      `${where}: no event ends within the first ${bytesRead} bytes of the answer, all of a page that is read at ` +
        `once in this much memory${part.dataSeen ? '' : ' (its "data" had not begun)'}; one event cannot be read in parts`,
      context,
    );
  if (!part.dataSeen && !part.closed) throw noEvent();
  let value: unknown;
  let document: Parameters<typeof parsePollResponse>[0];
  try {
    value = JSON.parse(part.document);
    document = { text: part.document, value };
  } catch {
    const recovered = recoverPage(part.document);
    if (recovered === undefined) {
      throw new PageUnreadableError(
        `${where}: the events in the first ${bytesRead} bytes of an answer too long to read at once are not JSON`,
        context,
      );
    }
    document = recovered;
  }
  const page = parsePollResponse(document, origin, rules);
  if (page.events.length === 0 && !part.closed) throw noEvent();
  return { ...page, cut: { bytesRead } };
}

/**
 * Scans the top-level object of `text` member by member and closes it after the last complete
 * thing: inside `data`, after its last complete element; elsewhere, after the last complete member.
 */
function completePart(text: string): CompletePart {
  let i = skipWhitespace(text, 0);
  if (i >= text.length || text.charCodeAt(i) !== OPEN_BRACE) throw new Malformed('not an object');
  i = skipWhitespace(text, i + 1);
  /** Where the object may be closed with `}`: after `{`, or after a complete member. */
  let lastMemberEnd = i;
  let dataSeen = false;
  const cutAfter = (end: number): CompletePart => ({
    document: `${text.slice(0, end)}}`,
    dataSeen,
    closed: false,
  });
  for (;;) {
    if (i >= text.length) return cutAfter(lastMemberEnd);
    if (text.charCodeAt(i) === CLOSE_BRACE) return { document: text.slice(0, i + 1), dataSeen, closed: true };
    if (text.charCodeAt(i) !== QUOTE) throw new Malformed('a member without a name');
    const keyEnd = valueEnd(text, i);
    const colon = skipWhitespace(text, keyEnd);
    if (colon >= text.length) return cutAfter(lastMemberEnd);
    if (text.charCodeAt(colon) !== COLON) throw new Malformed('a member name without ":"');
    const key = memberName(text.slice(i, keyEnd));
    const start = skipWhitespace(text, colon + 1);
    if (start >= text.length) return cutAfter(lastMemberEnd);
    let end: number;
    /** Whether the value is known to be whole: `data`'s closing bracket was read. */
    let whole = false;
    if (key === 'data' && text.charCodeAt(start) === OPEN_BRACKET) {
      dataSeen = true;
      const elements = completeElements(text, start);
      if (elements.closedAt === undefined)
        return { document: `${text.slice(0, elements.lastEnd)}]}`, dataSeen, closed: false };
      end = elements.closedAt;
      whole = true;
    } else {
      end = valueEnd(text, start);
    }
    const after = skipWhitespace(text, end);
    // Any other value that runs to the end of what was read may go on beyond it: incomplete.
    if (after >= text.length) return cutAfter(whole ? end : lastMemberEnd);
    const next = text.charCodeAt(after);
    if (next === CLOSE_BRACE) return { document: text.slice(0, after + 1), dataSeen, closed: true };
    if (next !== COMMA) throw new Malformed('members not separated by ","');
    lastMemberEnd = end;
    i = skipWhitespace(text, after + 1);
  }
}

/**
 * The elements of the array opening at `open`: the end of the last one followed by `,` or `]`
 * within `text` (`open + 1` when none is), and where the array closed, if it did.
 */
function completeElements(text: string, open: number): { lastEnd: number; closedAt?: number } {
  let lastEnd = open + 1;
  let i = skipWhitespace(text, open + 1);
  if (i < text.length && text.charCodeAt(i) === CLOSE_BRACKET) return { lastEnd, closedAt: i + 1 };
  while (i < text.length) {
    const end = valueEnd(text, i);
    const after = skipWhitespace(text, end);
    if (after >= text.length) break;
    const next = text.charCodeAt(after);
    if (next === CLOSE_BRACKET) return { lastEnd: end, closedAt: after + 1 };
    if (next !== COMMA) throw new Malformed('elements of "data" not separated by ","');
    lastEnd = end;
    i = skipWhitespace(text, after + 1);
  }
  return { lastEnd };
}

/** A member name token decoded (escapes too); a token `JSON.parse` refuses is malformed. */
function memberName(token: string): string {
  const raw = token.slice(1, -1);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(token) as string;
  } catch {
    throw new Malformed('a member name that is no JSON string');
  }
}

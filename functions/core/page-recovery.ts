/**
 * A poll answer that `JSON.parse` refused, read event by event: when the fault is inside some
 * events of `data` (a `NaN`, a trailing comma, a bare word) and the rest of the page is sound,
 * those events are set aside as text and the page is read without them, so one broken event is
 * quarantined (`invalid-event.ts`) instead of stopping the feed. A page whose envelope cannot be
 * read this way gives `undefined`: it cannot be parsed at all (`PageUnreadableError`).
 */
import type { EventText } from './banking-event.ts';
import { PayloadValidationError } from './errors.ts';
import { elementSpans, type JsonDocument, memberSpan, rootSpan } from './json-text.ts';

/** The page with each unreadable event replaced by `null`, and those events' text by index in `data`. */
export interface RecoveredPage extends JsonDocument {
  readonly unreadableEvents: ReadonlyMap<number, string>;
}

export function isRecoveredPage(document: JsonDocument): document is RecoveredPage {
  return 'unreadableEvents' in document;
}

/**
 * Finds the elements of `data` by their brackets and quotes (`json-text.ts`), parses each alone,
 * and parses the page again with the ones that fail replaced by `null`. Only when that succeeds
 * is the page recovered: a fault the scan misplaces (an unclosed string) makes it fail, and the
 * page stays unreadable rather than guessed at.
 */
export function recoverPage(text: string): RecoveredPage | undefined {
  try {
    const root = rootSpan(text);
    if (text[root.start] !== '{') return undefined;
    const data = memberSpan(text, root, 'data');
    if (data === undefined || text[data.start] !== '[') return undefined;
    const unreadableEvents = new Map<number, string>();
    let rebuilt = '';
    let copiedTo = 0;
    elementSpans(text, data).forEach((span, index) => {
      const element = text.slice(span.start, span.end);
      try {
        JSON.parse(element);
      } catch {
        unreadableEvents.set(index, element);
        rebuilt += `${text.slice(copiedTo, span.start)}null`;
        copiedTo = span.end;
      }
    });
    if (unreadableEvents.size === 0) return undefined;
    rebuilt += text.slice(copiedTo);
    return { text: rebuilt, value: JSON.parse(rebuilt) as unknown, unreadableEvents };
  } catch {
    // The scan assumes sound JSON; on a page this broken, whatever it does is no reading.
    return undefined;
  }
}

/**
 * What the page's parsing quarantines in place of an unreadable event: its text as received (no
 * parsed value: `invalidEvent` then carries it as a string) and why, at no number of its own.
 */
export function unreadableEntry(
  text: string,
  index: number,
  origin: { readonly source: string; readonly status?: number },
): { readonly source: EventText; readonly error: PayloadValidationError; readonly sequenceNumber: null } {
  const where = origin.status === undefined ? origin.source : `${origin.source} (HTTP ${origin.status})`;
  const field = `data[${index}]`;
  return {
    source: { value: undefined, text, span: { start: 0, end: text.length } },
    error: new PayloadValidationError(`${where}: ${field} is not JSON`, {
      source: origin.source,
      status: origin.status,
      field,
    }),
    sequenceNumber: null,
  };
}

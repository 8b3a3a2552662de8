/**
 * Publish-time de-duplication, as the user guide (eb-custom-bus-ordering, "Deduplication at publish
 * time") documents it: a duplicate arriving within 5 minutes (300 s) of the entry it repeats is
 * suppressed; the check is scoped to the publishing account, and to the event group when the entry
 * carries an `EventGroupId` (another group, or another account, is a different event); entries
 * without a group are de-duplicated across the account's ungrouped entries on that bus. The window
 * runs from the accepted entry: a suppressed duplicate does not extend it.
 */

export const DEDUPLICATION_WINDOW_MS = 300_000;

export interface AcceptedEntry {
  readonly eventId: string;
  readonly sequenceNumber: string;
  readonly acceptedAt: number;
}

export interface DeduplicationScope {
  readonly accountId: string;
  readonly busArn: string;
  readonly eventGroupId: string | undefined;
  /** The entry's `DeduplicationId`, or its content hash under `CONTENT_BASED`. */
  readonly key: string;
}

export class DeduplicationWindow {
  readonly #accepted = new Map<string, AcceptedEntry>();

  /** The earlier entry this one repeats, when it was accepted less than the window ago. */
  find(scope: DeduplicationScope, now: number): AcceptedEntry | undefined {
    const earlier = this.#accepted.get(scopeKey(scope));
    return earlier !== undefined && now - earlier.acceptedAt < DEDUPLICATION_WINDOW_MS ? earlier : undefined;
  }

  remember(scope: DeduplicationScope, entry: AcceptedEntry): void {
    this.#accepted.set(scopeKey(scope), entry);
  }
}

function scopeKey(scope: DeduplicationScope): string {
  // A grouped and an ungrouped entry never share a key: the group part is tagged.
  const group = scope.eventGroupId === undefined ? '-' : `g:${scope.eventGroupId}`;
  return JSON.stringify([scope.accountId, scope.busArn, group, scope.key]);
}

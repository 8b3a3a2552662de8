import type { BankingEvent } from '../banking-event.ts';
import { FeedProgramMismatchError } from '../errors.ts';

/**
 * The banking `program_id` a checkpoint row serves. Every event of a feed carries its program's
 * id; one that differs from the row's (or from the rest of the page, before the row has one)
 * means the secret holds another program's credentials: the cycle publishes nothing of it and
 * keeps the checkpoint.
 */
export class FeedIdentity {
  readonly #program: string;
  #programId: string | null;

  /** `recorded`: the row's `program_id` as stored, `null` before its first commit. */
  constructor(program: string, recorded: string | null) {
    this.#program = program;
    this.#programId = recorded;
  }

  /** The row's feed, once known. */
  get programId(): string | null {
    return this.#programId;
  }

  /** Adopts the feed a start position's walk passed over, unless the row has one. */
  adopt(programId: string | null): void {
    this.#programId ??= programId;
  }

  /** @throws FeedProgramMismatchError when an event belongs to another program's feed */
  check(events: readonly BankingEvent[]): void {
    // A quarantined event's program_id may be missing or wrong: it neither decides nor breaks the
    // row's identity (a page of nothing else leaves it unknown, and the checkpoint waits for it).
    const valid = events.filter((event) => event.invalid === undefined);
    const expected = this.#programId ?? valid[0]?.program_id;
    if (expected === undefined) return;
    const stranger = valid.find((event) => event.program_id !== expected);
    if (stranger !== undefined) {
      throw new FeedProgramMismatchError(
        this.#program,
        expected,
        stranger.program_id,
        stranger.sequence_number,
      );
    }
    this.#programId = expected;
  }
}

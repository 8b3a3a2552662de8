/**
 * Standing misbehaviours of single programs: a bank that goes wrong for one program while it
 * serves the others normally, as a fleet of programs in one function must withstand. Unlike the
 * fault queues of `fault-injector.ts` (the next N requests, whichever program made them), a
 * misbehaviour lasts until it is cleared and touches every request of its program only: the token
 * endpoint (known by the client id) and every bearer request (known by the token).
 */

export type ProgramMisbehaviour =
  /** Every request of the program is held unanswered, until its client gives up or the simulator closes. */
  | { readonly kind: 'stall' }
  /** Every request of the program is answered with this error status (400-599), with Retry-After if given. */
  | { readonly kind: 'error'; readonly status: number; readonly retryAfter?: string }
  /**
   * Polls answer with up to `pageEvents` events after the cursor, whatever `limit` asked for (the
   * answer's `limit` echoes the one asked for, as such a bank does).
   */
  | { readonly kind: 'oversize-pages'; readonly pageEvents: number }
  /** The program's access is withdrawn: its client is refused a token and its tokens are refused. */
  | { readonly kind: 'revoked' };

export type MisbehaviourKind = ProgramMisbehaviour['kind'];

/** The most events an oversize page may hold: enough for ~100 MB pages, few enough to build one. */
export const MAX_OVERSIZE_PAGE_EVENTS = 1_000_000;

/** Checks a misbehaviour's fields; the error says which field and what it must be. */
export function checkMisbehaviour(misbehaviour: ProgramMisbehaviour): ProgramMisbehaviour {
  const where = 'faults.misbehave';
  switch (misbehaviour.kind) {
    case 'stall':
    case 'revoked':
      return Object.freeze({ kind: misbehaviour.kind });
    case 'error': {
      const { status, retryAfter } = misbehaviour;
      if (!Number.isInteger(status) || status < 400 || status > 599) {
        throw new RangeError(`${where}: status must be an HTTP error status (400-599), got ${status}`);
      }
      if (retryAfter !== undefined && /[\r\n]/.test(retryAfter)) {
        throw new RangeError(`${where}: retryAfter must be a single-line header value`);
      }
      return Object.freeze({ kind: 'error', status, ...(retryAfter === undefined ? {} : { retryAfter }) });
    }
    case 'oversize-pages': {
      const { pageEvents } = misbehaviour;
      if (!Number.isInteger(pageEvents) || pageEvents < 1 || pageEvents > MAX_OVERSIZE_PAGE_EVENTS) {
        throw new RangeError(
          `${where}: pageEvents must be an integer from 1 to ${MAX_OVERSIZE_PAGE_EVENTS}, got ${pageEvents}`,
        );
      }
      return Object.freeze({ kind: 'oversize-pages', pageEvents });
    }
    default:
      throw new RangeError(
        `${where}: kind must be 'stall', 'error', 'oversize-pages' or 'revoked', got ${String((misbehaviour as { kind?: unknown }).kind)}`,
      );
  }
}

/** The misbehaving programs, by program id. */
export class ProgramMisbehaviours {
  readonly #byProgram = new Map<string, ProgramMisbehaviour>();

  /** Sets (or, with `undefined`, clears) a program's misbehaviour. */
  set(programId: string, misbehaviour: ProgramMisbehaviour | undefined): void {
    if (misbehaviour === undefined) this.#byProgram.delete(programId);
    else this.#byProgram.set(programId, checkMisbehaviour(misbehaviour));
  }

  of(programId: string): ProgramMisbehaviour | undefined {
    return this.#byProgram.get(programId);
  }

  clear(): void {
    this.#byProgram.clear();
  }
}

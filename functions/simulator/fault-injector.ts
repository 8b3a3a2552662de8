/**
 * Queues of faults that the next requests consume in order of arrival. Pure bookkeeping: the
 * HTTP layer asks "does this request fail / wait / get a broken body?" and acts on the answer.
 */

export type MalformedKind = 'not-json' | 'bad-schema';

export interface InjectedFailure {
  readonly status: number;
  readonly retryAfter?: string;
}

interface FailureRule extends InjectedFailure {
  remaining: number;
  /** Exact path this rule applies to; any path when undefined. */
  readonly path?: string;
}

interface CountedRule<T> {
  remaining: number;
  readonly value: T;
}

function requireCount(count: number, knob: string): void {
  if (!Number.isInteger(count) || count < 0) {
    throw new RangeError(`faults.${knob}: count must be a non-negative integer, got ${count}`);
  }
}

/** Takes one use from the first rule that accepts, dropping rules that are used up. */
function takeFrom<R extends { remaining: number }>(rules: R[], accepts: (rule: R) => boolean): R | undefined {
  const index = rules.findIndex((rule) => rule.remaining > 0 && accepts(rule));
  if (index === -1) return undefined;
  const rule = rules[index]!;
  rule.remaining -= 1;
  if (rule.remaining === 0) rules.splice(index, 1);
  return rule;
}

export class FaultInjector {
  private readonly failures: FailureRule[] = [];
  private readonly delays: CountedRule<number>[] = [];
  private readonly malformed: CountedRule<MalformedKind>[] = [];

  /** The next `count` requests (to `path` only, when given) answer `status`, with Retry-After if given. */
  failNext(count: number, status: number, options: { retryAfter?: string; path?: string } = {}): void {
    requireCount(count, 'failNext');
    // Error statuses only: a 1xx, 204 or 304 cannot carry the JSON error body, and a 2xx is no fault.
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw new RangeError(`faults.failNext: status must be an HTTP error status (400-599), got ${status}`);
    }
    if (options.retryAfter !== undefined && /[\r\n]/.test(options.retryAfter)) {
      throw new RangeError('faults.failNext: retryAfter must be a single-line header value');
    }
    if (count === 0) return;
    this.failures.push({ remaining: count, status, retryAfter: options.retryAfter, path: options.path });
  }

  /** The next `count` successful `GET /events` answers carry a broken body. */
  malformedNext(count: number, kind: MalformedKind): void {
    requireCount(count, 'malformedNext');
    if (kind !== 'not-json' && kind !== 'bad-schema') {
      throw new RangeError(
        `faults.malformedNext: kind must be 'not-json' or 'bad-schema', got ${String(kind)}`,
      );
    }
    if (count > 0) this.malformed.push({ remaining: count, value: kind });
  }

  /** The next `count` requests wait `ms` before they are handled. */
  delayNext(count: number, ms: number): void {
    requireCount(count, 'delayNext');
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`faults.delayNext: ms must be >= 0, got ${ms}`);
    if (count > 0) this.delays.push({ remaining: count, value: ms });
  }

  reset(): void {
    this.failures.length = 0;
    this.delays.length = 0;
    this.malformed.length = 0;
  }

  takeFailure(path: string): InjectedFailure | undefined {
    const rule = takeFrom(
      this.failures,
      (candidate) => candidate.path === undefined || candidate.path === path,
    );
    return rule === undefined ? undefined : { status: rule.status, retryAfter: rule.retryAfter };
  }

  takeDelay(): number | undefined {
    return takeFrom(this.delays, () => true)?.value;
  }

  takeMalformed(): MalformedKind | undefined {
    return takeFrom(this.malformed, () => true)?.value;
  }
}

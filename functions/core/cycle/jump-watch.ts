/**
 * Sequence jumps during a cycle (the rule: `sequence-jumps.ts`): the readers hand back the events
 * held past a jump; the jump, if no record covers it yet, is quarantined once (its copy published
 * untracked, recorded when the bus accepted it); the jumps awaiting a decision are counted
 * (`SequenceJumpsHeld`) and logged, in every run while they wait.
 */
import type { BankingEvent } from '../banking-event.ts';
import { type HeldJumps, heldJumpQuarantine, SEQUENCE_ORIGIN } from '../sequence-jumps.ts';
import type { CycleDeps } from './cycle-deps.ts';

/** A jump to quarantine: its copy to publish, and what to do once the bus accepted it. */
export interface JumpQuarantine {
  readonly copy: BankingEvent;
  readonly onAccepted: () => void;
}

export class JumpWatch {
  readonly #deps: CycleDeps;
  readonly #jumps: HeldJumps;

  constructor(deps: CycleDeps, jumps: HeldJumps) {
    this.#deps = deps;
    this.#jumps = jumps;
  }

  /** Counts and logs the recorded jumps still awaiting a decision, once as reading begins. */
  reportWaiting(): void {
    const waiting = this.#jumps.records.filter((record) => record.decision === undefined);
    if (waiting.length === 0) return;
    this.#deps.metrics.add('SequenceJumpsHeld', 'None', this.#jumps.awaitingDecision);
    this.#deps.logger.warn(
      'Sequence jumps await a decision; the checkpoint stays below them (banking-events-poller jumps list)',
      { heldJumps: waiting.slice(0, 5).map(({ sequenceNumber, eventId }) => ({ sequenceNumber, eventId })) },
    );
  }

  /**
   * The quarantine of the jump among `held` (the events a read held, ascending), when it is still
   * to be quarantined; `previous` is the highest number trusted before it.
   */
  quarantineOnce(held: readonly BankingEvent[], previous: number | null): JumpQuarantine | undefined {
    const jump = this.#jumps.takeJump(held);
    if (jump === undefined) return undefined;
    const { clock, logger, metrics } = this.#deps;
    const maxJump = this.#jumps.maxJump;
    // With no cursor yet, the readers judged it against the origin.
    const copy = heldJumpQuarantine(
      jump,
      previous ?? SEQUENCE_ORIGIN,
      maxJump,
      clock.now(),
      this.#deps.publisher.entryRules,
    );
    const fingerprint = copy.invalid!.fingerprint;
    metrics.add('SequenceJumpsHeld', 'None', this.#jumps.awaitingDecision);
    logger.warn(
      'An event lies implausibly far past the numbers before it: holding it and publishing it as invalid_event',
      {
        sequenceNumber: jump.sequence_number,
        previous,
        maxSequenceJump: maxJump,
        eventId: jump.id,
        fingerprint,
        heldBehindIt: held.length - 1,
      },
    );
    return {
      copy,
      onAccepted: () => {
        const dropped = this.#jumps.recordHeld(jump, fingerprint, clock.now());
        if (dropped.length > 0) {
          logger.warn('More sequence jumps are held than are recorded; the highest are let go', {
            dropped: dropped.map(({ sequenceNumber, eventId }) => ({ sequenceNumber, eventId })),
          });
        }
      },
    };
  }
}

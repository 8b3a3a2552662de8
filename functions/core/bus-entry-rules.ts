/**
 * What the bus refuses in an entry, as the edge states it for its bus (`adapters/aws/`), checked
 * while an event is read so a refused event is quarantined (`invalid-event.ts`) instead of
 * stopping the feed at the bus, run after run. The core holds none of the bus's numbers or
 * wording: it applies whatever rules it is given. Size is not here: an entry too large goes
 * through the claim check (`claim-check.ts`, `PublishLimits`).
 */
export interface BusEntryRules {
  /** The bus as a refusal names it, e.g. in "… levels deep; <busName> processes at most 1000". */
  readonly busName: string;
  /** Deepest nesting of arrays and objects the bus processes in a detail, the detail's own object included. */
  readonly maxDetailDepth: number;
  /**
   * Why the bus would refuse `detailType`, or `undefined` when it would not; the reason follows
   * the field's name in a message ("data[3].type is 129 characters long; …").
   */
  detailTypeProblem(detailType: string): string | undefined;
}

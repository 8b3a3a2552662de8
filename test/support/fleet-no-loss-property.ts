/**
 * The no-loss invariant for a fleet: several programs per worker, the worker count changing from
 * run to run (programs moving between workers, handed over through their leases), and a worker's
 * process dying after a drawn number of port calls, whichever program's call that is (every port
 * of every program of that worker then hangs, as in a killed process). Each program has its own
 * bank, bus sink, checkpoint row and fault schedule (`no-loss-property.ts`'s, less its crashes:
 * crashes are the worker's here), and the same invariant is checked for each: nothing at or below
 * its final checkpoint lost, the checkpoint never back nor ahead of an unaccepted event, duplicates
 * only of events in flight at a fault, and every program caught up in the end.
 *
 * The worker is the product's (`core/fleet/worker-run.ts`), over the in-memory registry and a
 * virtual clock; each program's turn runs the product's cycle over that program's ports.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { MemoryProgramRegistry } from '../../functions/adapters/local/memory-program-registry.ts';
import type { CheckpointStore } from '../../functions/core/checkpoint/store.ts';
import type { ProgramRecord } from '../../functions/core/fleet/program-record.ts';
import { type ProgramSlot, runWorker } from '../../functions/core/fleet/worker-run.ts';
import { checkDeliveryInvariant, type InvariantReport } from './delivery-invariant.ts';
import { FakeClock } from './fake-clock.ts';
import { InMemoryPublisher, RecordingLogger, RecordingMetrics } from './in-memory-ports.ts';
import {
  Bank,
  type BankRecord,
  bankEvent,
  bankRecords,
  type CycleModules,
  type FaultCounters,
  type FaultSchedule,
  MemoryClaimChecks,
  ORDINARY_EVENT_FOOTPRINT,
  PRODUCT_MODULES,
  Process,
  passedOverByStart,
  ScheduledBus,
  ScheduledFeed,
  ScheduledStore,
  ScheduledStream,
  scheduleArbitrary,
  startPositionOf,
  Timeline,
} from './no-loss-property.ts';

/** One drawn fleet: its programs' schedules, the worker count of each run, the workers killed. */
export interface FleetSchedule {
  /** One per program (`program-0`, `program-1`, …); their own crashes are left out. */
  readonly programs: readonly FaultSchedule[];
  /** The worker count of each run, in turn (the last one repeats). */
  readonly workerCounts: readonly number[];
  /** Worker `worker` of run `run` dies after `afterCalls` port calls of its programs. */
  readonly crashes: readonly { readonly run: number; readonly worker: number; readonly afterCalls: number }[];
  readonly maxConcurrentPrograms: number;
}

export const fleetArbitrary: fc.Arbitrary<FleetSchedule> = fc.record({
  programs: fc.array(
    scheduleArbitrary.map((schedule) => ({ ...schedule, crashes: [] })),
    { minLength: 2, maxLength: 4 },
  ),
  workerCounts: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 5 }),
  crashes: fc.array(
    fc.record({
      run: fc.integer({ min: 0, max: 5 }),
      worker: fc.integer({ min: 0, max: 2 }),
      afterCalls: fc.integer({ min: 1, max: 250 }),
    }),
    { maxLength: 3 },
  ),
  maxConcurrentPrograms: fc.integer({ min: 1, max: 4 }),
});

/** The product's parts the property runs: the real ones, or a mutant's (`cycle-mutants.ts`). */
export interface FleetModules {
  readonly cycle: CycleModules;
  readonly runWorker: typeof runWorker;
}

export const FLEET_MODULES: FleetModules = { cycle: PRODUCT_MODULES, runWorker };

/** One program's world across runs: its bank, the bus as it sees it, its checkpoint row, its timeline. */
interface ProgramWorld {
  readonly name: string;
  readonly schedule: FaultSchedule;
  readonly records: readonly BankRecord[];
  readonly bank: Bank;
  readonly sink: InMemoryPublisher;
  readonly store: CheckpointStore;
  readonly timeline: Timeline;
  readonly counters: FaultCounters;
  readonly claimChecks: MemoryClaimChecks;
  readonly highest: number;
  readonly lastArrivalAt: number;
  /** Turns that failed, or that a killed worker or the end of a turn cut. */
  faults: number;
  /** How its last turn ended: `completed` only when its cycle returned. */
  lastTurn: 'completed' | 'failed' | 'hung' | 'none';
}

const RUN_MS = 30_000;
const MAX_RUNS = 40;

function world(
  name: string,
  schedule: FaultSchedule,
  clock: FakeClock,
  firstRunAt: number,
  modules: CycleModules,
): ProgramWorld {
  const records = bankRecords(schedule, firstRunAt, modules);
  const sink = new InMemoryPublisher({ maxEntriesPerBatch: 10, maxBatchBytes: 4_000, maxEntryBytes: 4_000 });
  for (const { position, times } of schedule.rejectedEntries) {
    sink.rejectSequence(records.find((record) => record.position === position)!.event.sequence_number, times);
  }
  const jump = jumpOf(schedule);
  return {
    name,
    schedule,
    records,
    bank: new Bank(records, clock),
    sink,
    store: new modules.MemoryCheckpointStore({ now: () => clock.now() }),
    timeline: new Timeline(),
    counters: { polls: 0, requests: 0, commits: 0 },
    claimChecks: new MemoryClaimChecks(),
    // Caught up means every event but a held jump: nothing lets the checkpoint reach it.
    highest: Math.max(
      0,
      ...records.map((record) => record.event.sequence_number).filter((sequence) => sequence !== jump),
    ),
    faults: 0,
    lastArrivalAt: Math.max(firstRunAt, ...records.map((record) => record.createdAt)),
    lastTurn: 'none',
  };
}

/** One program's cycle in a worker's process: its ports through that process, the product's cycle. */
function programCycle(
  modules: CycleModules,
  program: ProgramWorld,
  process: Process,
  clock: FakeClock,
  owner: string,
  slot: ProgramSlot,
) {
  const { schedule } = program;
  const stream = schedule.mode === 'stream';
  const bus = new ScheduledBus(program.sink, schedule, program.counters, process, program.timeline, modules);
  const feed = new ScheduledFeed(
    program.bank,
    schedule,
    program.counters,
    process,
    modules,
    stream ? schedule.pollLagMs : 0,
  );
  return modules.runPollCycle(
    {
      feed,
      ...(stream ? { stream: new ScheduledStream(program.bank, schedule, process) } : { lookup: feed }),
      publisher: new modules.ClaimCheckPublisher(
        { inner: bus, store: program.claimChecks, metrics: slot.metrics, logger: slot.logger },
        { maxEntryBytes: 3_000 },
      ),
      checkpoints: new ScheduledStore(
        program.store,
        program.counters,
        schedule,
        process,
        program.timeline,
        modules,
      ),
      clock,
      metrics: slot.metrics,
      logger: slot.logger,
      random: () => 0.5,
    },
    {
      program: program.name,
      owner,
      remainingMs: slot.remainingMs,
      stopSignal: slot.stopSignal,
      // The next run waits for a holder's hand-over, or for a dead one's lease to expire.
      leaseWaitMs: 10_000,
      publish: { maxAttempts: 3 },
      startPosition: {
        position: startPositionOf(schedule),
        pageLimit: schedule.pageLimit,
        clockSkewAllowanceMs: schedule.clockSkewAllowanceMs,
      },
      feedMode: schedule.mode,
      heldBytes: schedule.heldEvents * ORDINARY_EVENT_FOOTPRINT,
    },
  );
}

/**
 * The sequence number of the event a schedule numbers implausibly far past the others, if it draws
 * one (`FaultSchedule.jump`, where the schedules have it): held by the cycle, never checkpointed.
 */
function jumpOf(schedule: FaultSchedule): number | undefined {
  return (schedule as { readonly jump?: { readonly sequenceNumber: number } | null }).jump?.sequenceNumber;
}

/** One worker's run: its process (which may die), its programs' turns; marks what a fault caught. */
async function workerRun(
  fleet: {
    readonly clock: FakeClock;
    readonly programs: readonly ProgramWorld[];
    readonly records: readonly ProgramRecord[];
  },
  run: {
    readonly index: number;
    readonly worker: number;
    readonly workerCount: number;
    readonly crashAfter?: number;
  },
  maxConcurrentPrograms: number,
  modules: FleetModules,
): Promise<void> {
  const { clock } = fleet;
  const process = new Process(run.crashAfter, () => {});
  const byName = new Map(fleet.programs.map((program) => [program.name, program]));
  const unsettled = new Set<ProgramWorld>();
  await modules.runWorker(
    {
      registry: new MemoryProgramRegistry(fleet.records),
      clock,
      logger: new RecordingLogger(),
      metrics: new RecordingMetrics(),
      observe: () => ({ metrics: new RecordingMetrics(), logger: new RecordingLogger(), flush: () => {} }),
      runProgram: async (record, slot) => {
        const program = byName.get(record.name)!;
        unsettled.add(program);
        program.lastTurn = 'hung';
        try {
          const summary = await programCycle(
            modules.cycle,
            program,
            process,
            clock,
            `run-${run.index}-w${run.worker}`,
            slot,
          );
          program.lastTurn = 'completed';
          return summary;
        } catch (error) {
          program.lastTurn = 'failed';
          program.faults += 1;
          program.timeline.push({ kind: 'mark', label: 'failed' });
          throw error;
        } finally {
          unsettled.delete(program);
        }
      },
    },
    { worker: run.worker, workerCount: run.workerCount, remainingMs: RUN_MS, maxConcurrentPrograms },
  );
  // What a dead (or left-behind) cycle had in flight has landed by now: the mark closes its window.
  for (const program of unsettled) {
    program.faults += 1;
    program.timeline.push({ kind: 'mark', label: process.dead ? 'crash' : 'left behind' });
  }
}

export type FleetReport = ReadonlyArray<
  InvariantReport & {
    readonly program: string;
    readonly caughtUp: boolean;
    readonly faults: number;
    readonly jumpQuarantines: number;
    readonly jumpPassed: boolean;
  }
>;

/** Runs the fleet's workers, run after run, until the schedule is spent and every program caught up. */
export async function runFleet(
  fleetSchedule: FleetSchedule,
  modules: FleetModules = FLEET_MODULES,
): Promise<FleetReport> {
  const clock = new FakeClock();
  const firstRunAt = clock.now();
  const programs = fleetSchedule.programs.map((schedule, index) =>
    world(`program-${index}`, schedule, clock, firstRunAt, modules.cycle),
  );
  const records = programs.map(
    (program): ProgramRecord => ({
      name: program.name,
      secretId: `bep/Test/${program.name}`,
      state: 'active',
      owner: 'operator',
      settings: {},
      revision: 1,
    }),
  );
  const lastCrashRun = Math.max(-1, ...fleetSchedule.crashes.map((crash) => crash.run));
  for (let index = 0; index < MAX_RUNS; index += 1) {
    const counts = fleetSchedule.workerCounts;
    const workerCount = counts[Math.min(index, counts.length - 1)]!;
    await Promise.all(
      Array.from({ length: workerCount }, (_, worker) => {
        const crash = fleetSchedule.crashes.find((each) => each.run === index && each.worker === worker);
        return workerRun(
          { clock, programs, records },
          { index, worker, workerCount, ...(crash === undefined ? {} : { crashAfter: crash.afterCalls }) },
          fleetSchedule.maxConcurrentPrograms,
          modules,
        );
      }),
    );
    const states = await Promise.all(programs.map((program) => program.store.read()));
    const caughtUp = programs.every(
      (program, at) => program.lastTurn === 'completed' && (states[at]!.checkpoint ?? 0) >= program.highest,
    );
    const arrived = programs.every((program) => clock.now() >= program.lastArrivalAt);
    if (index > lastCrashRun && arrived && caughtUp) break;
  }
  return Promise.all(programs.map((program) => reportOf(program, firstRunAt)));
}

async function reportOf(program: ProgramWorld, firstRunAt: number) {
  const state = await program.store.read();
  const finalCheckpoint = state.checkpoint;
  // `latest` counts from the program's own first run (its row's first lease), which in a fleet may
  // come after the fleet's first: its turn later in a run, or its first worker killed before it.
  const programFirstRunAt = state.firstLeasedAt ?? firstRunAt;
  const jump = jumpOf(program.schedule);
  const delivered = program.sink.accepted.map((event) => ({
    detailType: event.type,
    detail: JSON.parse(event.detail) as Record<string, unknown>,
  }));
  // A held jump's quarantined copies are counted apart, as the single program's property does: a
  // fault between the copy and its record may send one again.
  const isJumpQuarantine = (delivery: (typeof delivered)[number]) =>
    jump !== undefined && delivery.detailType === 'invalid_event' && delivery.detail.sequence_number === jump;
  const report = checkDeliveryInvariant({
    feed: program.records.map(bankEvent),
    passedOver: program.records
      .filter((record) => passedOverByStart(program.schedule, record, programFirstRunAt))
      .map(bankEvent),
    delivered: delivered.filter((delivery) => !isJumpQuarantine(delivery)),
    timeline: program.timeline.entries,
    finalCheckpoint,
  });
  return {
    ...report,
    program: program.name,
    caughtUp: (finalCheckpoint ?? 0) >= program.highest,
    faults: program.faults,
    jumpQuarantines: delivered.filter(isJumpQuarantine).length,
    jumpPassed:
      jump !== undefined &&
      program.timeline.entries.some((entry) => entry.kind === 'commit-requested' && entry.checkpoint >= jump),
  };
}

/** The property itself: what every drawn fleet must satisfy, for each of its programs. */
function fleetNoLossProperty(modules: FleetModules) {
  return fc.asyncProperty(fleetArbitrary, async (fleetSchedule) => {
    const reports = await runFleet(fleetSchedule, modules);
    const context = `fleet ${JSON.stringify(fleetSchedule)}`;
    for (const report of reports) {
      expect(report.lost, `${report.program}: ${context}`).toEqual([]);
      expect(report.violations, `${report.program}: ${context}`).toEqual([]);
      expect(report.caughtUp, `${report.program}: ${context}`).toBe(true);
      // A held jump (where schedules draw one): never passed, quarantined at most once per fault and once more.
      expect(report.jumpPassed, `${report.program}: ${context}`).toBe(false);
      expect(report.jumpQuarantines, `${report.program}: ${context}`).toBeLessThanOrEqual(1 + report.faults);
    }
  });
}

/**
 * Checks the property for `numRuns` drawn fleets. The seed is fixed by default (the run is the same
 * every time); FC_SEED explores others. Every failure names its seed.
 */
export async function assertFleetNoLossProperty(options: { numRuns: number; seed: number }): Promise<void> {
  await fc.assert(fleetNoLossProperty(FLEET_MODULES), { numRuns: options.numRuns, seed: options.seed });
}

/** Runs the property against `modules` (a mutant's) and returns fast-check's verdict, stopping at the first failure. */
export function checkFleetNoLossProperty(
  modules: FleetModules,
  options: { numRuns: number; seed: number },
): Promise<fc.RunDetails<[FleetSchedule]>> {
  return fc.check(fleetNoLossProperty(modules), {
    numRuns: options.numRuns,
    seed: options.seed,
    endOnFailure: true,
  });
}

import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type CheckpointState, EMPTY_CHECKPOINT_STATE } from '../../core/checkpoint/index.ts';
import { ConfigurationError } from '../../core/errors.ts';
import { MemoryCheckpointStore } from './memory-checkpoint-store.ts';

/**
 * The local mode's checkpoint: a small JSON file, written atomically (temp file + rename) so a
 * Ctrl-C mid-write never leaves a torn checkpoint behind.
 */
export class FileCheckpointStore extends MemoryCheckpointStore {
  readonly #path: string;

  constructor(path: string, options: { now?: () => number; program?: string } = {}) {
    super(options);
    this.#path = path;
  }

  protected override async load(): Promise<CheckpointState> {
    let text: string;
    try {
      text = await readFile(this.#path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY_CHECKPOINT_STATE;
      throw error;
    }
    try {
      const parsed = JSON.parse(text) as CheckpointState;
      if (parsed.checkpoint !== null && !Number.isSafeInteger(parsed.checkpoint))
        throw new TypeError('checkpoint');
      if (parsed.highestSeen != null && !Number.isSafeInteger(parsed.highestSeen))
        throw new TypeError('highestSeen');
      return {
        checkpoint: parsed.checkpoint,
        updatedAt: parsed.updatedAt ?? null,
        lease: parsed.lease ?? null,
        feedProgramId: parsed.feedProgramId ?? null,
        openGaps: parsed.openGaps ?? [],
        ...(parsed.newestCreatedDt == null ? {} : { newestCreatedDt: parsed.newestCreatedDt }),
        ...(parsed.lastCycle == null ? {} : { lastCycle: parsed.lastCycle }),
        ...(parsed.lastError == null ? {} : { lastError: parsed.lastError }),
        ...(parsed.firstLeasedAt == null ? {} : { firstLeasedAt: parsed.firstLeasedAt }),
        ...(parsed.start == null ? {} : { start: parsed.start }),
        ...(parsed.highestSeen == null ? {} : { highestSeen: parsed.highestSeen }),
        ...(parsed.heldJumps == null ? {} : { heldJumps: parsed.heldJumps }),
      };
    } catch (cause) {
      throw new ConfigurationError(
        `Checkpoint file ${this.#path} is not valid; fix or delete it (deleting restarts from the beginning)`,
        { path: this.#path },
        cause,
      );
    }
  }

  protected override async save(next: CheckpointState): Promise<void> {
    await mkdir(dirname(this.#path), { recursive: true });
    const temporary = `${this.#path}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(next, null, 2)}\n`, 'utf8');
    await rename(temporary, this.#path);
  }
}

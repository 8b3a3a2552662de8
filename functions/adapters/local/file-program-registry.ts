/**
 * Program records in a JSON file, for the CLI's local runs: `{"programs": [<record>, …]}`, each
 * record as the deployment's table holds it. Written atomically (temp file + rename), as the
 * checkpoint file is. Writes are safe within one process; two processes editing one file at once
 * are not guarded (a deployment's table is).
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigurationError } from '../../core/errors.ts';
import { MAX_REGISTRY_PROGRAMS } from '../../core/fleet/program-registry.ts';
import { isJsonObject } from '../../core/json-object.ts';
import { MemoryProgramRegistry } from './memory-program-registry.ts';

/** The largest file read: 10,000 records of a few hundred bytes, with room to spare. */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

export class FileProgramRegistry extends MemoryProgramRegistry {
  readonly #path: string;

  constructor(path: string) {
    super();
    this.#path = path;
  }

  protected override where(index: number): string {
    return `${this.#path}: programs[${index}]`;
  }

  protected override async load(): Promise<readonly unknown[]> {
    let text: string;
    try {
      text = await readFile(this.#path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const invalid = (problem: string): never => {
      throw new ConfigurationError(
        `Program file ${this.#path} ${problem}; expected {"programs": [<record>, …]}`,
        {
          path: this.#path,
        },
      );
    };
    if (text.length > MAX_FILE_BYTES) invalid(`is larger than ${MAX_FILE_BYTES} bytes`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return invalid('is not valid JSON');
    }
    const programs = isJsonObject(parsed) ? parsed.programs : undefined;
    if (!Array.isArray(programs)) return invalid('has no "programs" list');
    if (programs.length > MAX_REGISTRY_PROGRAMS) invalid(`holds more than ${MAX_REGISTRY_PROGRAMS} programs`);
    return programs;
  }

  protected override async save(items: readonly unknown[]): Promise<void> {
    await mkdir(dirname(this.#path), { recursive: true });
    const temporary = `${this.#path}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify({ programs: items }, null, 2)}\n`, 'utf8');
    await rename(temporary, this.#path);
  }
}

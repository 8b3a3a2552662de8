/**
 * A Vitest reporter that says where a run's time went, after the default reporter's summary: the
 * global setups (from the run's start to its first test file), then per project the span from its
 * first file's start to its last file's end, its files and tests, and its slowest files. Projects
 * overlap when several workers run: the spans are wall-clock, each file's time is its own.
 *
 * Used by vitest.config.ts next to the default reporter; CI prints it with the rest of the log.
 */
import type { Reporter, TestModule, TestSpecification } from 'vitest/node';

/** How many of a project's slowest files are named. */
const SLOWEST = 3;

interface ProjectSpan {
  start: number;
  end: number;
  readonly files: { readonly name: string; readonly ms: number }[];
  tests: number;
}

const seconds = (ms: number): string => `${(ms / 1_000).toFixed(1)} s`;

export default class TimingReporter implements Reporter {
  #runStart = 0;
  #firstFile: number | undefined;
  readonly #starts = new Map<string, number>();
  readonly #projects = new Map<string, ProjectSpan>();

  onTestRunStart(_specifications: ReadonlyArray<TestSpecification>): void {
    this.#runStart = Date.now();
  }

  onTestModuleStart(module: TestModule): void {
    const now = Date.now();
    this.#firstFile ??= now;
    this.#starts.set(module.moduleId, now);
  }

  onTestModuleEnd(module: TestModule): void {
    const end = Date.now();
    const start = this.#starts.get(module.moduleId) ?? end;
    const name = module.project.name;
    const span = this.#projects.get(name) ?? { start, end, files: [], tests: 0 };
    span.start = Math.min(span.start, start);
    span.end = Math.max(span.end, end);
    span.files.push({ name: module.relativeModuleId, ms: end - start });
    span.tests += [...module.children.allTests()].length;
    this.#projects.set(name, span);
  }

  onTestRunEnd(): void {
    if (this.#projects.size === 0) return;
    const end = Date.now();
    const lines = [`timing: ${seconds(end - this.#runStart)} in all`];
    lines.push(
      `  until the first file (the global setups)  ${seconds((this.#firstFile ?? end) - this.#runStart)}`,
    );
    const projects = [...this.#projects.entries()].sort(([, a], [, b]) => a.start - b.start);
    for (const [name, span] of projects) {
      const slowest = [...span.files]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, SLOWEST)
        .map((file) => `${file.name} ${seconds(file.ms)}`)
        .join(', ');
      lines.push(
        `  ${name.padEnd(12)} ${seconds(span.end - span.start).padStart(8)} wall (from +${seconds(span.start - this.#runStart)}), ` +
          `${span.files.length} files, ${span.tests} tests; slowest: ${slowest}`,
      );
    }
    console.log(`\n${lines.join('\n')}`);
  }
}

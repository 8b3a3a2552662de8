/**
 * Where a drain's CPU goes, from a V8 CPU profile of the handler's process: the handler is bundled
 * as it ships but not minified, so every sample's line falls in a module esbuild marked with a
 * `// <path>` comment, and each module in a category: the AWS SDK, undici (the banking service's
 * HTTP client and PutEvents'), Powertools, our own code, Node's internals, and the garbage
 * collector. Profiling adds overhead; the shares, not the absolute times, are what it is for.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { pollerEsbuildOptions } from '../../scripts/build/artifacts.ts';

export const CPU_CATEGORIES = [
  'AWS SDK',
  'undici',
  'Powertools',
  'our code',
  'Node internals',
  'GC',
  'other',
] as const;
export type CpuCategory = (typeof CPU_CATEGORIES)[number];

/** The handler, bundled with the shipped settings but readable: one line range per module. */
export async function buildProfilingBundle(entry: string, outdir: string): Promise<string> {
  const outfile = path.join(outdir, 'index.mjs');
  await build({
    ...pollerEsbuildOptions(entry, outfile),
    minify: false,
    sourcemap: false,
    logLevel: 'silent',
  });
  return outfile;
}

interface ProfileNode {
  readonly id: number;
  readonly children?: readonly number[];
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Module start lines of an unminified esbuild bundle: `// node_modules/undici/lib/…` and the like. */
function moduleStarts(bundle: string): Array<{ line: number; module: string }> {
  const starts: Array<{ line: number; module: string }> = [];
  bundle.split('\n').forEach((text, index) => {
    const match = /^\/\/ ((?:node_modules|functions|infra)\/\S+)$/.exec(text);
    if (match) starts.push({ line: index, module: match[1]! });
  });
  return starts;
}

function moduleAt(starts: ReadonlyArray<{ line: number; module: string }>, line: number): string | undefined {
  let low = 0;
  let high = starts.length - 1;
  let found: string | undefined;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    if (starts[middle]!.line <= line) {
      found = starts[middle]!.module;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}

function categoryOf(
  node: ProfileNode,
  bundleUrlSuffix: string,
  starts: ReturnType<typeof moduleStarts>,
): CpuCategory | 'idle' {
  const { functionName, url, lineNumber } = node.callFrame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)' || functionName === '(root)') return 'idle';
  if (functionName === '(program)') return 'other';
  if (url.startsWith('node:') || url === '' || !url.endsWith(bundleUrlSuffix)) return 'Node internals';
  const module = moduleAt(starts, lineNumber) ?? '';
  if (/node_modules\/(@aws-sdk|@smithy|@aws-crypto|@aws\/)/.test(module)) return 'AWS SDK';
  if (module.includes('node_modules/undici')) return 'undici';
  if (module.includes('node_modules/@aws-lambda-powertools')) return 'Powertools';
  if (module.startsWith('functions/')) return 'our code';
  return 'other';
}

/** CPU milliseconds per category in the profiles found in `dir`, for the bundle `bundlePath`. */
export function cpuBreakdown(dir: string, bundlePath: string): Record<CpuCategory, number> {
  const starts = moduleStarts(readFileSync(bundlePath, 'utf8'));
  const totals = Object.fromEntries(CPU_CATEGORIES.map((category) => [category, 0])) as Record<
    CpuCategory,
    number
  >;
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
    const categories = new Map(
      profile.nodes.map((node) => [node.id, categoryOf(node, path.basename(bundlePath), starts)]),
    );
    profile.samples.forEach((id, index) => {
      const category = categories.get(id);
      if (category === undefined || category === 'idle') return;
      totals[category] += (profile.timeDeltas[index] ?? 0) / 1000;
    });
  }
  return totals;
}

/** The functions with the most samples, for a closer look (not part of the benchmark's results). */
export function topFunctions(dir: string, bundlePath: string, count: number): string[] {
  const starts = moduleStarts(readFileSync(bundlePath, 'utf8'));
  const byName = new Map<string, number>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    profile.samples.forEach((id) => {
      const node = nodes.get(id)!;
      const { functionName, url, lineNumber } = node.callFrame;
      const where = url.endsWith(path.basename(bundlePath)) ? (moduleAt(starts, lineNumber) ?? '?') : url;
      const key = `${functionName || '(anonymous)'} @ ${where}`;
      byName.set(key, (byName.get(key) ?? 0) + 1);
    });
  }
  return [...byName.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, samples]) => `${samples} ${key}`);
}

/** Inclusive samples (self and callees) of our own functions, for a closer look. */
export function inclusiveOwnFunctions(dir: string, bundlePath: string, count: number): string[] {
  const starts = moduleStarts(readFileSync(bundlePath, 'utf8'));
  const totals = new Map<string, number>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
    const self = new Map<number, number>();
    for (const id of profile.samples) self.set(id, (self.get(id) ?? 0) + 1);
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const inclusive = new Map<number, number>();
    const total = (id: number): number => {
      const known = inclusive.get(id);
      if (known !== undefined) return known;
      const node = byId.get(id)!;
      const sum =
        (self.get(id) ?? 0) + (node.children ?? []).reduce((acc: number, child) => acc + total(child), 0);
      inclusive.set(id, sum);
      return sum;
    };
    const visit = (id: number, active: Set<string>): void => {
      const node = byId.get(id)!;
      const { functionName, url, lineNumber } = node.callFrame;
      const module = url.endsWith(path.basename(bundlePath)) ? moduleAt(starts, lineNumber) : undefined;
      let key: string | undefined;
      if (module?.startsWith('functions/')) {
        key = `${functionName || '(anonymous)'} @ ${module}`;
        if (!active.has(key)) totals.set(key, (totals.get(key) ?? 0) + total(id));
      }
      const next = key === undefined ? active : new Set([...active, key]);
      for (const child of node.children ?? []) visit(child, next);
    };
    visit(profile.nodes[0]!.id, new Set());
  }
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([key, samples]) => `${samples} ${key}`);
}

/**
 * `cdk synth` of the app (infra/poller-app.ts, cdk-nag's checks on, as `npm run synth` runs it)
 * with n programs: the stack's resource count and template size, or the error that refused it
 * (CloudFormation's 500 resources per stack, which the CDK checks at synth). Each synth runs in a
 * child process of its own (`fleet-synth.ts --child`), so its time and peak memory are its own.
 *
 * A variant names the context the programs are given with: `props` (today's way, each program in
 * the `programs` context) or, when the construct offers it, the fleet's way (records, no
 * per-program resource).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SETTINGS } from '../../functions/settings/settings.ts';

export interface SynthVariant {
  readonly name: string;
  /** The app's context for `programs` programs. */
  context(programs: number): Record<string, unknown>;
}

export interface SynthFigures {
  readonly variant: string;
  readonly programs: number;
  /** Resources of the stack's template; absent when the synth was refused. */
  readonly resources?: number;
  /** The template's outputs (CloudFormation takes at most `TEMPLATE_QUOTAS.outputs`). */
  readonly outputs?: number;
  /** CloudFormation quotas the template is over (it would synthesize and fail to deploy). */
  readonly overQuotas?: readonly string[];
  readonly templateBytes?: number;
  /** The template's resources by type, the most frequent first (10 at most). */
  readonly resourceTypes?: Readonly<Record<string, number>>;
  /** Assets written beside the template (the seed list, the handler): bytes of each file. */
  readonly assetBytes?: number;
  readonly seconds: number;
  readonly peakRssMiB: number;
  /** Why the synth failed: the first line of its error. */
  readonly refused?: string;
  /** When refused for its size: the resources the stack would have held (the CDK's count). */
  readonly refusedResources?: number;
}

/** Program names `p00001`, `p00002`, … (valid program names, sortable). */
export function programNames(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `p${String(index + 1).padStart(5, '0')}`);
}

export const PROPS_VARIANT: SynthVariant = {
  // Before issue 35: a secret, a schedule and 5 alarms each; since: a secret each (the default).
  name: "programs in props, the construct's defaults",
  context: (programs) => ({ programs: programNames(programs).map((name) => ({ name })) }),
};

/**
 * Workers of the fleet variant at every program count (100 programs each at 1,000, as the fleet
 * bench runs them): the same at every count, so that what grows with programs shows alone.
 */
const FLEET_WORKERS = 10;

/**
 * The fleet's way (issue 35): the same programs in props, seeded as records, reading their secrets
 * under the deployment's prefix (`createProgramSecrets: false`), without per-program alarms, served
 * by `FLEET_WORKERS` workers. Undefined where the construct does not offer it yet.
 */
export const FLEET_VARIANT: SynthVariant | undefined =
  'createProgramSecrets' in SETTINGS && 'workerCount' in SETTINGS
    ? {
        name: `fleet: programs in props as records, createProgramSecrets false, ${FLEET_WORKERS} workers`,
        context: (programs) => ({
          programs: programNames(programs).map((name) => ({ name })),
          createProgramSecrets: false,
          perProgramAlarms: false,
          workers: FLEET_WORKERS,
        }),
      }
    : undefined;

/**
 * CloudFormation's quotas on a template (the CDK checks only the resources at synth): 500
 * resources, 200 outputs, 1 MB for a template deployed from S3, as `cdk deploy` does.
 */
export const TEMPLATE_QUOTAS = { resources: 500, outputs: 200, templateBytes: 1_000_000 } as const;

function overQuotas(resources: number, outputs: number, templateBytes: number): string[] {
  const over: string[] = [];
  if (resources > TEMPLATE_QUOTAS.resources)
    over.push(`${resources} resources > ${TEMPLATE_QUOTAS.resources}`);
  if (outputs > TEMPLATE_QUOTAS.outputs) over.push(`${outputs} outputs > ${TEMPLATE_QUOTAS.outputs}`);
  if (templateBytes > TEMPLATE_QUOTAS.templateBytes)
    over.push(`${templateBytes} bytes > ${TEMPLATE_QUOTAS.templateBytes} bytes`);
  return over;
}

const CHILD = path.join(import.meta.dirname, 'fleet-synth-child.ts');

/** Synthesizes the app with `programs` programs in a child process and measures the result. */
export function synthFigures(variant: SynthVariant, programs: number): SynthFigures {
  const outdir = mkdtempSync(path.join(tmpdir(), 'fleet-synth-'));
  const started = performance.now();
  try {
    const output = execFileSync(
      process.execPath,
      ['--import', 'tsx', CHILD, outdir, JSON.stringify(variant.context(programs))],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 },
    );
    const seconds = (performance.now() - started) / 1000;
    const child = JSON.parse(output.trim().split('\n').at(-1)!) as {
      template: string;
      peakRssMiB: number;
    };
    const templateFile = path.join(outdir, child.template);
    const template = JSON.parse(readFileSync(templateFile, 'utf8')) as {
      Resources?: Record<string, { Type: string }>;
      Outputs?: Record<string, unknown>;
    };
    const resources = Object.values(template.Resources ?? {});
    const byType = new Map<string, number>();
    for (const resource of resources) byType.set(resource.Type, (byType.get(resource.Type) ?? 0) + 1);
    const assetBytes = readdirSync(outdir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.parentPath !== outdir)
      .reduce((total, entry) => total + statSync(path.join(entry.parentPath, entry.name)).size, 0);
    return {
      variant: variant.name,
      programs,
      resources: resources.length,
      outputs: Object.keys(template.Outputs ?? {}).length,
      overQuotas: overQuotas(
        resources.length,
        Object.keys(template.Outputs ?? {}).length,
        statSync(templateFile).size,
      ),
      templateBytes: statSync(templateFile).size,
      resourceTypes: Object.fromEntries([...byType].sort((a, b) => b[1] - a[1]).slice(0, 10)),
      assetBytes,
      seconds: Math.round(seconds * 10) / 10,
      peakRssMiB: child.peakRssMiB,
    };
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? (error as Error).message);
    const line =
      stderr
        .split('\n')
        .map((text) => text.trim())
        .find((text) => /resources|Error/.test(text)) ?? stderr.trim().split('\n')[0];
    const counted = /Number of resources in stack '[^']*': (\d+)/.exec(stderr)?.[1];
    return {
      variant: variant.name,
      programs,
      seconds: Math.round(((performance.now() - started) / 1000) * 10) / 10,
      peakRssMiB: Number.NaN,
      refused: line?.slice(0, 300) ?? 'unknown error',
      ...(counted === undefined ? {} : { refusedResources: Number(counted) }),
    };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

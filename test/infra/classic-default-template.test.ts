/**
 * The classic bus stays the default, and a stack deployed from it sees only the changes a release
 * means to make: the cdk.json defaults synthesize to the template recorded in
 * classic-default-template.json, byte for byte. Recorded before the custom bus (issue 27), which
 * changed nothing of it. Changes made on purpose since are recorded in it, each in its own commit:
 * issue 32's sequence-jumps alarm, its dashboard line and `MAX_SEQUENCE_JUMP` (nothing stateful);
 * the fleet (issue 35): the programs table, the program seeding (its function, role, policy, log
 * group and custom resource), the worker schedule `ScheduleWorker0` in place of `ScheduleDefault`,
 * and in the function `PROGRAMS_TABLE`, `SECRETS_PREFIX`, `WORKER_COUNT`, `MAX_CONCURRENT_PROGRAMS`,
 * a scan of the programs table and the read of the secrets under the prefix, and the alarms over
 * every program (`ProgramsLag`, `ProgramsStall`, `ProgramsFailedEntries`, `ProgramsSequenceGaps`,
 * `ProgramsSequenceJumps`, `ProgramsLeaseBusy`: a program the CLI adds has no alarm of its own)
 * with `WorkerStall0`, in the dashboard's alarm list too (CHANGELOG.md lists them); issue 32's
 * oversize-pages alarms (`OversizePagesDefault`, `ProgramsOversizePages`) and their dashboard lines;
 * the `WorkerScheduleNames` output (doctor checks each worker's schedule). Only the
 * functions' asset keys are left out: each is the hash of its bundle, which every change to it moves.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, synthPollerApp } from './support/poller-app-fixture.ts';

interface Template {
  readonly Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
}

const RECORDED = path.join(REPO_ROOT, 'test/infra/classic-default-template.json');

/**
 * The template as CDK serializes it (keys in their order, every value with its type), the handler
 * asset's key replaced by `<asset>`. Serialized again here, so the recorded file's layout (the
 * formatter's) does not count.
 */
function withoutAssetKey(template: Template): string {
  const copy = structuredClone(template);
  for (const resource of Object.values(copy.Resources)) {
    const code = resource.Properties?.Code as { S3Key?: unknown } | undefined;
    if (resource.Type === 'AWS::Lambda::Function' && typeof code?.S3Key === 'string') code.S3Key = '<asset>';
  }
  return JSON.stringify(copy, null, 1);
}

describe('the classic default', () => {
  it('synthesizes the recorded template, byte for byte', () => {
    const synth = synthPollerApp();
    try {
      const current = withoutAssetKey(synth.template.toJSON() as Template);

      // Text, not objects: key order and each value's type count too.
      expect(current).toBe(withoutAssetKey(JSON.parse(readFileSync(RECORDED, 'utf8')) as Template));
    } finally {
      synth.dispose();
    }
  });

  it('gives the function none of the custom bus variables', () => {
    const synth = synthPollerApp();
    try {
      const [fn] = Object.values(
        synth.template.findResources('AWS::Lambda::Function', {
          Properties: { Handler: 'index.handler' },
        }),
      ) as { Properties: { Environment: { Variables: Record<string, unknown> } } }[];

      const variables = Object.keys(fn!.Properties.Environment.Variables);

      expect(variables).toContain('EVENT_BUS_NAME');
      expect(variables).not.toContain('EVENT_BUS_KIND');
      expect(variables).not.toContain('EVENT_GROUP_BY');
    } finally {
      synth.dispose();
    }
  });
});

/**
 * Rewrites test/infra/stateful-resources.json from the app as it synthesizes now: for each
 * recorded configuration, its stateful resources' logical ids and replacement properties.
 *
 * Run it only when a replacement is intended: that is a major release, with the migration written
 * in CHANGELOG.md (see docs/construct.md, "Versions and upgrades"). `npx tsx scripts/record-stateful-resources.ts`
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, synthPollerApp } from '../test/infra/support/poller-app-fixture.ts';
import {
  constructPaths,
  type StatefulResources,
  statefulResourcesOf,
} from '../test/infra/support/stateful-resources.ts';

interface RecordedConfiguration {
  readonly name: string;
  readonly description: string;
  readonly context: Readonly<Record<string, unknown>>;
  readonly resources: StatefulResources;
}

const RECORD = path.join(REPO_ROOT, 'test/infra/stateful-resources.json');

const record = JSON.parse(readFileSync(RECORD, 'utf8')) as { configurations: RecordedConfiguration[] };
const configurations = record.configurations.map((configuration): RecordedConfiguration => {
  const synth = synthPollerApp(configuration.context);
  try {
    const template = synth.template.toJSON() as Parameters<typeof statefulResourcesOf>[0];
    return { ...configuration, resources: statefulResourcesOf(template, constructPaths(synth.stack)) };
  } finally {
    synth.dispose();
  }
});
writeFileSync(RECORD, `${JSON.stringify({ ...record, configurations }, null, 2)}\n`);
console.log(`Recorded ${configurations.length} configuration(s) in ${path.relative(process.cwd(), RECORD)}`);

/**
 * A feed that skips numbers everywhere, on the shipped artifact: 10 000 skipped numbers in 5 000
 * ranges. The skipped numbers are remembered in the checkpoint item (`open_gaps`); it must stay
 * small (DynamoDB refuses items over 400 KB), and numbers the ledger lets go must still reach the
 * alarm. How CPU per event behaves is measured in `npm run bench:gaps`, not here.
 */
import { type AttributeValue, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { type RunningSimulator, startSimulator } from '../../../functions/simulator/banking-simulator.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import type { LambdaContainer } from '../../support/lambda-runtime/lambda-container.ts';
import { emfDocuments, pollerLambda, simulatorSecret } from '../../support/poller-lambda.ts';

const RANGES = 5_000;
/** DynamoDB's item size limit. */
const MAX_ITEM_BYTES = 400 * 1024;
/** The gap ledger's bound (`GAP_LEDGER_DEFAULTS.maxGaps`). */
const MAX_RANGES = 100;

let aws: MotoEnvironment;
let simulator: RunningSimulator;
let lambda: LambdaContainer;
let table: string;
const program = 'skips';

beforeAll(async () => {
  aws = useMotoEnvironment(inject('motoEndpoint'));
  table = await aws.createCheckpointTable();
  simulator = await startSimulator({ maxPollHoldMs: 200, unknownTypeRatio: 0, seed: 16_016 });
  for (let range = 0; range < RANGES; range += 1) {
    simulator.generate(1);
    simulator.skip(2);
  }
  simulator.generate(1);
  // A bus without rules: the volume is for the checkpoint item, not for moto's rule delivery.
  const { busName } = await aws.createRoutedBus([]);
  lambda = pollerLambda({
    artifact: inject('pollerArtifact'),
    motoEndpoint: inject('motoEndpoint'),
    secretId: await aws.createSecret(simulatorSecret(simulator)),
    checkpointTable: table,
    eventBusName: busName,
    timeoutMs: 20_000,
    environment: { DEFAULT_PROGRAM: program },
  });
});

afterAll(async () => {
  await lambda?.close();
  await simulator?.close();
  aws?.restore();
});

it('keeps the checkpoint item small and counts the skipped numbers it lets go as unfilled', async () => {
  const last = simulator.events().at(-1)!.sequence_number;
  let checkpoint: number | null = null;
  for (let invocation = 0; invocation < 8 && (checkpoint ?? 0) < last; invocation += 1) {
    const { outcome } = await lambda.invoke({});
    expect(outcome.kind).toBe('response');
    checkpoint = (outcome as { result: { checkpoint: number | null } }).result.checkpoint;
  }
  const item = (
    await aws.dynamodb.send(
      new GetItemCommand({
        TableName: table,
        Key: { pk: { S: `program#${program}` } },
        ConsistentRead: true,
      }),
    )
  ).Item!;
  const openGaps = JSON.parse(item.open_gaps!.S!) as Array<{ from: number; to: number }>;
  const unfilled = emfDocuments(lambda.output).reduce(
    (sum, document) => sum + (typeof document.GapsUnfilled === 'number' ? document.GapsUnfilled : 0),
    0,
  );

  expect(checkpoint).toBe(last);
  expect(itemBytes(item)).toBeLessThan(MAX_ITEM_BYTES / 20);
  // The newest ranges stay, up to the bound; the older ones were let go and counted.
  expect(openGaps).toHaveLength(MAX_RANGES);
  expect(openGaps.at(-1)).toMatchObject({ from: last - 2, to: last - 1 });
  expect(unfilled).toBe((RANGES - MAX_RANGES) * 2);
});

/** An item's size as DynamoDB counts it, near enough: attribute names plus their values' bytes. */
function itemBytes(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce(
    (sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(value.S ?? value.N ?? ''),
    0,
  );
}

/**
 * A bank that ignores `limit`, as deployed: every poll answers 65,000 events (about 9 MB) to a
 * request for 100, and the bus answers each PutEvents after 50 ms. The shipped bundle runs under
 * the Lambda runtime harness at 128 MB, with the V8 heap Lambda's Node runtime gives that memory
 * (its bootstrap: a tenth of the memory for the young generation, half of that per semi-space,
 * the rest old space: `--max-semi-space-size=6 --max-old-space-size=116`), so holding such pages
 * whole crashes it (V8 out of memory), and a run that cannot end in time is killed.
 *
 * Before the memory budget, this invocation crashed. Now it answers, within its time, having lost
 * nothing, and says the bank answered more than it asked for: a warning, and `OversizePages` with
 * the program's name even as a fleet sends its metrics (what the oversize-pages alarms read).
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { LimitIgnoringBank } from '../../support/limit-ignoring-bank.ts';
import { emfDocuments, pollerLambda, summaryOf } from '../../support/poller-lambda.ts';
import { SlowEventBus } from '../../support/slow-event-bus.ts';

let aws: MotoEnvironment;
let table: string;
const opened: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  aws = useMotoEnvironment(inject('motoEndpoint'));
  table = await aws.createCheckpointTable();
});
afterEach(async () => {
  for (const resource of opened.splice(0).reverse()) await resource.close();
});
afterAll(() => aws?.restore());

describe('a bank that ignores limit, as deployed at 128 MB', () => {
  it('answers within its time, without running out of memory, losing nothing and saying so', async () => {
    const bank = await LimitIgnoringBank.start({ total: 200_000, pageEvents: 65_000 });
    const bus = await SlowEventBus.start({ latencyMs: 50 });
    opened.push(bank, bus);
    const secretId = await aws.createSecret(bank.secretString());
    const program = aws.uniqueName('program');
    const lambda = pollerLambda({
      artifact: { ...inject('pollerArtifact'), memoryMb: 128 },
      motoEndpoint: inject('motoEndpoint'),
      secretId,
      checkpointTable: table,
      eventBusName: 'oversize-bus',
      timeoutMs: 8_000,
      // As a fleet sends its metrics: the alarm over every program reads the program's own copy.
      environment: {
        DEFAULT_PROGRAM: program,
        AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
        PROGRAM_METRICS: 'alarmed',
      },
    });
    opened.push(lambda);

    const invocation = await lambda.invoke({});

    // A crash (V8 out of memory) or a kill at the timeout is no response.
    const summary = summaryOf(invocation);
    expect(bank.polls[0]).toMatchObject({ limit: 100, answered: 65_000 });
    expect(summary.published).toBeGreaterThan(0);
    const item = await aws.dynamodb.send(
      new GetItemCommand({
        TableName: table,
        Key: { pk: { S: `program#${program}` } },
        ConsistentRead: true,
      }),
    );
    const checkpoint = Number(item.Item?.checkpoint?.N);
    expect(checkpoint).toBe(summary.checkpoint);
    expect(bus.missingThrough(checkpoint)).toEqual([]);
    // Said to the operator: a metric, and a line naming what was asked for.
    // Under PROGRAM_METRICS=alarmed, with its Program: what ProgramsOversizePages reads.
    const oversize = emfDocuments(invocation.stdout)
      .filter((document) => document.Program === program)
      .map((document) => document.OversizePages);
    expect(oversize.find((value) => typeof value === 'number' && value > 0)).toBeDefined();
    const output = invocation.stdout + invocation.stderr;
    expect(output).toMatch(
      /"level":"WARN","message":"The feed answered more events than the poll asked for[^\n]*"asked":100/,
    );
    for (const secret of bank.secrets) expect(output).not.toContain(secret);
  });
});

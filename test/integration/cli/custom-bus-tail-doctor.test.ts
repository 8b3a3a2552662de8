/**
 * `tail` and `doctor` on a Custom Event Bus, the CLI spawned as an operator runs it: the bus is
 * the stand-in (test/support/custom-bus/, every request checked against botocore's model and its
 * signature), which delivers to queues in moto; the stack's outputs and the checkpoint table are
 * in moto too. One bus state the stand-in cannot reach (CREATE_FAILED, with its StateReason) is
 * answered by a scripted loopback server.
 */
import { randomUUID } from 'node:crypto';
import { ListQueuesCommand } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { cborAnswer, decodedBody } from '../../support/cbor-responders.ts';
import { motoCliEnvironment, runCli, startCli } from '../../support/cli-process.ts';
import { type CustomBus, startCustomBus } from '../../support/custom-bus/index.ts';
import { createOutputsStack } from '../../support/moto-deployment.ts';
import { closeAll, type Responder, startScriptedServer } from '../../support/scripted-http-server.ts';
import { lines } from './cli-scenario.ts';

const ACCOUNT = '123456789012';
const DELIVERY_ROLE = `arn:aws:iam::${ACCOUNT}:role/bep-tail-delivery`;

interface Check {
  readonly check: string;
  readonly verdict: string;
  readonly detail: string;
  readonly fix?: string;
}

describe('tail and doctor on a Custom Event Bus', () => {
  let aws: MotoEnvironment;
  let bus: CustomBus | undefined;

  beforeAll(() => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
  });
  afterAll(() => aws.restore());
  afterEach(async () => {
    await bus?.close();
    bus = undefined;
    await closeAll();
  });

  const env = (busEndpoint: string) => ({
    ...motoCliEnvironment(inject('motoEndpoint')),
    AWS_ENDPOINT_URL_EVENTBRIDGEV2: busEndpoint,
  });

  /** A stack in moto whose outputs are those of a custom-bus deployment. */
  const createStack = async (outputs: Record<string, string>): Promise<string> => {
    const stackName = `CliCustomBusTail-${randomUUID().slice(0, 8)}`;
    await createOutputsStack(stackName, outputs);
    return stackName;
  };

  const startBus = async (): Promise<{ bus: CustomBus; busArn: string }> => {
    bus = await startCustomBus({ motoEndpoint: inject('motoEndpoint') });
    return { bus, busArn: bus.admin.createEventBus(aws.uniqueName('banking-events'), { retentionDays: 14 }) };
  };

  const publish = (
    target: CustomBus,
    busArn: string,
    entries: [source: string, type: string, sequence: number][],
  ) =>
    target.admin.putEvents({
      EventBusArn: busArn,
      Entries: entries.map(([source, type, sequence]) => ({
        Source: source,
        DetailType: type,
        Detail: JSON.stringify({ id: `evt-${sequence}`, sequence_number: sequence, type, data: {} }),
        SystemMetadata: { EventGroupId: 'program-1', DeduplicationId: `evt-${sequence}` },
      })),
    });

  it('tail subscribes a temporary queue from now on, prints each event with its group and bus sequence number, and removes both on SIGTERM', async () => {
    const { bus, busArn } = await startBus();
    publish(bus, busArn, [['banking.events', 'transaction', 1]]); // before tail: not shown (LATEST)
    const stackName = await createStack({
      EventBusKind: 'custom',
      EventBusName: 'banking-events',
      EventBusArn: busArn,
      EventSource: 'banking.events',
    });

    const tail = startCli(
      ['--stack', stackName, 'tail', '--type', 'transaction', '--delivery-role', DELIVERY_ROLE],
      {
        env: env(bus.endpoint),
      },
    );
    await tail.waitFor('stderr', /\(subscriber and queue (bep-tail-\w+)\)/);
    const name = /subscriber and queue (bep-tail-\w+)/.exec(tail.stderr())![1]!;
    publish(bus, busArn, [
      ['banking.events', 'transaction', 2],
      ['banking.events', 'account_status', 3],
      ['someone.else', 'transaction', 4],
      ['banking.events', 'transaction', 5],
    ]);
    await bus.settled();
    await tail.waitFor('stdout', /"sequence_number":5/);
    tail.child.kill('SIGTERM');
    const result = await tail.result;

    expect(result.code, result.stderr).toBe(0);
    // The bus's own sequence numbers, as it retained the events.
    const busSequence = new Map(
      bus.admin
        .retainedEvents(busArn)
        .map((event) => [
          (event.data.detail as { sequence_number: number }).sequence_number,
          event.sequenceNumber,
        ]),
    );
    const printed = lines(result.stdout).map(
      (line) =>
        JSON.parse(line) as {
          'detail-type': string;
          detail: { sequence_number: number };
          bus: { eventGroup: string; sequenceNumber: string };
        },
    );
    expect(
      printed.map((event) => [event['detail-type'], event.detail.sequence_number, event.bus.eventGroup]),
    ).toEqual([
      ['transaction', 2, 'program-1'],
      ['transaction', 5, 'program-1'],
    ]);
    expect(printed.map((event) => event.bus.sequenceNumber)).toEqual([
      busSequence.get(2),
      busSequence.get(5),
    ]);

    const created = bus.exchanges.find((exchange) => exchange.operation === 'CreateSubscriber')!.input!;
    expect(created).toMatchObject({
      Name: name,
      EventBusArn: busArn,
      InvokeConfiguration: { RoleArn: DELIVERY_ROLE, TargetArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:${name}` },
      Type: 'UNORDERED',
      StartingPosition: 'LATEST',
      Transformer: { Type: 'WITH_METADATA' },
    });
    expect(
      JSON.parse((created.FilterConfiguration as { Filters: { Pattern: string }[] }).Filters[0]!.Pattern),
    ).toEqual({
      source: ['banking.events'],
      'detail-type': ['transaction'],
    });
    expect(result.stderr).toContain(`Removed subscriber and queue ${name}.`);
    const deleted = bus.exchanges.filter((exchange) => exchange.operation === 'DeleteSubscriber');
    expect(deleted.map((exchange) => [exchange.input?.SubscriberArn, exchange.status])).toEqual([
      [expect.stringContaining(`:subscriber/${name}/`), 200],
    ]);
    expect((await aws.sqs.send(new ListQueuesCommand({ QueueNamePrefix: name }))).QueueUrls ?? []).toEqual(
      [],
    );
  });

  it('tail on a Custom Event Bus without --delivery-role says what it needs and creates nothing', async () => {
    const { bus, busArn } = await startBus();

    const result = await runCli(['tail', '--event-bus', busArn], { env: env(bus.endpoint) });
    const badRole = await runCli(['tail', '--event-bus', busArn, '--delivery-role', 'my-role'], {
      env: env(bus.endpoint),
    });

    expect([result.code, badRole.code]).toEqual([2, 2]);
    expect(result.stderr).toMatch(/needs a role EventBridge assumes/);
    expect(result.stderr).toMatch(/--delivery-role ARN/);
    expect(badRole.stderr).toMatch(/not an IAM role ARN/);
    expect(bus.exchanges).toEqual([]);
  });

  /** The bus's API scripted: DescribeEventBus answers `busState`, CreateSubscriber is refused as IAM refuses a PassRole. */
  const refusingBus =
    (busArn: string, busState: string): Responder =>
    (request, response) => {
      const operation = request.url.split('/').pop();
      if (operation === 'DescribeEventBus') {
        cborAnswer(200, { EventBusArn: busArn, Name: 'banking-events', State: busState })(request, response);
        return;
      }
      cborAnswer(403, {
        __type: 'AccessDeniedException',
        Message: 'not authorized to perform: iam:PassRole',
      })(request, response);
    };

  it('tail removes its queue when the subscriber cannot be created, and refuses a bus that is not ACTIVE', async () => {
    const busArn = `arn:aws:events:us-east-1:${ACCOUNT}:event-busv2/banking-events/0123456789abcdefghijklmno`;
    const active = await startScriptedServer(refusingBus(busArn, 'ACTIVE'));
    const creating = await startScriptedServer(refusingBus(busArn, 'CREATING'));
    const args = ['tail', '--event-bus', busArn, '--delivery-role', DELIVERY_ROLE];

    const refused = await runCli(args, { env: env(active.baseUrl) });
    const notActive = await runCli(args, { env: env(creating.baseUrl) });

    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/iam:PassRole/);
    const create = active.requests.find((request) => request.url.endsWith('/CreateSubscriber'))!;
    const name = (decodedBody(create) as { Name: string }).Name;
    expect(name).toMatch(/^bep-tail-[0-9a-f]{8}$/);
    expect(refused.stderr).toContain(`Removed queue ${name}.`);
    expect((await aws.sqs.send(new ListQueuesCommand({ QueueNamePrefix: name }))).QueueUrls ?? []).toEqual(
      [],
    );
    expect(notActive.code).toBe(2);
    expect(notActive.stderr).toMatch(/is CREATING, not ACTIVE/);
    expect(creating.requests.map((request) => request.url.split('/').pop())).toEqual(['DescribeEventBus']);
  });

  it("doctor checks the custom bus: ACTIVE, its retention against the stack's, each stack subscriber RUNNING", async () => {
    const { bus, busArn } = await startBus();
    const queueArn = `arn:aws:sqs:us-east-1:${ACCOUNT}:${aws.uniqueName('route')}`;
    const subscriber = (name: string) =>
      bus.admin.createSubscriber({
        Name: name,
        EventBusArn: busArn,
        InvokeConfiguration: { RoleArn: `arn:aws:iam::${ACCOUNT}:role/route`, TargetArn: queueArn },
        FilterConfiguration: { Filters: [{ Scope: 'DATA', Pattern: '{"source":["banking.events"]}' }] },
      });
    const transactions = subscriber('transactions');
    const unrouted = subscriber('unrouted');
    bus.admin.updateSubscriber({ SubscriberArn: unrouted, State: 'STOPPED' });
    const tableName = await aws.createCheckpointTable();
    const stackName = await createStack({
      Programs: 'default',
      CheckpointTableName: tableName,
      EventBusKind: 'custom',
      EventBusName: 'banking-events',
      EventBusArn: busArn,
      BusRetentionDays: '30',
      SubscriberArnTransaction: transactions,
      SubscriberArnUnrouted: unrouted,
    });

    const result = await runCli(['--stack', stackName, 'doctor', '--no-write-probes', '--json'], {
      env: env(bus.endpoint),
    });

    expect(result.code).toBe(1); // the stopped subscriber (and the bank checks: no function here)
    const checks = (JSON.parse(result.stdout) as { checks: Check[] }).checks;
    const byName = new Map(checks.map((check) => [check.check, check]));
    expect(byName.get('event bus')).toMatchObject({
      verdict: 'ok',
      detail: expect.stringMatching(/is ACTIVE/),
    });
    expect(byName.get('bus retention')).toMatchObject({
      verdict: 'warning',
      detail: expect.stringMatching(
        /^14 day\(s\), oldest event .*; the stack was deployed with 30 day\(s\)$/,
      ),
    });
    expect(byName.get('subscriber (Transaction)')).toMatchObject({
      verdict: 'ok',
      detail: 'transactions is RUNNING',
    });
    expect(byName.get('subscriber (Unrouted)')).toMatchObject({
      verdict: 'failed',
      detail: expect.stringMatching(/^unrouted is STOPPED/),
      fix: expect.stringContaining(
        `aws eventsv2 update-subscriber --subscriber-arn ${unrouted} --state RUNNING`,
      ),
    });
    // Describing only: no probe event is published to a bus that would retain it.
    expect(new Set(bus.exchanges.map((exchange) => exchange.operation))).toEqual(
      new Set(['DescribeEventBus', 'DescribeSubscriber']),
    );
    expect(bus.admin.retainedEvents(busArn)).toEqual([]);
  });

  it('doctor without a stack checks every subscriber of the bus but those tail and archive-replay made', async () => {
    const { bus, busArn } = await startBus();
    const queueArn = `arn:aws:sqs:us-east-1:${ACCOUNT}:${aws.uniqueName('route')}`;
    for (const name of ['ledger', 'bep-replay-20261126000000-abcd-1', 'bep-tail-0123abcd']) {
      const arn = bus.admin.createSubscriber({
        Name: name,
        EventBusArn: busArn,
        InvokeConfiguration: { RoleArn: `arn:aws:iam::${ACCOUNT}:role/route`, TargetArn: queueArn },
        FilterConfiguration: { Filters: [{ Scope: 'DATA', Pattern: '{"source":["banking.events"]}' }] },
      });
      if (name !== 'ledger') bus.admin.updateSubscriber({ SubscriberArn: arn, State: 'STOPPED' });
    }

    const result = await runCli(['doctor', '--event-bus', busArn, '--json'], { env: env(bus.endpoint) });

    const checks = (JSON.parse(result.stdout) as { checks: Check[] }).checks;
    const subscribers = checks.filter((check) => check.check.startsWith('subscriber'));
    expect(subscribers).toEqual([
      { check: 'subscriber (ledger)', verdict: 'ok', detail: 'ledger is RUNNING' },
    ]);
    expect(checks.find((check) => check.check === 'bus retention')).toMatchObject({
      verdict: 'ok',
      detail: expect.stringMatching(/^14 day\(s\), oldest event \d{4}-/),
    });
  });

  it('doctor reports a bus that is not ACTIVE with its state and StateReason, and one that does not exist', async () => {
    const busArn = `arn:aws:events:us-east-1:${ACCOUNT}:event-busv2/banking-events/0123456789abcdefghijklmno`;
    const failedBus = await startScriptedServer(
      cborAnswer(200, {
        EventBusArn: busArn,
        Name: 'banking-events',
        State: 'CREATE_FAILED',
        StateReason: 'The KMS key is disabled.',
        StorageConfiguration: { RetentionPeriodInDays: 14 },
      }),
    );
    const { bus } = await startBus();
    const missingArn = busArn.replace('banking-events', 'gone');

    const failedRun = await runCli(['doctor', '--event-bus', busArn, '--json'], {
      env: env(failedBus.baseUrl),
    });
    const missingRun = await runCli(['doctor', '--event-bus', missingArn, '--json'], {
      env: env(bus.endpoint),
    });

    expect([failedRun.code, missingRun.code]).toEqual([1, 1]);
    const busCheck = (run: { stdout: string }) =>
      (JSON.parse(run.stdout) as { checks: Check[] }).checks.find((check) => check.check === 'event bus');
    expect(busCheck(failedRun)).toMatchObject({
      verdict: 'failed',
      detail: 'banking-events is CREATE_FAILED: The KMS key is disabled.',
      fix: expect.stringMatching(/delete it .* deploy again/),
    });
    expect(busCheck(missingRun)).toMatchObject({
      verdict: 'failed',
      detail: expect.stringMatching(/does not exist/),
    });
  });

  it('doctor skips the bus checks of a stack that says custom but names no bus, and checks the rest', async () => {
    const tableName = await aws.createCheckpointTable();
    const stackName = await createStack({
      Programs: 'default',
      CheckpointTableName: tableName,
      EventBusKind: 'custom',
    });

    const result = await runCli(['--stack', stackName, 'doctor', '--no-write-probes', '--json'], {
      env: motoCliEnvironment(inject('motoEndpoint')),
    });

    const checks = (JSON.parse(result.stdout) as { checks: Check[] }).checks;
    expect(checks.find((check) => check.check === 'event bus')).toMatchObject({
      verdict: 'skipped',
      detail: expect.stringMatching(/has no output EventBusArn/),
    });
    expect(checks.find((check) => check.check === 'checkpoint table')).toMatchObject({ verdict: 'ok' });
  });
});

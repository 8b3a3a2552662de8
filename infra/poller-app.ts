import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { type AppConfig, parseAppConfig } from './app-config.ts';
import { PollerStack } from './poller-stack.ts';

export interface PollerAppOptions {
  /** Context as cdk.json and `-c` would give it; the CLI passes it through the environment instead. */
  readonly context?: Readonly<Record<string, unknown>>;
  /** Where to write the cloud assembly. @default - the CLI's choice, or a temporary directory */
  readonly outdir?: string;
}

export interface PollerApp {
  readonly app: App;
  readonly config: AppConfig;
  readonly stack: PollerStack;
}

/**
 * Context → typed config → stack, with cdk-nag's AWS Solutions checks on: synth fails on any
 * finding that is not acknowledged with a reason. Tests build the app through here too.
 */
export function createPollerApp(options: PollerAppOptions = {}): PollerApp {
  const app = new App({
    context: options.context ? { ...options.context } : undefined,
    outdir: options.outdir,
    analyticsReporting: false,
  });
  const config = parseAppConfig(app.node.getAllContext() as Record<string, unknown>);
  const stack = new PollerStack(app, config.stackName, {
    config,
    description:
      'Banking events poller: scheduled Lambda, EventBridge bus with routing, DynamoDB checkpoint, alarms',
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, config, stack };
}

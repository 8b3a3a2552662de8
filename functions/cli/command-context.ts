/**
 * What every command shares: the global flags (read once into a frozen object), the terminal,
 * and AWS clients closed when the command ends.
 */
import type { Command } from 'commander';
import { AwsClients } from './aws-clients.ts';
import { Deployment, type DeploymentFlags } from './deployment.ts';
import { processTerminal, type Terminal } from './terminal.ts';

export interface GlobalOptions {
  /** Machine-readable output on stdout. */
  readonly json: boolean;
  readonly profile?: string;
  readonly region?: string;
  readonly stack?: string;
  readonly color: boolean;
}

export interface CommandContext {
  readonly globals: GlobalOptions;
  readonly terminal: Terminal;
  readonly aws: AwsClients;
  /** Resource names from flags and `--stack`; read lazily, once. */
  deployment(flags?: Omit<DeploymentFlags, 'stack'>): Promise<Deployment>;
  /**
   * Closes `resource` when the command ends, however it ends (before the AWS clients): the
   * connections to the banking service a command opens, so none outlives it.
   */
  closeAtEnd(resource: { destroy(): Promise<void> }): void;
}

export function globalsOf(command: Command): GlobalOptions {
  const options = command.optsWithGlobals<{
    json?: boolean;
    profile?: string;
    region?: string;
    stack?: string;
    color?: boolean;
  }>();
  return Object.freeze({
    json: options.json === true,
    profile: options.profile,
    region: options.region,
    stack: options.stack,
    color: options.color !== false && process.env.NO_COLOR === undefined,
  });
}

/**
 * Runs `action` with a context built from `command`'s flags; what it opened (`closeAtEnd`), then
 * the AWS clients, are closed afterwards, on success and on error alike.
 */
export async function withContext<T>(
  command: Command,
  action: (context: CommandContext) => Promise<T>,
): Promise<T> {
  const globals = globalsOf(command);
  const aws = new AwsClients({ profile: globals.profile, region: globals.region });
  const opened: { destroy(): Promise<void> }[] = [];
  const context: CommandContext = {
    globals,
    terminal: processTerminal({ color: globals.color }),
    aws,
    deployment: (flags = {}) => Deployment.resolve(aws, { ...flags, stack: globals.stack }),
    closeAtEnd: (resource) => {
      opened.push(resource);
    },
  };
  try {
    return await action(context);
  } finally {
    // Each closed even if another fails to: the command's own error, if any, is the one reported.
    await Promise.allSettled(opened.map((resource) => resource.destroy()));
    aws.destroy();
  }
}

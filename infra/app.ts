#!/usr/bin/env node
// CDK app entry (cdk.json "app"). The CLI passes cdk.json context and -c overrides in; synth needs no AWS account.
import { createPollerApp } from './poller-app.ts';

try {
  createPollerApp();
} catch (error) {
  // Thrown by the context parser or by the construct (the built package, with its own copy of the
  // class): a ConfigurationError either way, known by its stable code.
  if ((error as { code?: unknown } | null)?.code !== 'CONFIGURATION_INVALID') throw error;
  // The message already names every key to fix; a stack trace would only bury it.
  console.error((error as Error).message);
  process.exitCode = 1;
}

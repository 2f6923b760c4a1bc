import { startDynamoProxy } from './dynamo-proxy.js';

/**
 * DynamoDB requests per calling function and operation, counted on the wire by a proxy in front of the emulator
 * (see dynamo-proxy.ts), not reported by the code under test.
 */
export interface RequestCounter {
  readonly endpoint: string;
  /** function → operation (e.g. `UpdateItem`) → count. */
  counts(): Record<string, Record<string, number>>;
  total(fn?: string): number;
  reset(): void;
  close(): Promise<void>;
}

export async function startRequestCounter(target: string): Promise<RequestCounter> {
  const counts = new Map<string, Map<string, number>>();
  const proxy = await startDynamoProxy(target, {
    request: ({ fn, op }) => {
      const byOp = counts.get(fn) ?? new Map<string, number>();
      byOp.set(op, (byOp.get(op) ?? 0) + 1);
      counts.set(fn, byOp);
      return undefined;
    },
  });
  return {
    endpoint: proxy.endpoint,
    counts: () => Object.fromEntries([...counts].map(([fn, ops]) => [fn, Object.fromEntries(ops)])),
    total: (fn) =>
      [...counts]
        .filter(([name]) => fn === undefined || name === fn)
        .reduce((sum, [, ops]) => sum + [...ops.values()].reduce((a, b) => a + b, 0), 0),
    reset: () => counts.clear(),
    close: () => proxy.close(),
  };
}

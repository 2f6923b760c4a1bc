/**
 * A loopback proxy in front of the DynamoDB emulator that measures what DynamoDB on-demand would bill: it adds
 * `ReturnConsumedCapacity: TOTAL` to every data-plane request and sums the capacity units the emulator reports
 * (dynalite sizes items like DynamoDB: writes ⌈size / 1 KB⌉ of the larger of old and new item, reads ⌈size / 4 KB⌉,
 * halved when eventually consistent). A conditional write that fails still consumes write capacity in DynamoDB
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithItems.html#WorkingWithItems.ConditionalUpdate),
 * but the emulator reports none for it: those are counted separately and billed as 1 WRU each by the cost model
 * (the gateway's conditional items — counters, locks — are far below 1 KB).
 *
 * Calls are attributed to a function by the SDK user agent (`app/wecom-gateway/<function>`), like the local
 * stack's request counter, which this proxy is chained in front of so that both count the same calls.
 */
import { startDynamoProxy } from '#local/dynamo-proxy.js';

export interface DynamoOpStats {
  requests: number;
  /** Write request units (capacity units reported on writes). */
  wru: number;
  /** Read request units. */
  rru: number;
  /** Conditional writes refused (ConditionalCheckFailedException). */
  failedConditional: number;
  /** Items written by BatchWriteItem. */
  items: number;
  /** Bytes of the items written by PutItem / BatchWriteItem (their marshalled JSON: a slight overestimate). */
  itemBytes: number;
  /** Sum of round-trip times through the emulator, ms. */
  totalMs: number;
}

export interface DynamoMeter {
  readonly endpoint: string;
  /** function → operation → stats. */
  stats(): Record<string, Record<string, DynamoOpStats>>;
  reset(): void;
  close(): Promise<void>;
}

const CAPACITY_OPS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'BatchGetItem',
  'Query',
  'Scan',
]);
const READ_OPS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan']);

export async function startDynamoMeter(target: string): Promise<DynamoMeter> {
  let stats = new Map<string, Map<string, DynamoOpStats>>();
  const statOf = (fn: string, op: string): DynamoOpStats => {
    const byOp = stats.get(fn) ?? new Map<string, DynamoOpStats>();
    stats.set(fn, byOp);
    let s = byOp.get(op);
    if (!s) {
      s = { requests: 0, wru: 0, rru: 0, failedConditional: 0, items: 0, itemBytes: 0, totalMs: 0 };
      byOp.set(op, s);
    }
    return s;
  };

  const proxy = await startDynamoProxy(target, {
    request: ({ fn, op }, body) => {
      if (!CAPACITY_OPS.has(op)) return undefined;
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      } catch {
        return undefined; // Not JSON: forward untouched; the emulator answers the error.
      }
      const s = statOf(fn, op);
      if (op === 'BatchWriteItem') {
        for (const list of Object.values((input.RequestItems ?? {}) as Record<string, unknown[]>)) {
          s.items += list.length;
          for (const r of list as { PutRequest?: { Item?: unknown } }[])
            if (r.PutRequest?.Item) s.itemBytes += Buffer.byteLength(JSON.stringify(r.PutRequest.Item));
        }
      }
      if (op === 'PutItem' && input.Item) s.itemBytes += Buffer.byteLength(JSON.stringify(input.Item));
      if (input.ReturnConsumedCapacity !== undefined) return undefined;
      input.ReturnConsumedCapacity = 'TOTAL';
      return Buffer.from(JSON.stringify(input));
    },
    response: ({ fn, op }, status, body, elapsedMs) => {
      const s = statOf(fn, op);
      s.requests++;
      s.totalMs += elapsedMs;
      account(s, op, status, body);
    },
  });
  return {
    endpoint: proxy.endpoint,
    stats: () =>
      Object.fromEntries(
        [...stats].map(([fn, byOp]) => [fn, Object.fromEntries([...byOp].map(([op, s]) => [op, { ...s }]))]),
      ),
    reset: () => {
      stats = new Map();
    },
    close: () => proxy.close(),
  };
}

function account(s: DynamoOpStats, op: string, status: number, text: Buffer): void {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text.toString('utf8')) as Record<string, unknown>;
  } catch {
    return;
  }
  if (status >= 400) {
    if (String(parsed.__type ?? '').endsWith('ConditionalCheckFailedException')) s.failedConditional++;
    return;
  }
  const consumed = parsed.ConsumedCapacity;
  const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  const units = list.reduce((n: number, c: { CapacityUnits?: number }) => n + (c.CapacityUnits ?? 0), 0);
  if (READ_OPS.has(op)) s.rru += units;
  else s.wru += units;
}

/** Sums per-operation stats over functions (or one function). */
export function totals(
  stats: Record<string, Record<string, DynamoOpStats>>,
  fn?: string,
): DynamoOpStats & { byOp: Record<string, number> } {
  const sum = {
    requests: 0,
    wru: 0,
    rru: 0,
    failedConditional: 0,
    items: 0,
    itemBytes: 0,
    totalMs: 0,
    byOp: {} as Record<string, number>,
  };
  for (const [f, byOp] of Object.entries(stats)) {
    if (fn !== undefined && f !== fn) continue;
    for (const [op, s] of Object.entries(byOp)) {
      sum.requests += s.requests;
      sum.wru += s.wru;
      sum.rru += s.rru;
      sum.failedConditional += s.failedConditional;
      sum.items += s.items;
      sum.itemBytes += s.itemBytes;
      sum.totalMs += s.totalMs;
      sum.byOp[op] = (sum.byOp[op] ?? 0) + s.requests;
    }
  }
  return sum;
}

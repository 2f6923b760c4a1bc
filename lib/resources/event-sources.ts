import type { LaneName } from './queues.js';

/** Sender event source mapping settings, per lane. */
export interface EventSourceDefinition {
  readonly queueId: LaneName;
  readonly functionId: 'sender';
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  /** Lambda's SQS maxConcurrency (min 2). */
  readonly maxConcurrency: number;
}

/**
 * The notify function's event source: at most 5 invocations of 10 webhooks at once, a bound on the load the
 * gateway puts on the businesses' receivers (and on its own outbound connections).
 */
export const NOTIFY_EVENT_SOURCE = {
  queueId: 'notify',
  functionId: 'notify',
  batchSize: 10,
  maxBatchingWindowSeconds: 0,
  maxConcurrency: 5,
} as const;

/** Default reserved concurrency of the sender: the bound on parallel pressure on WeCom. */
export const DEFAULT_SENDER_CONCURRENCY = 6;

/**
 * Splits the sender's reserved concurrency between the two lanes. The sum of the event sources'
 * maxConcurrency must not exceed reserved concurrency, or Lambda throttles SQS invocations and the
 * throttled receives count toward maxReceiveCount. High gets a third (at least 2, Lambda's minimum);
 * it carries alerts, which are few but must not wait behind the normal backlog.
 */
export function senderEventSources(
  reservedConcurrency = DEFAULT_SENDER_CONCURRENCY,
): EventSourceDefinition[] {
  if (!Number.isInteger(reservedConcurrency) || reservedConcurrency < 4) {
    throw new RangeError(
      `sender concurrency must be an integer >= 4 (2 per lane, Lambda's minimum), got ${reservedConcurrency}`,
    );
  }
  const high = Math.max(2, Math.floor(reservedConcurrency / 3));
  const common = { functionId: 'sender', batchSize: 10, maxBatchingWindowSeconds: 0 } as const;
  return [
    { ...common, queueId: 'high', maxConcurrency: high },
    { ...common, queueId: 'normal', maxConcurrency: reservedConcurrency - high },
  ];
}

/**
 * The sender's lanes as a deployed stack consumes them, fed by the bench's event source mapping emulation
 * (local/poller.ts with `senderPollerOptions`: one poller per lane, the lane's batch size and maxConcurrency from
 * lib/resources `senderEventSources`), invoking either the bundled sender or its fair baseline consumer
 * (children/sender-baseline.ts). Whatever runs behind it, the SQS side is the same: same receives, same batches,
 * same deletes, same concurrency — so a difference between the two is the consumer's.
 *
 * Two layouts:
 * - `one-process`: one process takes every concurrent invocation (6 batches at once with the default concurrency),
 *   as the `isolated` metric has always measured the sender: cheap, one CPU figure;
 * - `containers`: one process per concurrency slot, each taking one invocation at a time, as Lambda runs
 *   containers (each with its own token memory, sockets and quota blocks).
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import {
  DEFAULT_SENDER_CONCURRENCY,
  type EventSourceDefinition,
  senderEventSources,
} from '#lib/resources/index.js';
import { type Poller, senderPollerOptions, startPoller } from '#local/poller.js';
import { LOCAL_REGION } from '#local/stack.js';
import {
  type FunctionHost,
  type ProcessOptions,
  type SqsFunctionProcess,
  startSqsFunctionProcess,
} from './functions.js';

export type ConsumerLayout = 'one-process' | 'containers';

/**
 * Long-poll wait of the fleet's receives. Lambda's pollers wait 20 s, but a poller stopped between two drains leaves
 * its long poll open in the emulator (local/poller.ts `stop`), where it would take the next backlog's first
 * messages out of sight for a visibility timeout. While a backlog waits, every receive returns at once whatever
 * the wait, so a drain sees the same SQS either way.
 */
export const POLL_WAIT_SECONDS = 2;
/** How long to wait after stopping a fleet before loading the next backlog. */
export const LINGERING_POLL_MS = POLL_WAIT_SECONDS * 1_000 + 500;

export interface ConsumerFleetOptions extends ProcessOptions {
  readonly kind: 'sender' | 'sender-baseline';
  readonly layout: ConsumerLayout;
  /** Reserved concurrency split over the lanes as the stack splits it; default the stack's. */
  readonly concurrency?: number;
}

/** One handler invocation as the event source mapping emulation saw it. */
export interface Invocation {
  readonly startedAt: number;
  readonly ms: number;
  readonly records: number;
  readonly failed: number;
}

export interface ConsumerFleet {
  readonly kind: ConsumerFleetOptions['kind'];
  readonly processes: readonly SqsFunctionProcess[];
  readonly sources: readonly EventSourceDefinition[];
  /** Starts the lanes' pollers (idempotent). */
  startPolling(): void;
  /** CPU time all the consumer's processes used so far, ms. */
  cpuMs(): Promise<number>;
  /** Highest VmHWM over the processes, bytes. */
  peakRssBytes(): Promise<number>;
  /** Every invocation so far. */
  invocations(): readonly Invocation[];
  /** First time each recipient (`touser` joined by `|`, lower-cased as WeCom folds it) was handed to a consumer. */
  handedAt(): ReadonlyMap<string, number>;
  /** Most invocations that were running at the same moment. */
  maxBusy(): number;
  stop(): Promise<void>;
}

/** Starts the consumer's processes (not yet polling). */
export async function startConsumerFleet(
  gw: FunctionHost,
  dir: string,
  opts: ConsumerFleetOptions,
): Promise<ConsumerFleet> {
  const sources = senderEventSources(opts.concurrency ?? DEFAULT_SENDER_CONCURRENCY);
  const slots = sources.reduce((n, s) => n + s.maxConcurrency, 0);
  const batchSize = Math.max(...sources.map((s) => s.batchSize));
  const count = opts.layout === 'containers' ? slots : 1;
  const perProcess = opts.layout === 'containers' ? 1 : slots;
  const processes: SqsFunctionProcess[] = [];
  try {
    for (let i = 0; i < count; i++) {
      processes.push(
        await startSqsFunctionProcess(gw, dir, opts.kind, {
          ...opts,
          // The baseline's pool: one socket per message it may have in flight.
          connections: batchSize * perProcess,
        }),
      );
    }
  } catch (err) {
    await Promise.all(processes.map((p) => p.stop()));
    throw err;
  }
  const dispatch = opts.layout === 'containers' ? containerDispatch(processes) : processes[0]?.invoke;
  if (!dispatch) throw new Error('no consumer process');

  const invocations: Invocation[] = [];
  const handed = new Map<string, number>();
  let busy = 0;
  let maxBusy = 0;
  const invoke = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const startedAt = Date.now();
    for (const r of event.Records) {
      const who = recipientOf(r.body);
      if (who !== undefined && !handed.has(who)) handed.set(who, startedAt);
    }
    busy++;
    maxBusy = Math.max(maxBusy, busy);
    // A thrown invocation failed every record (Lambda retries the whole batch).
    let failed = event.Records.length;
    try {
      const result = await dispatch(event);
      failed = result.batchItemFailures.length;
      return result;
    } finally {
      invocations.push({ startedAt, ms: Date.now() - startedAt, records: event.Records.length, failed });
      busy--;
    }
  };

  const sqs = new SQSClient({
    region: LOCAL_REGION,
    endpoint: gw.stack.sqsEndpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const pollers: Poller[] = [];
  return {
    kind: opts.kind,
    processes,
    sources,
    startPolling: () => {
      if (pollers.length > 0) return;
      for (const source of sources) {
        pollers.push(
          startPoller({
            ...senderPollerOptions(source, gw.stack.resources, sqs, invoke),
            waitTimeSeconds: POLL_WAIT_SECONDS,
          }),
        );
      }
    },
    cpuMs: async () => (await Promise.all(processes.map((p) => p.cpuMs()))).reduce((a, b) => a + b, 0),
    peakRssBytes: async () =>
      Math.max(...(await Promise.all(processes.map(async (p) => (await p.memory())?.peakBytes ?? 0)))),
    invocations: () => invocations,
    handedAt: () => handed,
    maxBusy: () => maxBusy,
    stop: async () => {
      await Promise.all(pollers.map((p) => p.stop()));
      sqs.destroy();
      await Promise.all(processes.map((p) => p.stop()));
    },
  };
}

/**
 * Each invocation goes to an idle container, one at a time per container, as Lambda routes them. With as many
 * containers as the lanes' pollers, one is always idle; otherwise the invocation waits for one.
 */
function containerDispatch(
  processes: readonly SqsFunctionProcess[],
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const idle = [...processes];
  const waiting: ((p: SqsFunctionProcess) => void)[] = [];
  const release = (p: SqsFunctionProcess) => {
    const next = waiting.shift();
    if (next) next(p);
    else idle.push(p);
  };
  return async (event) => {
    const p = idle.shift() ?? (await new Promise<SqsFunctionProcess>((resolve) => waiting.push(resolve)));
    try {
      return await p.invoke(event);
    } finally {
      release(p);
    }
  };
}

/** The recipients of a queued message (lib/model `QueuedMessage`), as the simulator's inboxes name them. */
function recipientOf(body: string): string | undefined {
  try {
    const touser = (JSON.parse(body) as { request?: { recipients?: { touser?: string[] } } }).request
      ?.recipients?.touser;
    return touser && touser.length > 0 ? touser.join('|').toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

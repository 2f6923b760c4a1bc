/**
 * A small load generator on undici, run in a worker thread so its event loop does not share time with the
 * server under test (which lives in the main thread). Two modes:
 * - closed loop: `concurrency` clients, each sends its next request when the previous answer arrived
 *   (throughput and latency at a fixed concurrency — how the ingest baseline and the gateway are compared);
 * - open loop: requests are issued on a fixed schedule whatever the answers do (arrival rate; end-to-end latency),
 *   so a slow server cannot slow the arrivals down (no coordinated omission).
 */
import { Worker } from 'node:worker_threads';

export interface LoadSpec {
  /** e.g. `http://127.0.0.1:3000`. Loopback only. */
  readonly origin: string;
  readonly path: string;
  readonly method?: 'POST' | 'GET';
  readonly headers?: Record<string, string>;
  /** `{{i}}` becomes the request index, `{{m}}` the index modulo `members`. */
  readonly bodyTemplate?: string;
  /**
   * Prepared requests instead of `path` and `bodyTemplate`: request i is `requests[i % length]` (each WeCom
   * callback carries its own signature in the query string, so no template can make them).
   */
  readonly requests?: readonly { readonly path: string; readonly body: string }[];
  readonly members?: number;
  readonly mode: 'closed' | 'open';
  /** Sockets in the undici Pool. */
  readonly connections: number;
  /** Closed loop: clients in flight. */
  readonly concurrency?: number;
  /** Open loop: requests per second. */
  readonly ratePerSec?: number;
  /** Open loop: beyond this many unanswered requests an arrival is skipped and counted (bounded memory). */
  readonly maxInFlight?: number;
  readonly durationMs: number;
  /** Closed loop: requests started before this are not recorded (connections, JIT, caches warm up). */
  readonly warmupMs?: number;
  /** Hard cap on requests issued, whatever the duration. */
  readonly maxRequests?: number;
  /** Keep one record per request (index, epoch send time, status, latency, optional body). */
  readonly record?: boolean;
  readonly recordBodies?: boolean;
  readonly timeoutMs?: number;
}

export interface RequestRecord {
  i: number;
  /** Epoch ms when the request was issued. */
  sentAt: number;
  /** Open loop: epoch ms it was scheduled for. */
  scheduledAt?: number;
  status: number;
  latencyMs: number;
  body?: string;
}

export interface LoadResult {
  /** Requests recorded (after warm-up). */
  requests: number;
  /** Requests issued in total, warm-up included. */
  issued: number;
  /** Length of the recorded period. */
  elapsedMs: number;
  /** 2xx responses per second in the recorded period. */
  throughput: number;
  statuses: Record<string, number>;
  /** Transport errors (no HTTP answer). */
  errors: number;
  /** Latencies of recorded 2xx responses, ms. */
  latencies: number[];
  records?: RequestRecord[];
  /** Open loop: worst delay between a request's scheduled and actual send. */
  maxLagMs?: number;
  /** Open loop: arrivals skipped because `maxInFlight` requests were outstanding. */
  skipped?: number;
}

/** Runs one load phase in a fresh worker thread and resolves with its result (bounded by duration + 60 s). */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./load-worker.ts', import.meta.url), { workerData: spec });
    const guard = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`load worker did not finish within ${spec.durationMs + 60_000} ms`));
    }, spec.durationMs + 60_000);
    worker.once('message', (result: LoadResult) => {
      clearTimeout(guard);
      void worker.terminate();
      resolve(result);
    });
    worker.once('error', (err) => {
      clearTimeout(guard);
      reject(err);
    });
  });
}

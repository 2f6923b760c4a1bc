/**
 * The gateway's functions as bundled processes of their own, wired to a bench gateway's emulators and simulator:
 * closer to AWS than the in-process stack (where the functions share one event loop with DynamoDB, SQS and the
 * simulator). Used for peak RSS, and as diagnostics next to the in-process figures.
 */
import type { ChildProcess } from 'node:child_process';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { DEFAULT_SENDER_CONCURRENCY, senderEventSources } from '#lib/resources/index.js';
import { type Poller, senderPollerOptions, startPoller } from '#local/poller.js';
import { LOCAL_REGION } from '#local/stack.js';
import { bundleChild, bundleFunction } from './bundle.js';
import {
  cpuMsOf,
  type FunctionStack,
  functionEnv,
  memoryOf,
  nextMessage,
  startNode,
  stopChild,
} from './child.js';
import { sleep } from './harness.js';

/** children/record-baseline-shim.ts's BENCH_BASELINE_MODE. */
export type RecordBaselineMode = 'sequential' | 'overlapped' | 'put-only';

/** A bench gateway, or any stack whose emulators the function processes can be pointed at. */
export interface FunctionHost {
  readonly stack: FunctionStack;
}

export interface FunctionProcess {
  readonly child: ChildProcess;
  /** RSS right after init (before any request). */
  readonly idleRssBytes: number;
  /** Bytes the function wrote to stdout (its log lines). */
  stdoutBytes(): number;
  /** VmHWM / VmRSS now. */
  memory(): Promise<{ peakBytes: number; rssBytes: number } | undefined>;
  /** CPU time used so far, ms. */
  cpuMs(): Promise<number>;
  stop(): Promise<void>;
}

async function start(
  gw: FunctionHost,
  script: string,
  extraEnv: Record<string, string>,
): Promise<FunctionProcess & { ready: { port?: number } }> {
  const proc = startNode(script, functionEnv(gw.stack, extraEnv));
  let ready: { port?: number };
  try {
    ready = await nextMessage<{ port?: number }>(
      proc.child,
      (m) => (m as { ready?: boolean }).ready === true,
    );
  } catch (err) {
    await stopChild(proc.child);
    throw new Error(`${script} did not start: ${proc.stderr().slice(0, 400)}`, { cause: err });
  }
  await sleep(200);
  const idle = await memoryOf(proc.child.pid as number);
  return {
    child: proc.child,
    ready,
    idleRssBytes: idle?.rssBytes ?? Number.NaN,
    stdoutBytes: proc.stdoutBytes,
    memory: () => memoryOf(proc.child.pid as number),
    cpuMs: () => cpuMsOf(proc.child.pid as number),
    stop: () => stopChild(proc.child),
  };
}

/**
 * A bundled HTTP function behind the local API Gateway stand-in (children/api-shim.ts), serving the function's
 * ROUTES rows with its timeout and memory.
 */
async function startHttpFunctionProcess(
  gw: FunctionHost,
  dir: string,
  id: 'ingest' | 'callback',
): Promise<FunctionProcess & { origin: string }> {
  const bundle = await bundleFunction(id, dir);
  const shim = await bundleChild('api-shim', dir);
  const p = await start(gw, shim, { BENCH_FUNCTION: id, BENCH_HANDLER: bundle.file as string });
  return { ...p, origin: `http://127.0.0.1:${p.ready.port}` };
}

/** The bundled ingest handler behind the API Gateway shim. */
export const startIngestProcess = (gw: FunctionHost, dir: string) =>
  startHttpFunctionProcess(gw, dir, 'ingest');

/** The bundled callback handler behind the API Gateway shim. */
export const startCallbackProcess = (gw: FunctionHost, dir: string) =>
  startHttpFunctionProcess(gw, dir, 'callback');

/** SPEC §7's ingest baseline (node:http + one SQS SendMessage) in a process of its own. */
export async function startBaselineProcess(
  gw: FunctionHost,
  dir: string,
): Promise<FunctionProcess & { origin: string }> {
  const shim = await bundleChild('baseline-shim', dir);
  const p = await start(gw, shim, {});
  return { ...p, origin: `http://127.0.0.1:${p.ready.port}` };
}

/**
 * The fair baseline of a record-then-enqueue design (node:http + one conditional PutItem + one SendMessage) in a
 * process of its own: `sequential` as ingest does it, or `overlapped` (both calls at once); `put-only`: the
 * conditional PutItem alone, what any receiver that stores what it is sent must do (the callback's baseline).
 */
export async function startRecordBaselineProcess(
  gw: FunctionHost,
  dir: string,
  mode: RecordBaselineMode,
): Promise<FunctionProcess & { origin: string }> {
  const shim = await bundleChild('record-baseline-shim', dir);
  const p = await start(gw, shim, { BENCH_BASELINE_MODE: mode });
  return { ...p, origin: `http://127.0.0.1:${p.ready.port}` };
}

/**
 * The bundled sender handler, invoked over IPC by this process's event source mapping emulation (one poller per
 * lane, as the stack starts them). `serial`: one invocation at a time, as one Lambda container gets them.
 */
export async function startSenderProcess(
  gw: FunctionHost,
  dir: string,
  opts: { serial?: boolean } = {},
): Promise<FunctionProcess & { startPolling(): void }> {
  const bundle = await bundleFunction('sender', dir);
  const shim = await bundleChild('sender-shim', dir);
  const p = await start(gw, shim, { BENCH_HANDLER: bundle.file as string });
  const sqs = new SQSClient({
    region: LOCAL_REGION,
    endpoint: gw.stack.sqsEndpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  let nextId = 0;
  const pending = new Map<number, (r: SQSBatchResponse) => void>();
  p.child.on('message', (m: { id?: number; result?: SQSBatchResponse }) => {
    if (m.id === undefined) return;
    pending.get(m.id)?.(m.result ?? { batchItemFailures: [] });
    pending.delete(m.id);
  });
  let chain: Promise<unknown> = Promise.resolve();
  const call = (event: SQSEvent) =>
    new Promise<SQSBatchResponse>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      p.child.send({ id, event });
    });
  const invoke = (event: SQSEvent): Promise<SQSBatchResponse> => {
    if (!opts.serial) return call(event);
    const turn = chain.then(() => call(event));
    chain = turn.catch(() => undefined);
    return turn;
  };
  const pollers: Poller[] = [];
  return {
    ...p,
    startPolling: () => {
      if (pollers.length > 0) return;
      for (const source of senderEventSources(DEFAULT_SENDER_CONCURRENCY)) {
        pollers.push(startPoller(senderPollerOptions(source, gw.stack.resources, sqs, invoke)));
      }
    },
    stop: async () => {
      await Promise.all(pollers.map((x) => x.stop()));
      sqs.destroy();
      await p.stop();
    },
  };
}

/**
 * The gateway's functions as bundled processes of their own, wired to a bench gateway's emulators and simulator:
 * closer to AWS than the in-process stack (where the functions share one event loop with DynamoDB, SQS and the
 * simulator). Used for peak RSS, and as diagnostics next to the in-process figures.
 */
import type { ChildProcess } from 'node:child_process';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { DEFAULT_SENDER_CONCURRENCY, senderEventSources } from '#lib/resources/index.js';
import { notifyPollerOptions, type Poller, senderPollerOptions, startPoller } from '#local/poller.js';
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

/** How a function process is started, beyond the function's own environment. */
export interface ProcessOptions {
  /** Node flags for this process only (e.g. `--cpu-prof`), beside the Lambda-like NODE_OPTIONS. */
  readonly execArgv?: readonly string[];
  /** Variables on top of the function's environment (e.g. another GATEWAY_CONFIG). */
  readonly env?: Readonly<Record<string, string>>;
  /** Wait this long for the process to exit by itself on stop (a `--cpu-prof` profile is written at exit). */
  readonly graceMs?: number;
}

async function start(
  gw: FunctionHost,
  script: string,
  extraEnv: Record<string, string>,
  opts: ProcessOptions = {},
): Promise<FunctionProcess & { ready: { port?: number } }> {
  const proc = startNode(script, functionEnv(gw.stack, { ...extraEnv, ...opts.env }), opts.execArgv);
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
    stop: () => stopChild(proc.child, opts.graceMs ? { graceMs: opts.graceMs } : {}),
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
  opts: ProcessOptions = {},
): Promise<FunctionProcess & { origin: string }> {
  const bundle = await bundleFunction(id, dir);
  const shim = await bundleChild('api-shim', dir);
  const p = await start(gw, shim, { BENCH_FUNCTION: id, BENCH_HANDLER: bundle.file as string }, opts);
  return { ...p, origin: `http://127.0.0.1:${p.ready.port}` };
}

/** The bundled ingest handler behind the API Gateway shim. */
export const startIngestProcess = (gw: FunctionHost, dir: string, opts?: ProcessOptions) =>
  startHttpFunctionProcess(gw, dir, 'ingest', opts);

/** The bundled callback handler behind the API Gateway shim. */
export const startCallbackProcess = (gw: FunctionHost, dir: string, opts?: ProcessOptions) =>
  startHttpFunctionProcess(gw, dir, 'callback', opts);

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
 * The callback's bare PutItem receiver as a Lambda handler (children/baseline-handler.ts) behind the same API Gateway
 * stand-in that serves the callback's bundle, on its routes: the process does the stand-in's work too, as the
 * callback's does.
 */
export async function startCallbackBaselineHandler(
  gw: FunctionHost,
  dir: string,
): Promise<FunctionProcess & { origin: string }> {
  const [handler, shim] = await Promise.all([
    bundleChild('baseline-handler', dir),
    bundleChild('api-shim', dir),
  ]);
  const p = await start(gw, shim, { BENCH_FUNCTION: 'callback', BENCH_HANDLER: handler });
  return { ...p, origin: `http://127.0.0.1:${p.ready.port}` };
}

/** What runs in an SQS-fed process: a bundled function, or the sender's fair baseline consumer. */
export type SqsConsumerKind = 'sender' | 'notify' | 'sender-baseline';

/** A process whose handler takes SQS events over IPC (children/sender-shim.ts). */
export interface SqsFunctionProcess extends FunctionProcess {
  readonly kind: SqsConsumerKind;
  /** One invocation; rejects when the handler threw (Lambda then retries the whole batch). */
  invoke(event: SQSEvent): Promise<SQSBatchResponse>;
}

/**
 * A bundled SQS-fed function (`sender`, `notify`) or the sender's fair baseline consumer
 * (children/sender-baseline.ts, bundled like the bench's other children), in a process of its own behind the IPC
 * shim. Nothing polls it yet: see {@link startSenderProcess}, {@link startNotifyProcess} or bench/lib/consumers.ts.
 * `connections`: the baseline's socket pool (its concurrency: batch size × invocations it takes at once).
 */
export async function startSqsFunctionProcess(
  gw: FunctionHost,
  dir: string,
  kind: SqsConsumerKind,
  opts: ProcessOptions & { connections?: number } = {},
): Promise<SqsFunctionProcess> {
  const handlerFile =
    kind === 'sender-baseline'
      ? await bundleChild('sender-baseline', dir)
      : ((await bundleFunction(kind, dir)).file as string);
  const shim = await bundleChild('sender-shim', dir);
  const p = await start(
    gw,
    shim,
    {
      BENCH_HANDLER: handlerFile,
      BENCH_FUNCTION: kind === 'notify' ? 'notify' : 'sender',
      ...(opts.connections ? { BENCH_BASELINE_CONNECTIONS: String(opts.connections) } : {}),
    },
    opts,
  );
  let nextId = 0;
  const pending = new Map<number, { resolve: (r: SQSBatchResponse) => void; reject: (e: Error) => void }>();
  p.child.on('message', (m: { id?: number; result?: SQSBatchResponse; error?: string }) => {
    if (m.id === undefined) return;
    const waiter = pending.get(m.id);
    pending.delete(m.id);
    if (m.error !== undefined) waiter?.reject(new Error(`${kind} handler threw: ${m.error}`));
    else waiter?.resolve(m.result ?? { batchItemFailures: [] });
  });
  return {
    ...p,
    kind,
    invoke: (event) =>
      new Promise<SQSBatchResponse>((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        p.child.send({ id, event });
      }),
  };
}

/** Runs `invoke` one call at a time, in order: what one Lambda container takes. */
export function serialized<A, R>(invoke: (arg: A) => Promise<R>): (arg: A) => Promise<R> {
  let chain: Promise<unknown> = Promise.resolve();
  return (arg) => {
    const turn = chain.then(() => invoke(arg));
    chain = turn.catch(() => undefined);
    return turn;
  };
}

const benchSqsClient = (gw: FunctionHost) =>
  new SQSClient({
    region: LOCAL_REGION,
    endpoint: gw.stack.sqsEndpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

/**
 * The bundled sender handler, invoked over IPC by this process's event source mapping emulation (one poller per
 * lane, as the stack starts them). `serial`: one invocation at a time, as one Lambda container gets them.
 */
export async function startSenderProcess(
  gw: FunctionHost,
  dir: string,
  opts: ProcessOptions & { serial?: boolean } = {},
): Promise<SqsFunctionProcess & { startPolling(): void }> {
  const p = await startSqsFunctionProcess(gw, dir, 'sender', opts);
  const invoke = opts.serial ? serialized(p.invoke) : p.invoke;
  const sqs = benchSqsClient(gw);
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

/**
 * The bundled notify handler, fed by the notify queue's event source mapping emulation (lib/resources
 * `NOTIFY_EVENT_SOURCE`). `serial`: one invocation at a time, as one Lambda container gets them.
 */
export async function startNotifyProcess(
  gw: FunctionHost,
  dir: string,
  opts: ProcessOptions & { serial?: boolean } = {},
): Promise<SqsFunctionProcess & { startPolling(): void; poller(): Poller | undefined }> {
  const p = await startSqsFunctionProcess(gw, dir, 'notify', opts);
  const invoke = opts.serial ? serialized(p.invoke) : p.invoke;
  const sqs = benchSqsClient(gw);
  let poller: Poller | undefined;
  return {
    ...p,
    startPolling: () => {
      poller ??= startPoller(notifyPollerOptions(gw.stack.resources, sqs, invoke));
    },
    poller: () => poller,
    stop: async () => {
      await poller?.stop();
      sqs.destroy();
      await p.stop();
    },
  };
}

/**
 * The local stack as the bench uses it: `startLocalStack` with a fresh key and the harness config (local/harness), the
 * simulator at 20 ms unless a metric says otherwise, plus an optional *instrumented* copy of the two functions.
 *
 * The instrumented copy is composed exactly as `local/stack.ts` composes the stack's own functions (same
 * `createIngestDeps`/`createSenderDeps`, `wrap*Handler`, `startApiServer` routes and `startPoller` per
 * `senderEventSources`), on the same emulators, table, queues and simulator — with three additions the stack does
 * not offer: each handler invocation is timed (Lambda duration for the cost model), each function's log lines are
 * counted (CloudWatch Logs ingestion), and the pollers can be started after a backlog was loaded (sender
 * throughput). Its sender runs one container per concurrency slot, like Lambda (see `instrument`). Metrics that
 * need none of that use the stack's own API and pollers.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyResultV2,
  Context,
  SQSBatchResponse,
  SQSEvent,
} from 'aws-lambda';
import { wrapIngestHandler } from '#functions/ingest/app.js';
import { wrapSenderHandler } from '#functions/sender/app.js';
import type { GatewayConfig } from '#lib/config/index.js';
import { DEFAULT_SENDER_CONCURRENCY, FUNCTIONS, senderEventSources } from '#lib/resources/index.js';
import { createIngestDeps, createSenderDeps, type RuntimeOptions } from '#lib/runtime/index.js';
import { type ApiServer, startApiServer } from '#local/api-server.js';
import { newDevKey } from '#local/dev-config.js';
import { testConfig } from '#local/harness/config.js';
import { type Poller, senderPollerOptions, startPoller } from '#local/poller.js';
import { LOCAL_REGION, type LocalStack, type LocalStackOptions, startLocalStack } from '#local/stack.js';
import { type DynamoMeter, startDynamoMeter } from './dynamo-meter.js';
import { ApiClient } from './http.js';

/** SPEC §7: every figure is measured with the simulator answering after 20 ms unless the metric says otherwise. */
export const SIM_LATENCY_MS = 20;

export interface BenchGateway {
  readonly stack: LocalStack;
  readonly key: string;
  /** JSON client on the stack's own API. */
  readonly api: ApiClient;
  readonly runtime: RuntimeOptions;
  stop(): Promise<void>;
}

export type BenchGatewayOptions = Omit<LocalStackOptions, 'config'> & {
  quota?: Partial<GatewayConfig['apps'][string]['quota']>;
  apps?: string[];
  /** Group robots by name (local/harness `testConfig`). */
  robots?: string[];
  /** Last changes to the config before the stack starts (e.g. an app's spread of scheduled releases). */
  configure?: (config: GatewayConfig) => void;
};

export async function startBenchGateway(opts: BenchGatewayOptions = {}): Promise<BenchGateway> {
  const devKey = newDevKey();
  const { quota, apps, robots, configure, ...stackOpts } = opts;
  const config = testConfig(devKey, {
    ...(quota ? { quota } : {}),
    ...(apps ? { apps } : {}),
    ...(robots ? { robots } : {}),
  });
  configure?.(config);
  const stack = await startLocalStack({
    port: 0,
    ...stackOpts,
    config,
    simulator: { latencyMs: SIM_LATENCY_MS, ...stackOpts.simulator },
  });
  const api = new ApiClient(stack.apiUrl, devKey.key);
  return {
    stack,
    key: devKey.key,
    api,
    runtime: stackOpts.runtime ?? {},
    stop: async () => {
      await api.close().catch(() => undefined);
      await stack.stop();
    },
  };
}

export interface SenderInvocation {
  ms: number;
  records: number;
}

export interface LogCount {
  bytes: number;
  lines: number;
}

export interface Instrumented {
  /** Base URL of the instrumented API (same routes as the stack's). */
  readonly apiUrl: string;
  readonly api: ApiClient;
  /** DynamoDB capacity meter, when requested. */
  readonly dynamo?: DynamoMeter;
  readonly ingestMs: number[];
  readonly senderInvocations: SenderInvocation[];
  readonly logs: { ingest: LogCount; sender: LogCount };
  /** The first error-level log lines of either function (diagnostics). */
  readonly errorLines: string[];
  readonly pollers: readonly Poller[];
  /** Starts the instrumented sender's pollers (a no-op when they run). */
  startSender(): void;
  /** Stops the pollers; resolves when running invocations settled. */
  stopSender(): Promise<void>;
  /** Forgets timings and log counts (and meter figures), e.g. after a warm-up. */
  reset(): void;
  stop(): Promise<void>;
}

/**
 * Adds the instrumented ingest and sender to a bench gateway whose stack runs without its own sender
 * (`startSender: false`), so that the instrumented sender is the only consumer of the lanes.
 */
export async function instrument(
  gw: BenchGateway,
  opts: { meterDynamo?: boolean; senderConcurrency?: number } = {},
): Promise<Instrumented> {
  const { stack } = gw;
  const cleanups: (() => Promise<void>)[] = [];
  let dynamo: DynamoMeter | undefined;
  if (opts.meterDynamo) {
    // Chained in front of the stack's request counter, so `stack.dynamoRequests` still counts every call. The SDK
    // reads the endpoint variable when the clients below are created.
    dynamo = await startDynamoMeter(stack.dynamoRequests.endpoint);
    const previous = process.env.AWS_ENDPOINT_URL_DYNAMODB;
    process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
    const meter = dynamo;
    cleanups.push(async () => {
      process.env.AWS_ENDPOINT_URL_DYNAMODB = previous;
      await meter.close();
    });
  }
  const logs = { ingest: { bytes: 0, lines: 0 }, sender: { bytes: 0, lines: 0 } };
  const errorLines: string[] = [];
  const counter = (c: LogCount) => (line: string) => {
    c.bytes += Buffer.byteLength(line) + 1;
    c.lines++;
    if (errorLines.length < 50 && line.includes('"level":"error"')) errorLines.push(line);
  };
  const base: RuntimeOptions = { ...gw.runtime, env: stack.env, config: stack.config };

  const ingestMs: number[] = [];
  const ingestDeps = await createIngestDeps({ ...base, logWrite: counter(logs.ingest) });
  cleanups.push(() => ingestDeps.close());
  const ingest = wrapIngestHandler(ingestDeps);
  const timedIngest = async (event: APIGatewayProxyEventV2, context: Context) => {
    const t0 = performance.now();
    try {
      return (await ingest(event, context)) as APIGatewayProxyResultV2;
    } finally {
      ingestMs.push(performance.now() - t0);
    }
  };
  const server: ApiServer = await startApiServer({
    host: '127.0.0.1',
    port: 0,
    functionTimeoutSeconds: FUNCTIONS.ingest.timeoutSeconds,
    functionMemoryMb: FUNCTIONS.ingest.memoryMb,
    region: LOCAL_REGION,
    routes: [
      'POST /v1/messages',
      'POST /v1/messages/batch',
      'GET /v1/messages/{id}',
      'POST /v1/messages/{id}/recall',
      'GET /v1/health',
    ].map((route) => {
      const [method, path] = route.split(' ') as [string, string];
      return { method, path, handler: timedIngest, functionName: 'ingest' };
    }),
  });
  cleanups.push(() => server.close());
  const api = new ApiClient(server.url, gw.key);
  cleanups.push(() => api.close());

  const senderInvocations: SenderInvocation[] = [];
  const pollerSqs = new SQSClient({
    region: LOCAL_REGION,
    endpoint: stack.sqsEndpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    userAgentAppId: 'wecom-gateway/poller',
  });
  // One sender "container" per concurrency slot, as in Lambda (and as local/stack.ts does), where each concurrent
  // execution is its own container with its own clients, token memory, quota blocks and WeCom connection pool.
  // Each slot is a poller with maxConcurrency 1: the same receive → invoke → delete loop.
  const slots = await Promise.all(
    senderEventSources(opts.senderConcurrency ?? DEFAULT_SENDER_CONCURRENCY).flatMap((source) =>
      Array.from({ length: source.maxConcurrency }, async () => {
        const deps = await createSenderDeps({ ...base, logWrite: counter(logs.sender) });
        const sender = wrapSenderHandler(deps);
        const timed = async (event: SQSEvent, context: Context) => {
          const t0 = performance.now();
          try {
            return (await sender(event, context)) as SQSBatchResponse;
          } finally {
            senderInvocations.push({ ms: performance.now() - t0, records: event.Records.length });
          }
        };
        return { source, deps, handler: timed };
      }),
    ),
  );
  let pollers: Poller[] = [];
  const stopSender = async () => {
    const running = pollers;
    pollers = [];
    await Promise.all(running.map((p) => p.stop()));
  };

  const instrumented: Instrumented = {
    apiUrl: server.url,
    api,
    ...(dynamo ? { dynamo } : {}),
    ingestMs,
    senderInvocations,
    logs,
    errorLines,
    get pollers() {
      return pollers;
    },
    startSender: () => {
      if (pollers.length > 0) return;
      pollers = slots.map(({ source, handler }) =>
        // One poller per container slot (maxConcurrency 1 each), so every invocation is timed per container.
        startPoller({
          ...senderPollerOptions(source, stack.resources, pollerSqs, handler),
          maxConcurrency: 1,
        }),
      );
    },
    stopSender,
    reset: () => {
      ingestMs.length = 0;
      senderInvocations.length = 0;
      Object.assign(logs.ingest, { bytes: 0, lines: 0 });
      Object.assign(logs.sender, { bytes: 0, lines: 0 });
      errorLines.length = 0;
      dynamo?.reset();
    },
    stop: async () => {
      await stopSender();
      await Promise.all(slots.map((slot) => slot.deps.close().catch(() => undefined)));
      pollerSqs.destroy();
      for (const c of cleanups.reverse()) await c().catch(() => undefined);
    },
  };
  return instrumented;
}

/** Messages delivered by the simulator so far, whatever the member. */
export const delivered = (gw: BenchGateway): number => gw.stack.simulator?.stats().delivered ?? 0;

/** True when every poller has finished what it received (nothing in flight). */
export const pollersIdle = (pollers: readonly Poller[]): boolean =>
  pollers.every((p) => {
    const s = p.stats();
    return s.received === s.deleted + s.failed;
  });

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyResultV2,
  Context,
  SQSBatchResponse,
  SQSEvent,
} from 'aws-lambda';
import { wrapCallbackHandler } from '#functions/callback/app.js';
import { wrapIngestHandler } from '#functions/ingest/app.js';
import { wrapNotifyHandler } from '#functions/notify/app.js';
import { wrapSenderHandler } from '#functions/sender/app.js';
import { type GatewayConfig, type GatewayEnv, loadConfig } from '#lib/config/index.js';
import {
  DEFAULT_ROUTE,
  DEFAULT_SENDER_CONCURRENCY,
  deadLetterQueueOf,
  FUNCTIONS,
  type QueueId,
  RELEASE_TIMERS,
  ROUTES,
  releaseTimerTarget,
  senderEventSources,
  WEB_ROUTES,
} from '#lib/resources/index.js';
import {
  type Closable,
  createCallbackDeps,
  createIngestDeps,
  createNotifyDeps,
  createSenderDeps,
  type RuntimeOptions,
} from '#lib/runtime/index.js';
import { buildWebApp } from '#lib/web/build.js';
import { CONSOLE_APP, readOpenApi } from '#lib/web/index.js';
import { type ApiServer, startApiServer } from './api-server.js';
import { LocalClock } from './clock.js';
import {
  type DynamoEmulator,
  type DynamoEngine,
  type SqsEmulator,
  startDynamo,
  startSqs,
} from './emulators.js';
import { notifyPollerOptions, type Poller, senderPollerOptions, startPoller } from './poller.js';
import { type ProvisionedResources, provision } from './provision.js';
import { LocalReleaseTimers } from './release-timers.js';
import { type RequestCounter, startRequestCounter } from './request-counter.js';
import { type SimulatorOptions, startWecomSimulator, type WecomSimulator } from './wecom-sim/index.js';

export { LOCAL_REGION } from './region.js';

/** The role the emulated scheduler "assumes": a placeholder ARN of the right shape (nothing checks it offline). */
const LOCAL_SCHEDULER_ROLE_ARN = 'arn:aws:iam::000000000000:role/wecom-gateway-local-scheduler';

import { LOCAL_REGION } from './region.js';

export interface LocalStackOptions {
  host?: string;
  /** API port (PORT); 0 = random. */
  port?: number;
  /** Simulator port; 0 = random. */
  simulatorPort?: number;
  /** Path of the config file (GATEWAY_CONFIG); or pass `config` directly (tests). */
  configFile?: string;
  config?: GatewayConfig;
  /** WECOM_API_BASE: send to this WeCom instead of starting the simulator. */
  wecomApiBase?: string;
  dynamoEngine?: DynamoEngine;
  /**
   * Let tests restart the emulators ({@link LocalStack.restartEmulator}). dynalite and fauxqs keep their data in
   * the process anyway; DynamoDB Local then keeps it on disk (a temporary directory) instead of in memory.
   */
  restartableEmulators?: boolean;
  /** Extra simulator settings (latency, limits, windows, directory…); apps come from the config. */
  simulator?: Partial<SimulatorOptions>;
  /** Sender/ingest knobs (quota windows, retry policy) — tests shrink them. */
  runtime?: RuntimeOptions;
  senderConcurrency?: number;
  /** Start the SQS pollers (the sender); tests of ingest alone may leave them off. Default true. */
  startSender?: boolean;
  /** Start the notify queue's poller (webhooks). Default: as `startSender`. */
  startNotify?: boolean;
  /** Where the functions' JSON log lines go. Default: dropped (the CLI passes stdout). */
  logWrite?: (line: string) => void;
}

export interface LocalStack {
  readonly apiUrl: string;
  readonly simulator?: WecomSimulator;
  readonly wecomApiBase: string;
  readonly config: GatewayConfig;
  readonly env: GatewayEnv;
  readonly resources: ProvisionedResources;
  readonly dynamoEndpoint: string;
  readonly sqsEndpoint: string;
  /** DynamoDB requests per function, counted on the wire. */
  readonly dynamoRequests: RequestCounter;
  readonly sqs: SQSClient;
  readonly dynamo: DynamoDBClient;
  readonly pollers: readonly Poller[];
  /** The functions' clock: `clock.advance(ms)` brings scheduled messages' time closer (and WeCom's clock with it). */
  readonly clock: LocalClock;
  /** The release timers' emulation (EventBridge Scheduler's one-time schedules). */
  readonly timers: LocalReleaseTimers;
  /**
   * Fault injection: the emulator goes down (listener closed, connections reset), stays down for `downMs` and
   * comes back on the same endpoint with its data — an AWS endpoint restarting under the running gateway.
   * DynamoDB Local is down longer: its JVM has to exit and start again (~5 s more).
   */
  restartEmulator(which: 'dynamodb' | 'sqs', downMs: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the whole gateway offline: DynamoDB and SQS emulators, the table and queues from lib/resources, the WeCom
 * simulator, the HTTP API (API Gateway v2 events into the real ingest handler) and the SQS event source mapping
 * emulation feeding the real sender handler. Everything listens on loopback only.
 *
 * The AWS SDK inside the handlers reaches the emulators through AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_SQS,
 * exactly the variables that would point a deployed function elsewhere: lib/ has no local branch.
 */
export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
  const host = opts.host ?? '127.0.0.1';
  const cleanups: Cleanups = [];
  const stop = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };
  try {
    const { dynamo, sqsEmu, counter, dynamoClient, sqs } = await startEmulators(opts, cleanups);
    const resources = await provision({ dynamo: dynamoClient, sqs });

    const configFile = opts.configFile ?? (await writeTempConfig(opts.config));
    const config = opts.config ?? (await loadConfig({ configFile }));
    const simulator = opts.wecomApiBase ? undefined : await startSimulator(opts, host, config, cleanups);
    const wecomApiBase = opts.wecomApiBase ?? (simulator as WecomSimulator).url;

    const clock = new LocalClock();
    const target = releaseTimerTarget('local', {
      roleArn: LOCAL_SCHEDULER_ROLE_ARN,
      laneArns: { high: resources.queueArns.high, normal: resources.queueArns.normal },
      deadLetterArn: resources.queueArns[RELEASE_TIMERS.deadLetterQueueId],
    });
    const urlOfArn = new Map(
      (Object.keys(resources.queueArns) as QueueId[]).map((id) => [
        resources.queueArns[id],
        resources.queueUrls[id],
      ]),
    );
    const timers = new LocalReleaseTimers({
      sqs,
      clock,
      target,
      urlOf: (arn) => urlOfArn.get(arn) ?? arn,
      onError: (err) =>
        opts.logWrite?.(
          JSON.stringify({ level: 'warn', message: 'release timer delivery failed', err: String(err) }),
        ),
    });
    cleanups.push(async () => timers.stop());
    // Moving the gateway's clock moves WeCom's with it, so neither sees the other's windows shifted.
    clock.onAdvance(() => simulator?.setClockOffset(clock.offset));

    const env: GatewayEnv = {
      tableName: resources.tableName,
      queueUrls: { high: resources.queueUrls.high, normal: resources.queueUrls.normal },
      notifyQueueUrl: resources.queueUrls.notify,
      notifyDlqUrl: resources.queueUrls['notify-dlq'],
      deadLetterQueueUrls: {
        high: resources.queueUrls[deadLetterQueueOf('high')],
        normal: resources.queueUrls[deadLetterQueueOf('normal')],
      },
      wecomApiBase,
      configFile,
      logLevel: 'info',
      stage: 'local',
      region: LOCAL_REGION,
      releaseTimers: target,
    };
    // No `config` here: every container reads GATEWAY_CONFIG itself and re-reads it with a bounded age, as the
    // functions re-read the secret in AWS, so an edited file takes effect without a restart.
    const runtime: RuntimeOptions = {
      logWrite: opts.logWrite ?? (() => undefined),
      now: clock.now,
      timers,
      ...opts.runtime,
      env,
    };

    const api = await startHttpApi(opts, host, runtime, cleanups);
    // The simulator plays WeCom's side of the callbacks: it posts encrypted events to each app's callback URL.
    simulator?.setCallbackTargets(callbackTargets(config, api.url));

    const pollers: Poller[] = [];
    if (opts.startSender !== false)
      pollers.push(...(await startSenders(opts, resources, sqs, runtime, cleanups)));
    if (opts.startNotify ?? opts.startSender !== false)
      pollers.push(await startNotify(resources, sqs, runtime, cleanups));

    return {
      apiUrl: api.url,
      ...(simulator ? { simulator } : {}),
      wecomApiBase,
      config,
      env,
      resources,
      dynamoEndpoint: dynamo.endpoint,
      sqsEndpoint: sqsEmu.endpoint,
      dynamoRequests: counter,
      sqs,
      dynamo: dynamoClient,
      pollers,
      clock,
      timers,
      restartEmulator: (which, downMs) => (which === 'sqs' ? sqsEmu : dynamo).restart(downMs),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** What to undo when the stack stops (or fails to start), in reverse order. */
type Cleanups = (() => Promise<void>)[];

/** DynamoDB (behind the request counter) and SQS emulators, with SDK clients on them. */
async function startEmulators(opts: LocalStackOptions, cleanups: Cleanups) {
  const engine = opts.dynamoEngine ?? 'dynalite';
  let dataDir: string | undefined;
  if (opts.restartableEmulators && engine === 'dynamodb-local') {
    const dir = await mkdtemp(join(tmpdir(), 'wecom-gateway-ddb-'));
    dataDir = dir;
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
  }
  const [dynamo, sqsEmu]: [DynamoEmulator, SqsEmulator] = await Promise.all([
    startDynamo({ engine, ...(dataDir ? { dataDir } : {}) }),
    startSqs(),
  ]);
  cleanups.push(
    () => dynamo.stop(),
    () => sqsEmu.stop(),
  );
  const counter = await startRequestCounter(dynamo.endpoint);
  cleanups.push(() => counter.close());

  // The SDK's standard endpoint variables; credentials are dummies the emulators accept.
  process.env.AWS_ENDPOINT_URL_DYNAMODB = counter.endpoint;
  process.env.AWS_ENDPOINT_URL_SQS = sqsEmu.endpoint;
  process.env.AWS_REGION = LOCAL_REGION;
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';

  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const dynamoClient = new DynamoDBClient({ region: LOCAL_REGION, endpoint: dynamo.endpoint, credentials });
  const sqs = new SQSClient({ region: LOCAL_REGION, endpoint: sqsEmu.endpoint, credentials });
  cleanups.push(async () => {
    dynamoClient.destroy();
    sqs.destroy();
  });
  return { dynamo, sqsEmu, counter, dynamoClient, sqs };
}

/** The WeCom simulator, with the config's apps and robots. */
async function startSimulator(
  opts: LocalStackOptions,
  host: string,
  config: GatewayConfig,
  cleanups: Cleanups,
): Promise<WecomSimulator> {
  const simulator = await startWecomSimulator({
    host,
    port: opts.simulatorPort ?? 0,
    ...opts.simulator,
    // The config's apps, unless a test gives WeCom other ones (a secret the gateway does not know).
    apps:
      opts.simulator?.apps ??
      Object.values(config.apps).map((a) => ({
        corpId: a.corpId,
        secret: a.secret,
        agentId: a.agentId,
      })),
    // The config's robots, by the same names, unless a test gives WeCom other ones (a key it does not know).
    robots:
      opts.simulator?.robots ??
      Object.entries(config.robots ?? {}).map(([name, r]) => ({ key: r.key, name })),
  });
  cleanups.push(() => simulator.stop());
  return simulator;
}

/** The HTTP API: API Gateway v2 events into the real ingest and callback handlers. */
async function startHttpApi(
  opts: LocalStackOptions,
  host: string,
  runtime: RuntimeOptions,
  cleanups: Cleanups,
): Promise<ApiServer> {
  const ingestDeps = await createIngestDeps(runtime);
  cleanups.push(() => ingestDeps.close());
  const callbackDeps = await createCallbackDeps(runtime);
  // In AWS the console and the OpenAPI document are embedded in the ingest bundle at synth; here the console is built
  // from web/ at every start.
  const consoleApp = await buildWebApp(CONSOLE_APP);
  const openapi = readOpenApi();
  const ingest = wrapIngestHandler(ingestDeps, {
    console: async () => consoleApp,
    openapi: async () => openapi,
  });
  const callback = wrapCallbackHandler(callbackDeps);
  const handlers: Record<(typeof ROUTES)[number]['functionId'], HttpHandler> = {
    ingest: (event, context) => ingest(event, context) as Promise<APIGatewayProxyResultV2>,
    callback: (event, context) => callback(event, context) as Promise<APIGatewayProxyResultV2>,
  };
  const api: ApiServer = await startApiServer({
    host,
    port: opts.port ?? 0,
    functionTimeoutSeconds: FUNCTIONS.ingest.timeoutSeconds,
    functionMemoryMb: FUNCTIONS.ingest.memoryMb,
    region: LOCAL_REGION,
    routes: [...ROUTES, ...WEB_ROUTES].map((route) => ({
      method: route.method,
      path: route.path,
      handler: handlers[route.functionId],
      functionName: route.functionId,
    })),
    fallback: {
      handler: handlers[DEFAULT_ROUTE.functionId],
      functionName: DEFAULT_ROUTE.functionId,
    },
  });
  cleanups.push(() => api.close());
  return api;
}

/** Each app with callback settings, as the simulator posts to it. */
function callbackTargets(config: GatewayConfig, apiUrl: string) {
  return Object.entries(config.apps).flatMap(([name, app]) =>
    app.callback
      ? [
          {
            corpId: app.corpId,
            agentId: app.agentId,
            token: app.callback.token,
            encodingAESKey: app.callback.encodingAESKey,
            url: `${apiUrl}/v1/wecom/callback/${encodeURIComponent(name)}`,
          },
        ]
      : [],
  );
}

/** The sender's pollers, one per lane. */
async function startSenders(
  opts: LocalStackOptions,
  resources: ProvisionedResources,
  sqs: SQSClient,
  runtime: RuntimeOptions,
  cleanups: Cleanups,
): Promise<Poller[]> {
  const pollers: Poller[] = [];
  // In AWS every concurrent invocation runs in its own container, with its own token memory, quota blocks and
  // pause cache. Emulate that: one sender "container" per concurrency slot, lent to one invocation at a time.
  const containers: Closable[] = [];
  for (const source of senderEventSources(opts.senderConcurrency ?? DEFAULT_SENDER_CONCURRENCY)) {
    const idle: ((event: SQSEvent, context: Context) => Promise<SQSBatchResponse>)[] = [];
    for (let i = 0; i < source.maxConcurrency; i++) {
      const deps = await createSenderDeps(runtime);
      containers.push(deps);
      const sender = wrapSenderHandler(deps);
      idle.push((event, context) => sender(event, context) as Promise<SQSBatchResponse>);
    }
    const senderFn = async (event: SQSEvent, context: Context) => {
      // The poller never runs more than maxConcurrency invocations, so a container is always free.
      const container = idle.pop() as (typeof idle)[number];
      try {
        return await container(event, context);
      } finally {
        idle.push(container);
      }
    };
    pollers.push(startPoller(senderPollerOptions(source, resources, sqs, senderFn, pollerErrorLog(runtime))));
  }
  // Pollers stop before the emulators they poll; the containers' WeCom pools close after the pollers.
  cleanups.push(async () => {
    await Promise.all(pollers.map((p) => p.stop()));
    await Promise.all(containers.map((c) => c.close()));
  });
  return pollers;
}

/** The notify queue's poller (webhooks). */
async function startNotify(
  resources: ProvisionedResources,
  sqs: SQSClient,
  runtime: RuntimeOptions,
  cleanups: Cleanups,
): Promise<Poller> {
  const notifyDeps = await createNotifyDeps(runtime);
  const notify = wrapNotifyHandler(notifyDeps);
  const poller = startPoller(
    notifyPollerOptions(
      resources,
      sqs,
      (event, context) => notify(event, context) as Promise<SQSBatchResponse>,
      pollerErrorLog(runtime),
    ),
  );
  cleanups.push(async () => {
    await poller.stop();
    await notifyDeps.close();
  });
  return poller;
}

/** A poller's receive/delete failures, as a function's error log line. */
const pollerErrorLog =
  (runtime: RuntimeOptions) =>
  (err: unknown): void =>
    runtime.logWrite?.(JSON.stringify({ level: 'error', message: 'poller', err: String(err) }));

type HttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2>;

async function writeTempConfig(config: GatewayConfig | undefined): Promise<string> {
  if (!config) throw new Error('startLocalStack needs configFile or config');
  const file = join(tmpdir(), `wecom-gateway-config-${process.pid}-${Date.now()}.json`);
  await writeFile(file, JSON.stringify(config), { mode: 0o600 });
  return file;
}

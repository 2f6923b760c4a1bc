import { type GatewayConfig, type GatewayEnv, loadConfig, readEnv } from '#lib/config/index.js';
import type { IngestDeps } from '#lib/ingest/index.js';
import { createLogger, type Logger, Metrics } from '#lib/observability/index.js';
import { createSqsClient, SqsMessageQueue } from '#lib/queue/index.js';
import { MAX_RECEIVE_COUNT } from '#lib/resources/index.js';
import {
  PauseCache,
  QuotaGuard,
  type QuotaWindows,
  type RetryPolicy,
  type SenderDeps,
  TokenCache,
  WECOM_WINDOWS,
} from '#lib/sender/index.js';
import {
  createDocumentClient,
  DynamoIdempotencyStore,
  DynamoMessageStore,
  DynamoPauseStore,
  DynamoQuotaStore,
  DynamoTokenStore,
} from '#lib/store/index.js';
import { WecomClient, type WecomClientOptions } from '#lib/wecom/index.js';

/** Knobs a test or the local stack may turn; production uses the defaults. */
export interface RuntimeOptions {
  env?: GatewayEnv;
  config?: GatewayConfig;
  windows?: QuotaWindows;
  retry?: RetryPolicy;
  deferJitterSeconds?: number;
  rateLimitPauseMs?: number;
  tokenLeaseMs?: number;
  /** WeCom client tuning (timeouts, connections); the base URL always comes from the environment. */
  wecom?: Omit<Partial<WecomClientOptions>, 'baseUrl'>;
  logWrite?: (line: string) => void;
}

/** Releases the container's sockets (used by the local stack and tests; Lambda just freezes). */
export interface Closable {
  close(): Promise<void>;
}

interface Shared {
  env: GatewayEnv;
  config: GatewayConfig;
  logger: Logger;
  metrics: Metrics;
  tokens: TokenCache;
  wecom: WecomClient;
  messages: DynamoMessageStore;
  queue: SqsMessageQueue;
  db: ReturnType<typeof createDocumentClient>;
}

async function shared(service: string, opts: RuntimeOptions): Promise<Shared> {
  const env = opts.env ?? readEnv();
  const config = opts.config ?? (await loadConfig(env));
  const logger = createLogger(
    { service },
    { level: env.logLevel, ...(opts.logWrite ? { write: opts.logWrite } : {}) },
  );
  const metrics = new Metrics(service, opts.logWrite);
  const db = createDocumentClient(`wecom-gateway/${service}`);
  const wecom = new WecomClient({ ...opts.wecom, baseUrl: env.wecomApiBase });
  const tokens = new TokenCache(new DynamoTokenStore(db, env.tableName), wecom, {
    ...(opts.tokenLeaseMs ? { leaseMs: opts.tokenLeaseMs } : {}),
    onFetch: () => metrics.count('GetTokenCalls'),
  });
  return {
    env,
    config,
    logger,
    metrics,
    tokens,
    wecom,
    db,
    messages: new DynamoMessageStore(db, env.tableName),
    queue: new SqsMessageQueue(createSqsClient(`wecom-gateway/${service}`), env.queueUrls),
  };
}

/**
 * Everything the ingest function needs, built once per container (clients, config, logger).
 *
 * @example const deps = await createIngestDeps(); // at module scope of the handler
 */
export async function createIngestDeps(opts: RuntimeOptions = {}): Promise<IngestDeps & Closable> {
  const s = await shared('ingest', opts);
  return {
    config: s.config,
    messages: s.messages,
    idempotency: new DynamoIdempotencyStore(s.db, s.env.tableName),
    queue: s.queue,
    logger: s.logger,
    metrics: s.metrics,
    tokens: s.tokens,
    wecom: s.wecom,
    close: () => s.wecom.close(),
  };
}

/** Everything the sender function needs, built once per container. */
export async function createSenderDeps(
  opts: RuntimeOptions = {},
): Promise<SenderDeps & Closable & { env: GatewayEnv }> {
  const s = await shared('sender', opts);
  return {
    env: s.env,
    config: s.config,
    messages: s.messages,
    queue: s.queue,
    tokens: s.tokens,
    quota: new QuotaGuard(new DynamoQuotaStore(s.db, s.env.tableName), opts.windows ?? WECOM_WINDOWS),
    pauses: new PauseCache(new DynamoPauseStore(s.db, s.env.tableName)),
    wecom: s.wecom,
    logger: s.logger,
    metrics: s.metrics,
    maxReceiveCount: MAX_RECEIVE_COUNT,
    close: () => s.wecom.close(),
    ...(opts.retry ? { retry: opts.retry } : {}),
    ...(opts.deferJitterSeconds !== undefined ? { deferJitterSeconds: opts.deferJitterSeconds } : {}),
    ...(opts.rateLimitPauseMs !== undefined ? { rateLimitPauseMs: opts.rateLimitPauseMs } : {}),
  };
}

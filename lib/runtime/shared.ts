import {
  ConfigSource,
  createConfigReader,
  type GatewayConfig,
  type GatewayEnv,
  readEnv,
} from '#lib/config/index.js';
import { createLogger, type Logger, Metrics, metricsNamespace } from '#lib/observability/index.js';
import { createSqsClient, SqsMessageQueue } from '#lib/queue/index.js';
import type { QuotaWindows, RetryPolicy } from '#lib/sender/index.js';
import { createDocumentClient, DynamoMessageStore, DynamoTokenStore } from '#lib/store/index.js';
import { type TokenBackoff, TokenCache, type TokenCacheOptions, type WecomClient } from '#lib/wecom/index.js';
import type { UndiciTransportOptions } from '#lib/wecom/undici.js';

/** Knobs a test or the local stack may turn; production uses the defaults. */
export interface RuntimeOptions {
  env?: GatewayEnv;
  /** A fixed config (never re-read); without it the config comes from GATEWAY_CONFIG or the secret. */
  config?: GatewayConfig;
  /** How old the config may get before an invocation re-reads it (default CONFIG_MAX_AGE_MS). */
  configMaxAgeMs?: number;
  windows?: QuotaWindows;
  /** End-of-window guard band (ms); must exceed the time from reservation to WeCom receiving the send. */
  quotaGuardMs?: number;
  retry?: RetryPolicy;
  deferJitterSeconds?: number;
  rateLimitPauseMs?: number;
  /** Waits before each probe of an app with a WeCom configuration error (default 1, 2, 5, 10, 15 min). */
  configProbeMs?: readonly number[];
  tokenLeaseMs?: number;
  /** Waits after failed gettoken calls (default: transient 2 s doubling to 60 s; configuration 1, 5, 15 min). */
  tokenBackoff?: TokenBackoff;
  /** WeCom client tuning (timeouts, connections); the base URL always comes from the environment. */
  wecom?: Omit<Partial<UndiciTransportOptions>, 'baseUrl'>;
  logWrite?: (line: string) => void;
}

/** Releases the container's sockets (used by the local stack and tests; Lambda just freezes). */
export interface Closable {
  close(): Promise<void>;
}

export interface Shared {
  env: GatewayEnv;
  /** The container's config, re-read with a bounded age (see ConfigSource). */
  configSource: ConfigSource;
  logger: Logger;
  metrics: Metrics;
  tokens: TokenCache;
  wecom: WecomClient;
  messages: DynamoMessageStore;
  queue: SqsMessageQueue;
  db: ReturnType<typeof createDocumentClient>;
}

/** What both functions build the same way: config, logger, metrics, clients, the token cache, the stores. */
export async function buildCommonDeps(
  service: string,
  opts: RuntimeOptions,
  /** Builds the WeCom client; `userAgent` names the function to WeCom (and to a proxy or the simulator). */
  wecomFor: (env: GatewayEnv, userAgent: string) => WecomClient,
  tokenOpts: Pick<TokenCacheOptions, 'maxWaitMs'> = {},
): Promise<Shared> {
  const env = opts.env ?? readEnv();
  const logger = createLogger(
    { service },
    { level: env.logLevel, ...(opts.logWrite ? { write: opts.logWrite } : {}) },
  );
  const metrics = new Metrics(service, {
    namespace: metricsNamespace(env.stage),
    ...(opts.logWrite && { write: opts.logWrite }),
  });
  const configSource = opts.config
    ? ConfigSource.fixed(opts.config)
    : await ConfigSource.load(createConfigReader(env), {
        ...(opts.configMaxAgeMs !== undefined && { maxAgeMs: opts.configMaxAgeMs }),
        // The container keeps its last good config; the metric's alarm tells the operator (infra/).
        onError: (err) => {
          logger.error('config re-read failed; keeping the last good config', { err });
          metrics.count('ConfigReloadFailed');
        },
        onChange: (source) => logger.info('config changed; now in force', { source }),
      });
  const db = createDocumentClient(`wecom-gateway/${service}`);
  const wecom = wecomFor(env, `wecom-gateway/${service}`);
  const tokens = new TokenCache(new DynamoTokenStore(db, env.tableName), wecom, {
    ...tokenOpts,
    ...(opts.tokenLeaseMs ? { leaseMs: opts.tokenLeaseMs } : {}),
    ...(opts.tokenBackoff ? { backoff: opts.tokenBackoff } : {}),
    onFetch: () => metrics.count('GetTokenCalls'),
  });
  return {
    env,
    configSource,
    logger,
    metrics,
    tokens,
    wecom,
    db,
    messages: new DynamoMessageStore(db, env.tableName),
    queue: new SqsMessageQueue(createSqsClient(`wecom-gateway/${service}`), env.queueUrls),
  };
}

import {
  ConfigSource,
  createConfigReader,
  type FunctionEnv,
  type GatewayConfig,
  type GatewayEnv,
  readEnv,
} from '#lib/config/index.js';
import type { Resolver } from '#lib/net/index.js';
// Deep import: the notify index also holds the webhook sender and its undici client, which ingest must not bundle.
import { notifyOnStatus } from '#lib/notify/emit.js';
import { createLogger, type Logger, Metrics, metricsNamespace } from '#lib/observability/index.js';
import type { ReleaseTimers } from '#lib/queue/index.js';
import { SqsNotifyQueue } from '#lib/queue/notify-queue.js';
import { createSqsClient, SqsMessageQueue } from '#lib/queue/sqs-queue.js';
import type { QuotaWindows } from '#lib/quota/index.js';
import type { RetryPolicy } from '#lib/sender/index.js';
// Deep imports: the store's index holds every store, those ingest loads on first use and the sender's too.
import { createDocumentClient } from '#lib/store/client.js';
import { DynamoMessageStore } from '#lib/store/message-store.js';
import type { WebhookRetryPolicy } from '#lib/webhooks/retry.js';
import type { TokenBackoff } from '#lib/wecom/index.js';
import type { UndiciTransportOptions } from '#lib/wecom/undici.js';

/** Knobs a test or the local stack may turn; production uses the defaults. */
export interface RuntimeOptions {
  env?: GatewayEnv;
  /** A fixed config (never re-read); without it the config comes from GATEWAY_CONFIG or the secret. */
  config?: GatewayConfig;
  /** How old the config may get before an invocation re-reads it (default CONFIG_MAX_AGE_MS). */
  configMaxAgeMs?: number;
  windows?: QuotaWindows;
  /** A quota slot this close is waited for in the sender; later ones through the queue (default 4 s). */
  slotWaitMs?: number;
  /** How late a quota slot may still be used (default 5 s, less when the safety margin absorbs less). */
  slotLatenessMs?: number;
  /** How long a broadcast's resolved membership is used before it is read again (default 24 h). */
  directoryRefreshMs?: number;
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
  /** Webhook retry schedule (default ≥ 24 h); tests shorten it. */
  webhookRetry?: WebhookRetryPolicy;
  /**
   * DNS for webhook targets, in ingest's callback_url check and the notify client alike (tests: names that resolve
   * to loopback, or to a private address on the second lookup). Default the system resolver.
   */
  webhookResolve?: Resolver;
  /** Extra CA for webhook targets (tests: a self-signed receiver). */
  webhookCa?: string | Buffer;
  /** The clock the callback verifier checks timestamps against (tests replaying WeCom's 2014 vectors). */
  callbackClock?: () => number;
  /**
   * The clock of ingest and the sender (acceptance, schedules, quota, deadlines): the local stack's, which a test
   * moves forward to reach a scheduled message's time. Default the system clock.
   */
  now?: () => number;
  /** Release timers instead of EventBridge Scheduler's (the local stack's emulation, local/release-timers.ts). */
  timers?: ReleaseTimers;
  logWrite?: (line: string) => void;
}

/** Releases the container's sockets (used by the local stack and tests; Lambda just freezes). */
export interface Closable {
  close(): Promise<void>;
}

export interface Base<E extends FunctionEnv = FunctionEnv> {
  env: E;
  /** The container's config, re-read with a bounded age (see ConfigSource). */
  configSource: ConfigSource;
  logger: Logger;
  metrics: Metrics;
  db: ReturnType<typeof createDocumentClient>;
  sqs: ReturnType<typeof createSqsClient>;
  /** The notify queue, when the function was given its URL. */
  notify?: SqsNotifyQueue;
}

export interface Shared extends Base<GatewayEnv> {
  /** The function's name (`ingest`, `sender`), for user agents. */
  service: string;
  messages: DynamoMessageStore;
  queue: SqsMessageQueue;
}

/** What every function builds the same way: environment, config source, logger, metrics, the AWS clients. */
export async function buildBase<E extends FunctionEnv>(
  service: string,
  opts: RuntimeOptions,
  readEnvOf: () => E,
): Promise<Base<E>> {
  const env = (opts.env as E | undefined) ?? readEnvOf();
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
  const sqs = createSqsClient(`wecom-gateway/${service}`);
  const notify = env.notifyQueueUrl
    ? new SqsNotifyQueue(sqs, {
        queue: env.notifyQueueUrl,
        ...(env.notifyDlqUrl ? { deadLetter: env.notifyDlqUrl } : {}),
      })
    : undefined;
  return { env, configSource, logger, metrics, db, sqs, ...(notify ? { notify } : {}) };
}

/**
 * What ingest and the sender build the same way: the base, the lanes, and the message store — which queues a status
 * webhook job whenever it writes an outcome (lib/notify `notifyOnStatus`). Their ways to WeCom: ./wecom.ts.
 */
export async function buildCommonDeps(service: string, opts: RuntimeOptions): Promise<Shared> {
  const base = await buildBase(service, opts, () => readEnv());
  const { env, db, metrics, configSource } = base;
  const onStatus = base.notify
    ? notifyOnStatus({
        // Read on every status: the config source swaps in a re-read config.
        get config() {
          return configSource.current;
        },
        queue: base.notify,
        logger: base.logger,
        metrics,
      })
    : undefined;
  if (!onStatus) base.logger.warn('no notify queue configured: status webhooks are not sent');
  return {
    ...base,
    service,
    messages: new DynamoMessageStore(db, env.tableName, opts.now ?? Date.now, onStatus),
    queue: new SqsMessageQueue(base.sqs, env.queueUrls),
  };
}

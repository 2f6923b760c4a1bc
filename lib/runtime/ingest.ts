import type { ConfigSource } from '#lib/config/index.js';
import type { IngestDeps } from '#lib/ingest/index.js';
import { channelKey } from '#lib/messages/index.js';
import { type ReleaseTimers, SqsDeadLetterQueue, SqsQueueDepths } from '#lib/queue/index.js';
import { QuotaUsageReader, ROBOT_MEMBER, robotQuota, WECOM_WINDOWS } from '#lib/quota/index.js';
import type { ReleaseTimerTarget } from '#lib/resources/index.js';
import {
  DynamoCardCodeStore,
  DynamoEventStore,
  DynamoIdempotencyStore,
  DynamoMessageList,
  DynamoPauseStore,
  DynamoQuotaStore,
  DynamoWebhookLog,
} from '#lib/store/index.js';
import { createFetchWecomClient, VisibleRangeCache } from '#lib/wecom/index.js';
import { buildCommonDeps, type Closable, type RuntimeOptions } from './shared.js';

/**
 * Everything the ingest function needs, built once per container (clients, config, logger).
 *
 * @example const deps = await createIngestDeps(); // at module scope of the handler
 */
export async function createIngestDeps(
  opts: RuntimeOptions = {},
): Promise<IngestDeps & Closable & { configSource: ConfigSource }> {
  // Ingest only recalls and updates cards now and then: Node's fetch keeps undici out of its bundle.
  // A token wait shorter than the function's 10 s timeout, so a recall or card update answers the gateway's own 503
  // (review L2).
  const s = await buildCommonDeps(
    'ingest',
    opts,
    (env, userAgent) => createFetchWecomClient({ baseUrl: env.wecomApiBase, userAgent }),
    { maxWaitMs: 5_000 },
  );
  // Read only: the senders' quota counters, for GET /v1/apps/{app}.
  const quota = new QuotaUsageReader(
    new DynamoQuotaStore(s.db, s.env.tableName),
    opts.windows ?? WECOM_WINDOWS,
  );
  const table = s.env.tableName;
  return {
    // Read on every use: the config source swaps in a re-read config (lib/config/source.ts).
    get config() {
      return s.configSource.current;
    },
    configSource: s.configSource,
    messages: s.messages,
    messageList: new DynamoMessageList(s.db, table),
    idempotency: new DynamoIdempotencyStore(s.db, table),
    queue: s.queue,
    ...(opts.timers
      ? { timers: opts.timers }
      : s.env.releaseTimers
        ? { timers: eventBridgeTimers(s.env.releaseTimers) }
        : {}),
    ...(opts.now ? { now: opts.now } : {}),
    ...(s.env.deadLetterQueueUrls
      ? { deadLetters: new SqsDeadLetterQueue(s.sqs, s.env.deadLetterQueueUrls) }
      : {}),
    queueDepths: new SqsQueueDepths(s.sqs, s.env.queueUrls, s.env.deadLetterQueueUrls),
    events: new DynamoEventStore(s.db, table),
    webhooks: new DynamoWebhookLog(s.db, table),
    cards: new DynamoCardCodeStore(s.db, table),
    logger: s.logger,
    metrics: s.metrics,
    tokens: s.tokens,
    pauses: new DynamoPauseStore(s.db, s.env.tableName),
    quotaUsage: {
      usage: async (app, now) => {
        const config = s.configSource.current.apps[app];
        return config ? quota.usage(app, config.quota, now) : [];
      },
      robotUsage: async (robot, now) => {
        const config = s.configSource.current.robots?.[robot];
        if (!config) return undefined;
        const key = channelKey({ kind: 'robot', name: robot });
        return quota.memberMinute(key, ROBOT_MEMBER, robotQuota(config.quota), now);
      },
    },
    wecom: s.wecom,
    visibleRanges: new VisibleRangeCache(s.tokens, s.wecom),
    // No urlGuard: lib/ingest builds one per config object, so a re-read config's allowLoopbackWebhooks holds.
    ...(opts.webhookResolve ? { resolve: opts.webhookResolve } : {}),
    close: () => s.wecom.close(),
  };
}

/**
 * EventBridge Scheduler's timers, with its client loaded on the first schedule beyond SQS's 15 minutes or the first
 * cancel of one, not at every cold start: most messages never need it (bundling keeps it in a chunk of its own).
 */
function eventBridgeTimers(settings: ReleaseTimerTarget): ReleaseTimers {
  let loaded: Promise<ReleaseTimers> | undefined;
  const timers = (): Promise<ReleaseTimers> => {
    loaded ??= import('#lib/queue/eventbridge-release-timers.js').then(
      (m) => new m.EventBridgeReleaseTimers(m.createSchedulerClient('wecom-gateway/ingest'), settings),
      (err: unknown) => {
        loaded = undefined;
        throw err;
      },
    );
    return loaded;
  };
  return {
    set: async (timer) => (await timers()).set(timer),
    clear: async (id) => (await timers()).clear(id),
  };
}

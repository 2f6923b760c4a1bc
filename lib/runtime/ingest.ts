import type { ConfigSource } from '#lib/config/index.js';
import type { IngestDeps } from '#lib/ingest/index.js';
import type { ReleaseTimers } from '#lib/queue/index.js';
import type { ReleaseTimerTarget } from '#lib/resources/index.js';
// A deep import: the stores' index would bring every store into the cold start (infra/constructs/esbuild-options.ts).
import { DynamoIdempotencyStore } from '#lib/store/idempotency-store.js';
import { OnFirstUse } from '#lib/util/index.js';
import type { LazyPorts } from './ingest-lazy.js';
import { buildCommonDeps, type Closable, type RuntimeOptions } from './shared.js';

/**
 * Everything the ingest function needs, built once per container (clients, config, logger).
 *
 * What sending uses is built here; what the other routes use (a message's status and the list, events, an app's
 * state, recall, card updates, reach, the DLQ) is built on its first use, with its code (./ingest-lazy.ts): the
 * ports below forward to it.
 *
 * @example const deps = await createIngestDeps(); // at module scope of the handler
 */
export async function createIngestDeps(
  opts: RuntimeOptions = {},
): Promise<IngestDeps & Closable & { configSource: ConfigSource }> {
  const s = await buildCommonDeps('ingest', opts);
  const lazy = new OnFirstUse(async () => (await import('./ingest-lazy.js')).buildLazyPorts(s, opts));
  const port = (): Promise<LazyPorts> => lazy.get();
  const table = s.env.tableName;
  const deadLetters = s.env.deadLetterQueueUrls !== undefined;
  return {
    // Read on every use: the config source swaps in a re-read config (lib/config/source.ts).
    get config() {
      return s.configSource.current;
    },
    configSource: s.configSource,
    messages: s.messages,
    idempotency: new DynamoIdempotencyStore(s.db, table),
    queue: s.queue,
    ...(opts.timers
      ? { timers: opts.timers }
      : s.env.releaseTimers
        ? { timers: eventBridgeTimers(s.env.releaseTimers) }
        : {}),
    ...(opts.now ? { now: opts.now } : {}),
    events: {
      listByApp: async (...a) => (await port()).events.listByApp(...a),
      listByMessage: async (...a) => (await port()).events.listByMessage(...a),
    },
    webhooks: { listAttempts: async (...a) => (await port()).webhooks.listAttempts(...a) },
    logger: s.logger,
    metrics: s.metrics,
    messageList: { list: async (query) => (await port()).messageList.list(query) },
    cards: {
      save: async (...a) => (await port()).cards.save(...a),
      take: async (...a) => (await port()).cards.take(...a),
      restore: async (...a) => (await port()).cards.restore(...a),
    },
    tokens: {
      withToken: async (app, call) => (await port()).tokens.withToken(app, call),
      describe: async (app) => (await port()).tokens.describe(app),
    },
    wecom: {
      recall: async (...a) => (await port()).wecom.recall(...a),
      updateTemplateCard: async (...a) => (await port()).wecom.updateTemplateCard(...a),
    },
    visibleRanges: { get: async (app) => (await port()).visibleRanges.get(app) },
    pauses: { get: async (app) => (await port()).pauses.get(app) },
    quotaUsage: {
      usage: async (app, now) => (await port()).quotaUsage.usage(app, now),
      robotUsage: async (robot, now) => (await port()).quotaUsage.robotUsage?.(robot, now),
    },
    queueDepths: { depths: async () => (await port()).queueDepths.depths() },
    ...(deadLetters
      ? {
          deadLetters: {
            receive: async (...a) => (await deadLettersOf(port)).receive(...a),
            release: async (...a) => (await deadLettersOf(port)).release(...a),
            delete: async (...a) => (await deadLettersOf(port)).delete(...a),
          },
        }
      : {}),
    // No urlGuard: lib/ingest builds one per config object, so a re-read config's allowLoopbackWebhooks holds.
    ...(opts.webhookResolve ? { resolve: opts.webhookResolve } : {}),
    close: async () => (await lazy.settled())?.close(),
  };
}

async function deadLettersOf(port: () => Promise<LazyPorts>) {
  const { deadLetters } = await port();
  // Built whenever the environment names the DLQs, which is when this port exists.
  if (!deadLetters) throw new Error('the dead-letter queues are not configured');
  return deadLetters;
}

/**
 * EventBridge Scheduler's timers, with its client loaded on the first schedule beyond SQS's 15 minutes or the first
 * cancel of one, not at every cold start: most messages never need it (bundling keeps it in a chunk of its own).
 */
function eventBridgeTimers(settings: ReleaseTimerTarget): ReleaseTimers {
  const timers = new OnFirstUse(async (): Promise<ReleaseTimers> => {
    const m = await import('#lib/queue/eventbridge-release-timers.js');
    return new m.EventBridgeReleaseTimers(m.createSchedulerClient('wecom-gateway/ingest'), settings);
  });
  return {
    set: async (timer) => (await timers.get()).set(timer),
    clear: async (id) => (await timers.get()).clear(id),
  };
}

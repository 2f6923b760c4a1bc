import type { IngestDeps } from '#lib/ingest/index.js';
import { channelKey } from '#lib/messages/index.js';
import { SqsDeadLetterQueue } from '#lib/queue/sqs-dead-letter-queue.js';
import { SqsQueueDepths } from '#lib/queue/sqs-queue-depths.js';
import { QuotaUsageReader, ROBOT_MEMBER, robotQuota, WECOM_WINDOWS } from '#lib/quota/index.js';
import { DynamoCardCodeStore } from '#lib/store/card-store.js';
import { DynamoEventStore } from '#lib/store/event-store.js';
import { DynamoMessageList } from '#lib/store/message-list.js';
import { DynamoPauseStore } from '#lib/store/pause-store.js';
import { DynamoQuotaStore } from '#lib/store/quota-store.js';
import { DynamoWebhookLog } from '#lib/store/webhook-store.js';
import { createFetchWecomClient, VisibleRangeCache } from '#lib/wecom/index.js';
import type { RuntimeOptions, Shared } from './shared.js';
import { buildWecomDeps } from './wecom.js';

/**
 * What ingest's routes other than sending use: a message's status and the list, events, an app's or robot's state,
 * recall and card updates, reach, the DLQ.
 */
export type LazyPorts = Pick<
  IngestDeps,
  | 'events'
  | 'webhooks'
  | 'messageList'
  | 'cards'
  | 'tokens'
  | 'wecom'
  | 'visibleRanges'
  | 'pauses'
  | 'quotaUsage'
  | 'deadLetters'
> & {
  queueDepths: NonNullable<IngestDeps['queueDepths']>;
  close(): Promise<void>;
};

/**
 * Builds them on the first request that needs one (lib/runtime/ingest.ts): sending, what a cold start serves, uses
 * none of this code, so the function's bundle keeps it in a chunk of its own.
 */
export function buildLazyPorts(s: Shared, opts: RuntimeOptions): LazyPorts {
  const table = s.env.tableName;
  // Node's fetch keeps undici out of ingest's bundle: recall and card updates are occasional. A token wait shorter
  // than the function's 10 s timeout, so a recall or card update answers the gateway's own 503 (review L2).
  const { wecom, tokens } = buildWecomDeps(
    s,
    opts,
    (env, userAgent) => createFetchWecomClient({ baseUrl: env.wecomApiBase, userAgent }),
    { maxWaitMs: 5_000 },
  );
  // Read only: the senders' quota counters, for GET /v1/apps/{app}.
  const quota = new QuotaUsageReader(new DynamoQuotaStore(s.db, table), opts.windows ?? WECOM_WINDOWS);
  return {
    events: new DynamoEventStore(s.db, table),
    webhooks: new DynamoWebhookLog(s.db, table),
    messageList: new DynamoMessageList(s.db, table),
    cards: new DynamoCardCodeStore(s.db, table),
    tokens,
    wecom,
    visibleRanges: new VisibleRangeCache(tokens, wecom),
    pauses: new DynamoPauseStore(s.db, table),
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
    queueDepths: new SqsQueueDepths(s.sqs, s.env.queueUrls, s.env.deadLetterQueueUrls),
    ...(s.env.deadLetterQueueUrls !== undefined
      ? { deadLetters: new SqsDeadLetterQueue(s.sqs, s.env.deadLetterQueueUrls) }
      : {}),
    close: () => wecom.close(),
  };
}

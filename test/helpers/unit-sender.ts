import type { GatewayConfig } from '#lib/config/index.js';
import { QUOTA_DEFAULTS } from '#lib/config/index.js';
import type { AppMessageRequest, RobotMessageRequest } from '#lib/messages/index.js';
import {
  applyChange,
  encodeQueuedMessage,
  type FirstDelivery,
  type MessageEvent,
  type MessageRecord,
  newRecord,
  PENDING_STATUSES,
  type QueuedMessage,
  type StatusChange,
  toQueuedMessage,
  withFirstDelivery,
} from '#lib/model/index.js';
import { createLogger, Metrics } from '#lib/observability/index.js';
import type { MessageQueue } from '#lib/queue/index.js';
import { type QuotaDemand, QuotaGuard, WECOM_WINDOWS } from '#lib/quota/index.js';
import type { LaneName } from '#lib/resources/index.js';
import { type IncomingRecord, PauseCache, type SenderDeps } from '#lib/sender/index.js';
import { type FirstDeliveryItem, type MessageStore, StoreUnavailableError } from '#lib/store/index.js';
import {
  type MediaKey,
  type MediaStore,
  type RobotApi,
  RobotMediaCache,
  type RobotUpload,
  type SendResponse,
  type StoredMedia,
  TokenCache,
  type WecomApi,
} from '#lib/wecom/index.js';
import { InMemoryPauseStore } from './unit-pause-store.js';
import { InMemoryQuotaStore } from './unit-quota-store.js';
import { InMemoryTokenStore } from './unit-token-store.js';

/** Message records in memory with the conditional semantics of DynamoMessageStore. */
export class FakeSenderStore implements MessageStore {
  /** The record items as stored (first deliveries apart, in `firstDeliveries`); `record(id)` reads one as get() does. */
  readonly records = new Map<string, MessageRecord>();
  readonly firstDeliveries = new Map<string, FirstDelivery>();
  failTransitionsTo = new Set<string>();
  async create(r: MessageRecord) {
    if (this.records.has(r.id)) return 'exists' as const;
    this.records.set(r.id, structuredClone(r));
    return 'created' as const;
  }
  async createBatch(records: MessageRecord[]) {
    for (const r of records) this.records.set(r.id, structuredClone(r));
    return { unwritten: [], tooLarge: [] };
  }
  async get(id: string) {
    return this.record(id);
  }
  /** The record as get() reads it: with its first delivery folded in. */
  record(id: string): MessageRecord | undefined {
    const r = this.records.get(id);
    return r ? withFirstDelivery(structuredClone(r), this.firstDeliveries.get(id)) : undefined;
  }
  /** putFirstDeliveries throws (DynamoDB unavailable). */
  failPutSent = false;
  async putFirstDeliveries(deliveries: FirstDeliveryItem[]) {
    if (this.failPutSent)
      throw new StoreUnavailableError({ cause: new Error('DynamoDB unavailable (batch write)') });
    for (const d of deliveries) this.firstDeliveries.set(d.id, structuredClone(d.delivery));
    return [];
  }
  async noteEvent(id: string, event: MessageEvent) {
    const r = this.records.get(id);
    if (!r) return false;
    r.events = [...(r.events ?? []), event];
    return true;
  }
  async claimCopy(id: string, generation: number, opts: { redelivery?: boolean } = {}) {
    const r = this.records.get(id);
    const claimed = r?.claimedGeneration ?? -1;
    const taken = opts.redelivery ? claimed > generation : claimed >= generation;
    if (!r || !PENDING_STATUSES.includes(r.status) || taken) return false;
    r.claimedGeneration = generation;
    return true;
  }
  async transition(id: string, c: StatusChange) {
    if (this.failTransitionsTo.has(c.to))
      throw new StoreUnavailableError({ cause: new Error(`transition to ${c.to}`) });
    const r = this.records.get(id);
    const changed = r && applyChange(r, c);
    if (changed) this.records.set(id, changed);
    return changed !== undefined;
  }
}

export class FakeLanes implements MessageQueue {
  readonly enqueued: { lane: LaneName; message: QueuedMessage; delaySeconds: number }[] = [];
  readonly visibility: { receiptHandle: string; seconds: number }[] = [];
  /** The lane of each retryAfter call, in order. */
  readonly retryLanes: LaneName[] = [];
  async enqueue(lane: LaneName, message: QueuedMessage, delaySeconds = 0) {
    this.enqueued.push({ lane, message: structuredClone(message), delaySeconds });
  }
  async enqueueBatch() {
    return [];
  }
  async retryAfter(lane: LaneName, receiptHandle: string, seconds: number) {
    this.visibility.push({ receiptHandle, seconds });
    this.retryLanes.push(lane);
  }
}

/** A WeCom double: records every send body; answers from a script, then success. */
export class FakeWecom implements Pick<WecomApi, 'send' | 'getToken'> {
  readonly sends: Record<string, unknown>[] = [];
  readonly calls: string[] = [];
  script: (() => Promise<SendResponse>)[] = [];
  async getToken() {
    this.calls.push('gettoken');
    return { access_token: `token-${this.calls.length}`, expires_in: 7200 };
  }
  async send(_token: string, body: Record<string, unknown>) {
    this.calls.push('send');
    this.sends.push(structuredClone(body));
    const next = this.script.shift();
    return next ? next() : { msgid: `msgid-${this.sends.length}` };
  }
}

/** A group robots' double: records every post and upload; answers posts from a script, then success. */
export class FakeRobots implements RobotApi {
  readonly posts: { key: string; body: Record<string, unknown> }[] = [];
  readonly uploads: { key: string; upload: RobotUpload }[] = [];
  script: (() => Promise<void>)[] = [];
  async send(key: string, body: Record<string, unknown>) {
    this.posts.push({ key, body: structuredClone(body) });
    const next = this.script.shift();
    if (next) await next();
  }
  async upload(key: string, upload: RobotUpload) {
    this.uploads.push({ key, upload });
    return { mediaId: `media-${this.uploads.length}`, createdAtMs: Date.parse('2026-12-01T08:00:00Z') };
  }
}

/** Robots' media ids in memory, as DynamoMediaStore keeps them. */
export class InMemoryMediaStore implements MediaStore {
  readonly items = new Map<string, StoredMedia>();
  async get(key: MediaKey) {
    return this.items.get(`${key.robot}#${key.upload}`);
  }
  async put(key: MediaKey, media: StoredMedia) {
    this.items.set(`${key.robot}#${key.upload}`, media);
  }
  async forget(key: MediaKey, mediaId: string) {
    if (this.items.get(`${key.robot}#${key.upload}`)?.mediaId === mediaId)
      this.items.delete(`${key.robot}#${key.upload}`);
  }
}

/** The key of the unit config's robot `oncall`. */
export const ROBOT_KEY = '693a91f6-7b2c-4bc4-97a0-0ec2f1fa5aaa';

export const senderConfig = (): GatewayConfig => ({
  apps: { ops: { corpId: 'wwunit', agentId: 1000002, secret: 'unit-secret', quota: { ...QUOTA_DEFAULTS } } },
  apiKeys: [],
  retentionDays: 30,
  idempotencyHours: 24,
  allowLoopbackWebhooks: false,
  robots: { oncall: { key: ROBOT_KEY, quota: { perMinute: 20, safetyMargin: 0.2, normalShare: 0.8 } } },
});

export function senderHarness(now: () => number) {
  const store = new FakeSenderStore();
  const lanes = new FakeLanes();
  const wecom = new FakeWecom();
  const quotaStore = new InMemoryQuotaStore();
  const pauseStore = new InMemoryPauseStore();
  const robots = new FakeRobots();
  const mediaStore = new InMemoryMediaStore();
  const deps: SenderDeps = {
    config: senderConfig(),
    messages: store,
    queue: lanes,
    tokens: new TokenCache(new InMemoryTokenStore(now), wecom, { now }),
    quota: new QuotaGuard(quotaStore, { windows: WECOM_WINDOWS, now, sleep: async () => undefined }),
    pauses: new PauseCache(pauseStore, { now }),
    wecom,
    robots,
    robotMedia: new RobotMediaCache(mediaStore, robots, { now }),
    logger: createLogger({ service: 'test' }, { level: 'silent' }),
    metrics: new Metrics('test', () => undefined),
    maxReceiveCount: 6,
    retry: { baseSeconds: 1, capSeconds: 1 },
    deferJitterSeconds: 0,
    now,
    random: () => 0.5,
  };
  return { deps, store, lanes, wecom, quotaStore, pauseStore, robots, mediaStore };
}

export type SenderHarness = ReturnType<typeof senderHarness>;

/** Books `member`'s line (normal lane: a slot every 60 s ÷ 19) about `slots` slots ahead, as other messages would. */
export async function busyMember(h: SenderHarness, member: string, slots = 5): Promise<void> {
  const d: QuotaDemand = {
    app: 'ops',
    quota: { ...QUOTA_DEFAULTS },
    priority: 'normal',
    members: [member],
    splittable: true,
    extraPersonTimes: 0,
    broadcasts: 0,
    broadcastShare: 0,
  };
  for (let i = 0; i < slots; i++) await h.deps.quota.reserve(d);
}

/** The last copy the sender queued (a deferral, the rest of a part, the next part of split content). */
export function lastCopy(h: SenderHarness): QueuedMessage {
  const copy = h.lanes.enqueued.at(-1)?.message;
  if (!copy) throw new Error('no copy queued');
  return copy;
}

/** The next `enqueue` fails (SQS unavailable); the ones after it succeed. */
export function failNextEnqueue(h: SenderHarness): void {
  const enqueue = h.lanes.enqueue.bind(h.lanes);
  let failNext = true;
  h.lanes.enqueue = async (...args) => {
    if (failNext) {
      failNext = false;
      throw new Error('SQS unavailable');
    }
    return enqueue(...args);
  };
}

/** A message to the unit config's robot `oncall`. */
export function robotRequest(
  msgtype: RobotMessageRequest['msgtype'] = 'text',
  content: Record<string, unknown> = { content: 'disk full on db-1' },
): RobotMessageRequest {
  return { robot: 'oncall', priority: 'normal', msgtype, content };
}

export function textRequest(overrides: Partial<AppMessageRequest['recipients']> = {}): AppMessageRequest {
  return {
    app: 'ops',
    priority: 'normal',
    recipients: { touser: ['zhangsan'], toparty: [], totag: [], ...overrides },
    msgtype: 'text',
    content: { content: 'hello' },
    options: {},
  };
}

/**
 * A record as ingest stores it, plus the queue body and an SQS record for a given receive. `duplicateCheckSeconds`:
 * what ingest fixed (default 3600, the app default); `undefined` for a body queued before it existed.
 */
export function queued(
  id: string,
  nowMs: number,
  request: AppMessageRequest | RobotMessageRequest = textRequest(),
  opts: { duplicateCheckSeconds?: number | undefined } = { duplicateCheckSeconds: 3600 },
) {
  const createdAt = new Date(nowMs).toISOString();
  const origin = {
    id,
    priority: request.priority,
    apiKey: 'unit',
    createdAt,
    expiresAt: Math.floor(nowMs / 1000) + 86_400,
  };
  const record: MessageRecord =
    request.robot !== undefined
      ? newRecord({ ...origin, robot: request.robot, request })
      : newRecord({
          ...origin,
          app: request.app,
          request,
          ...(opts.duplicateCheckSeconds !== undefined
            ? { duplicateCheckSeconds: opts.duplicateCheckSeconds }
            : {}),
        });
  const body = (generation = 0): QueuedMessage => ({ ...toQueuedMessage(record), generation });
  const sqs = (
    message: QueuedMessage,
    receiveCount: number,
    n = 1,
    firstReceivedAtMs = nowMs,
  ): IncomingRecord => ({
    sqsMessageId: `${id}-${message.generation}-${receiveCount}-${n}`,
    receiptHandle: `rh-${id}-${receiveCount}-${n}`,
    body: encodeQueuedMessage(message),
    receiveCount,
    lane: 'normal',
    firstReceivedAtMs,
  });
  return { record, body, sqs };
}

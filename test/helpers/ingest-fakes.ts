import { expect } from 'vitest';
import type { ApiKeyConfig, GatewayConfig } from '#lib/config/index.js';
import { type IngestDeps, IngestError, sha256Hex } from '#lib/ingest/index.js';
import {
  applyChange,
  type MessageEvent,
  type MessageRecord,
  type QueuedMessage,
  type StatusChange,
} from '#lib/model/index.js';
import type { UrlGuard } from '#lib/net/index.js';
import { createLogger, Metrics } from '#lib/observability/index.js';
import { type MessageQueue, QueueUnavailableError } from '#lib/queue/index.js';
import type { LaneName } from '#lib/resources/index.js';
import {
  type CardCodeSource,
  type CardCodeStore,
  type ClaimResult,
  type IdempotencyEntry,
  type IdempotencyStore,
  type MessageList,
  type MessageListPage,
  type MessageListQuery,
  type MessageStore,
  StoreUnavailableError,
} from '#lib/store/index.js';
import { TokenCache, VisibleRangeCache, type WecomApi } from '#lib/wecom/index.js';
import { InMemoryTokenStore } from './unit-token-store.js';

/** What a store adapter throws while DynamoDB is down. */
export const storeDown = () => new StoreUnavailableError({ cause: new Error('dynamo down') });

/** In-memory doubles of the ingest ports, recording every call (unit tests never touch the network). */
export class FakeMessageStore implements MessageStore {
  readonly records = new Map<string, MessageRecord>();
  readonly calls: string[] = [];
  failCreate = false;
  /** create stores the record, then answers as the store does to the SDK's retry of a write whose answer was lost. */
  createAnswerLost = false;
  async create(record: MessageRecord) {
    this.calls.push('create');
    if (this.failCreate) throw storeDown();
    this.records.set(record.id, structuredClone(record));
    return this.createAnswerLost ? 'exists' : 'created';
  }
  /** createBatch reports this many leading records as not written (DynamoDB's UnprocessedItems, exhausted). */
  unwrittenInBatch = 0;
  /** …and stores them all the same (the request timed out after DynamoDB applied it). */
  unwrittenStoredAnyway = false;
  async createBatch(records: MessageRecord[]) {
    this.calls.push(`createBatch:${records.length}`);
    if (this.failCreate) throw storeDown();
    const unwritten = records.slice(0, this.unwrittenInBatch);
    const stored = this.unwrittenStoredAnyway ? records : records.slice(this.unwrittenInBatch);
    for (const r of stored) this.records.set(r.id, structuredClone(r));
    return { unwritten: unwritten.map((r) => r.id), tooLarge: [] };
  }
  async get(id: string) {
    this.calls.push('get');
    return this.records.get(id);
  }
  async putFirstDeliveries(): Promise<string[]> {
    throw new Error('not used by ingest');
  }
  async claimCopy(): Promise<boolean> {
    throw new Error('not used by ingest');
  }
  async noteEvent(id: string, event: MessageEvent) {
    const r = this.records.get(id);
    if (!r) return false;
    r.events = [...(r.events ?? []), event];
    return true;
  }
  async transition(id: string, c: StatusChange) {
    this.calls.push(`transition:${c.to}`);
    const r = this.records.get(id);
    const changed = r && applyChange(r, c);
    if (changed) this.records.set(id, changed);
    return changed !== undefined;
  }
}

/** The message list's port: records every query and answers the page a test set (default: empty, the end). */
export class FakeMessageList implements MessageList {
  readonly queries: MessageListQuery[] = [];
  page: MessageListPage = { messages: [] };
  async list(query: MessageListQuery) {
    this.queries.push(structuredClone(query));
    return structuredClone(this.page);
  }
}

/** Card response codes on the fake records, as the DynamoDB adapter keeps them (lib/store card-store.ts). */
export class FakeCardCodes implements CardCodeStore {
  constructor(private readonly messages: FakeMessageStore) {}
  async save(id: string, code: string, at: string) {
    const r = this.messages.records.get(id);
    if (r && (!r.cardCode || r.cardCode.at <= at)) r.cardCode = { code, at };
  }
  async take(id: string, source: CardCodeSource, code: string) {
    const r = this.messages.records.get(id);
    if (!r) return false;
    if (source === 'event') {
      if (r.cardCode?.code !== code) return false;
      delete r.cardCode;
      return true;
    }
    if (r.sendCodeSpent || r.wecom?.response_code !== code) return false;
    r.sendCodeSpent = true;
    return true;
  }
  async restore(id: string, source: CardCodeSource, code: string, at: string) {
    const r = this.messages.records.get(id);
    if (!r) return;
    if (source === 'event') await this.save(id, code, at);
    else if (r.wecom?.response_code === code) delete r.sendCodeSpent;
  }
}

export class FakeQueue implements MessageQueue {
  readonly sent: { lane: LaneName; message: QueuedMessage }[] = [];
  readonly calls: string[] = [];
  fail = false;
  async enqueue(lane: LaneName, message: QueuedMessage) {
    this.calls.push(`enqueue:${lane}`);
    if (this.fail) throw new QueueUnavailableError({ cause: new Error('sqs down') });
    this.sent.push({ lane, message });
  }
  async enqueueBatch(lane: LaneName, messages: QueuedMessage[]) {
    this.calls.push(`enqueueBatch:${lane}:${messages.length}`);
    if (this.fail) return messages.map((m) => m.id);
    for (const message of messages) this.sent.push({ lane, message });
    return [];
  }
  async retryAfter() {
    throw new Error('not used by ingest');
  }
}

export class FakeIdempotencyStore implements IdempotencyStore {
  readonly entries = new Map<string, IdempotencyEntry & { ttlMs: number }>();
  readonly calls: string[] = [];
  async claim(apiKey: string, keyHash: string, entry: IdempotencyEntry, ttlMs: number): Promise<ClaimResult> {
    this.calls.push('claim');
    const existing = this.entries.get(`${apiKey}#${keyHash}`);
    if (existing) return { claimed: false, existing };
    this.entries.set(`${apiKey}#${keyHash}`, { ...entry, ttlMs });
    return { claimed: true };
  }
  async read(apiKey: string, keyHash: string): Promise<IdempotencyEntry | undefined> {
    this.calls.push('read');
    const e = this.entries.get(`${apiKey}#${keyHash}`);
    return e
      ? { bodyHash: e.bodyHash, messageId: e.messageId, ...(e.accepted ? { accepted: true } : {}) }
      : undefined;
  }
  /** markAccepted throws (DynamoDB unavailable). */
  failMarkAccepted = false;
  async markAccepted(apiKey: string, keyHash: string, messageId: string) {
    this.calls.push('markAccepted');
    if (this.failMarkAccepted) throw storeDown();
    const e = this.entries.get(`${apiKey}#${keyHash}`);
    if (e?.messageId === messageId) e.accepted = true;
  }
  /** release throws (DynamoDB unavailable). */
  failRelease = false;
  async release(apiKey: string, keyHash: string, messageId: string) {
    this.calls.push('release');
    if (this.failRelease) throw storeDown();
    if (this.entries.get(`${apiKey}#${keyHash}`)?.messageId === messageId)
      this.entries.delete(`${apiKey}#${keyHash}`);
  }
}

/** The plaintext of the `ops-key` API key in {@link fakeConfig}. */
export const OPS_KEY = 'ops-key-0123456789';

export const fakeConfig = (overrides: Partial<GatewayConfig> = {}): GatewayConfig => ({
  apps: {
    ops: { corpId: 'wwfake', agentId: 1000002, secret: 'secret-ops', quota: {} as never },
    billing: { corpId: 'wwfake', agentId: 1000003, secret: 'secret-billing', quota: {} as never },
  },
  apiKeys: [
    {
      name: 'ops-key',
      sha256: sha256Hex(OPS_KEY),
      apps: ['ops'],
      scopes: ['messages:write', 'messages:read', 'messages:recall'],
    },
  ],
  retentionDays: 30,
  idempotencyHours: 24,
  allowLoopbackWebhooks: false,
  ...overrides,
});

export interface FakeIngest {
  deps: IngestDeps;
  messages: FakeMessageStore;
  messageList: FakeMessageList;
  queue: FakeQueue;
  idempotency: FakeIdempotencyStore;
  recalls: string[];
  /** Bodies sent to WeCom's update_template_card. */
  cardUpdates: Record<string, unknown>[];
  /** gettoken calls made through the deps' real TokenCache (tokens are `t0`, `t1`, …). */
  tokenFetches: () => number;
  logs: string[];
}

/** IngestDeps over in-memory fakes; `wecomRecall` decides what WeCom answers to `message/recall`. */
export function fakeIngest(
  opts: {
    config?: GatewayConfig;
    urlGuard?: UrlGuard;
    now?: () => number;
    wecomRecall?: (token: string, msgid: string) => Promise<void>;
    wecomUpdateCard?: (token: string, body: Record<string, unknown>) => Promise<void>;
    /** WeCom's answer to agent/get; default: an app that sees the whole corp. */
    wecomAgentGet?: (token: string, query: Record<string, string>) => Promise<Record<string, unknown>>;
  } = {},
): FakeIngest {
  const messages = new FakeMessageStore();
  const messageList = new FakeMessageList();
  const queue = new FakeQueue();
  const idempotency = new FakeIdempotencyStore();
  const recalls: string[] = [];
  const logs: string[] = [];
  let fetches = 0;
  const tokens = new TokenCache(new InMemoryTokenStore(Date.now), {
    getToken: async () => ({ access_token: `t${fetches++}`, expires_in: 7200 }),
  });
  const cardUpdates: Record<string, unknown>[] = [];
  const wecom: Pick<WecomApi, 'recall' | 'updateTemplateCard'> = {
    recall: async (token, msgid) => {
      recalls.push(`${token}:${msgid}`);
      await opts.wecomRecall?.(token, msgid);
    },
    updateTemplateCard: async (token, body) => {
      cardUpdates.push(body);
      await opts.wecomUpdateCard?.(token, body);
    },
  };
  const agentGet = {
    contacts: async (token: string, _api: string, query: Record<string, string>) =>
      opts.wecomAgentGet ? opts.wecomAgentGet(token, query) : { allow_partys: { partyid: [1] } },
  };
  const deps: IngestDeps = {
    config: opts.config ?? fakeConfig(),
    messages,
    messageList,
    idempotency,
    queue,
    logger: createLogger({ service: 'test' }, { write: (line) => logs.push(line) }),
    metrics: new Metrics('test', () => undefined),
    events: { listByApp: async () => ({ events: [] }), listByMessage: async () => [] },
    webhooks: { listAttempts: async () => [] },
    cards: new FakeCardCodes(messages),
    tokens,
    pauses: { get: async () => undefined },
    quotaUsage: { usage: async () => [] },
    wecom,
    visibleRanges: new VisibleRangeCache(tokens, agentGet, opts.now ? { now: opts.now } : {}),
    urlGuard: opts.urlGuard ?? { assertSafe: async () => undefined },
    ...(opts.now ? { now: opts.now } : {}),
  };
  return {
    deps,
    messages,
    messageList,
    queue,
    idempotency,
    recalls,
    cardUpdates,
    tokenFetches: () => fetches,
    logs,
  };
}

/** The `ops-key` API key of {@link fakeConfig}: may write, read and recall for app `ops`. */
export const opsApiKey = (): ApiKeyConfig => fakeConfig().apiKeys[0] as ApiKeyConfig;

/** The IngestError a call rejects with; fails the test if it resolves or rejects with something else. */
export const ingestError = async (promise: Promise<unknown>): Promise<IngestError> => {
  try {
    await promise;
  } catch (err) {
    if (err instanceof IngestError) return err;
    throw err;
  }
  return expect.fail('expected an IngestError');
};

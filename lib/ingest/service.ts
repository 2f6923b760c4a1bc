import { randomFillSync } from 'node:crypto';
import { decodeTime, ulid } from 'ulid';
import type { ApiKeyConfig, GatewayConfig } from '#lib/config/index.js';
import {
  BadRequestError,
  ConflictError,
  type ErrorBody,
  ForbiddenError,
  NotFoundError,
  ServiceUnavailableError,
  toErrorBody,
} from '#lib/http/index.js';
import { type MessageRequest, validateMessageRequest } from '#lib/messages/index.js';
import {
  changes,
  type MessageError,
  type MessageEvent,
  type MessageRecord,
  type MessageStatus,
  newRecord,
  RECEIPT_LISTS,
  STATUS,
  toQueuedMessage,
  type WecomReceipt,
  type WithdrawReason,
} from '#lib/model/index.js';
import { createUrlGuard, LookupUnavailableError, UnsafeUrlError, type UrlGuard } from '#lib/net/index.js';
import type { Logger, Metrics } from '#lib/observability/index.js';
import type { MessageQueue } from '#lib/queue/index.js';
import {
  type IdempotencyEntry,
  type IdempotencyStore,
  isConditionFailed,
  type MessageStore,
  recentEvents,
} from '#lib/store/index.js';
import type { TokenCache, WecomApi } from '#lib/wecom/index.js';
import { WecomApiError } from '#lib/wecom/index.js';
import { sha256Hex } from './auth.js';

export interface IngestDeps {
  config: GatewayConfig;
  messages: MessageStore;
  idempotency: IdempotencyStore;
  queue: MessageQueue;
  logger: Logger;
  metrics: Metrics;
  /** For recall only. */
  tokens: TokenCache;
  wecom: Pick<WecomApi, 'recall'>;
  /** SSRF guard for `callback_url`; default: the system resolver, loopback per `config.allowLoopbackWebhooks`. */
  urlGuard?: UrlGuard;
  now?: () => number;
  newId?: () => string;
}

export interface Accepted {
  id: string;
  status: 'queued';
}

/** SPEC §2: a batch holds at most 100 messages. */
export const MAX_BATCH_ITEMS = 100;
/** SPEC §2: ≤128 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,128}$/;
/** WeCom `message/recall` only works within 24 h of sending (errcode 42052 after). */
const RECALL_WINDOW_MS = 24 * 3600_000;
/** WeCom: the message was sent more than 24 hours ago. */
const WECOM_RECALL_TOO_LATE = 42052;
const MESSAGE_ID = /^msg_[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * Accepts one message: validate → check `callback_url` → (claim the Idempotency-Key) → store the record →
 * enqueue. Without an Idempotency-Key that is one DynamoDB write and one SQS send. The record is written before
 * the enqueue so a status query never 404s for an id we answered with; if the enqueue fails the client gets a 503,
 * the record is marked failed (never left `queued`) and the Idempotency-Key is released for the retry.
 *
 * @example await submitMessage(deps, apiKey, JSON.parse(body), headers['idempotency-key'])
 */
export async function submitMessage(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  body: unknown,
  idempotencyKey?: string,
): Promise<Accepted> {
  if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
    throw new BadRequestError(
      'invalid_idempotency_key',
      'Idempotency-Key must be 1-128 visible ASCII characters',
      [
        {
          field: 'Idempotency-Key',
          message: `${idempotencyKey.length} characters, allowed 1-128 of 0x21-0x7e`,
        },
      ],
    );
  }
  const req = validate(body);
  authorizeApp(apiKey, req.app);
  await checkCallbackUrl(deps, req);
  const id = (deps.newId ?? newMessageId)();
  let keyHash: string | undefined;
  if (idempotencyKey !== undefined) {
    keyHash = sha256Hex(idempotencyKey);
    // The normalized request, not the raw bytes: key order, `a|b` vs ["a","b"] and defaults do not matter.
    const bodyHash = sha256Hex(canonicalJson(req));
    for (let attempt = 0; ; attempt++) {
      const claim = await deps.idempotency.claim(
        apiKey.name,
        keyHash,
        { bodyHash, messageId: id },
        deps.config.idempotencyHours * 3600_000,
      );
      if (claim.claimed) break;
      if (claim.existing.bodyHash !== bodyHash) {
        throw new ConflictError(
          'idempotency_conflict',
          'this Idempotency-Key was already used with a different body; use a new key for a new message',
        );
      }
      const replay = await replayClaim(deps, apiKey, keyHash, claim.existing);
      if (replay) return replay;
      // The claim was left by a request that never stored its message (and could not release the key, e.g.
      // DynamoDB was down): released now, so claim the key for this request. Once more at most.
      if (attempt > 0)
        throw new ServiceUnavailableError('could not take over a stale Idempotency-Key; retry');
    }
  }
  try {
    const [accepted] = await acceptAll(deps, apiKey, [{ id, req }], 'single');
    if (!accepted) throw new ServiceUnavailableError('could not queue the message; retry');
    if (keyHash) {
      // Lets replays answer at once. If this write fails the message is queued all the same; a replay then waits
      // for this request to end and finds the record.
      await deps.idempotency.markAccepted(apiKey.name, keyHash, id).catch((err: unknown) => {
        deps.logger.error('could not mark the Idempotency-Key accepted', { err, messageId: id });
      });
    }
    return accepted;
  } catch (err) {
    if (keyHash) {
      await deps.idempotency.release(apiKey.name, keyHash, id).catch((releaseErr: unknown) => {
        deps.logger.error('could not release idempotency key', { err: releaseErr, messageId: id });
      });
    }
    throw err;
  }
}

/**
 * How long after its id was made a request may still be storing and enqueueing its message: past ingest's 10 s
 * Lambda timeout. An unaccepted claim older than this belongs to a request that has ended.
 */
const CLAIM_IN_FLIGHT_MS = 15_000;
/** How long a replay waits for the first request (still in flight) to finish. */
const REPLAY_WAIT_MS = 3_000;
/** The error code of a record whose enqueue failed (the client was answered 503). */
const ENQUEUE_FAILED = 'enqueue_failed' satisfies WithdrawReason;

/**
 * The answer to a replayed Idempotency-Key: the first request's message id once that request was accepted.
 * Undefined when the key is free for this request: released meanwhile, or left by a first request that was
 * answered 503 and could not release it (e.g. DynamoDB was down) — released here.
 *
 * - claim marked accepted (message stored and enqueued) → the first id, without reading the record;
 * - record failed with `enqueue_failed` → the first request was answered 503: take the key over;
 * - first request ended (the id is older than {@link CLAIM_IN_FLIGHT_MS}) → its record decides: the sender has
 *   worked on it (any status but `queued`) → it was queued: the first id; never stored, or still `queued` → most
 *   likely a write applied while its answer was lost, then a 503: take the key over (the stray record is failed);
 * - first request may still be running → wait for it, at most {@link REPLAY_WAIT_MS}, then 503 (retry).
 */
async function replayClaim(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  keyHash: string,
  first: IdempotencyEntry,
): Promise<Accepted | undefined> {
  // Real time, not deps.now: ids carry the real clock.
  const waitUntil = Date.now() + REPLAY_WAIT_MS;
  const release = async () => {
    await deps.idempotency.release(apiKey.name, keyHash, first.messageId);
    deps.logger.warn('released the Idempotency-Key of a request answered 503', {
      messageId: first.messageId,
    });
    return undefined;
  };
  let entry: IdempotencyEntry | undefined = first;
  for (;;) {
    if (!entry || entry.messageId !== first.messageId) return undefined;
    if (entry.accepted) return { id: first.messageId, status: 'queued' };
    const record = await deps.messages.get(first.messageId);
    if (record?.error?.code === ENQUEUE_FAILED) return release();
    const madeAt = idTime(first.messageId);
    if (madeAt !== undefined && Date.now() - madeAt > CLAIM_IN_FLIGHT_MS) {
      if (record && record.status !== STATUS.queued) return { id: first.messageId, status: 'queued' };
      if (record) {
        await deps.messages.transition(
          first.messageId,
          changes.withdraw(new Date(Date.now()).toISOString(), 'superseded'),
        );
      }
      return release();
    }
    if (Date.now() >= waitUntil) {
      throw new ServiceUnavailableError('a request with this Idempotency-Key is still in progress; retry');
    }
    await new Promise((r) => setTimeout(r, 100));
    entry = await deps.idempotency.read(apiKey.name, keyHash);
  }
}

/** When a message id was made (ULIDs carry it); undefined for ids of another shape. */
function idTime(messageId: string): number | undefined {
  if (!MESSAGE_ID.test(messageId)) return undefined;
  try {
    return decodeTime(messageId.slice(4));
  } catch {
    return undefined;
  }
}

export type BatchItemResult =
  | { index: number; id: string; status: 'queued' }
  | { index: number; error: ErrorBody };

/**
 * Up to 100 messages; every item is validated on its own and valid items are accepted even when others are
 * invalid (HTTP 207). Records are written first, then each lane gets SendMessageBatch calls of up to 10.
 *
 * @example const results = await submitBatch(deps, apiKey, { messages: [a, b] }); // [{ index: 0, id, status }, …]
 */
export async function submitBatch(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  body: unknown,
  idempotencyKey?: string,
): Promise<BatchItemResult[]> {
  if (idempotencyKey !== undefined) {
    // Silently ignoring it would make a client's "safe" retry send every message twice.
    throw new BadRequestError(
      'idempotency_not_supported',
      'Idempotency-Key is not supported on batches; send messages one by one to make retries safe',
      [{ field: 'Idempotency-Key', message: 'not supported on /v1/messages/batch' }],
    );
  }
  const items = isRecord(body) ? body.messages : undefined;
  if (!isRecord(body) || !Array.isArray(items)) {
    throw new BadRequestError('invalid_request', 'body must be {"messages": [...]}', [
      { field: 'messages', message: 'required array' },
    ]);
  }
  const unknown = Object.keys(body).filter((k) => k !== 'messages');
  if (unknown.length > 0) {
    throw new BadRequestError(
      'invalid_request',
      'body must be {"messages": [...]}',
      unknown.slice(0, 20).map((field) => ({ field, message: 'unknown field' })),
    );
  }
  if (items.length === 0 || items.length > MAX_BATCH_ITEMS) {
    throw new BadRequestError('invalid_request', `messages must hold 1-${MAX_BATCH_ITEMS} items`, [
      { field: 'messages', message: `${items.length} items, allowed 1-${MAX_BATCH_ITEMS}` },
    ]);
  }
  type Checked = { index: number; id: string; req: MessageRequest } | { index: number; error: ErrorBody };
  const checked = await Promise.all(
    items.map(async (item, index): Promise<Checked> => {
      try {
        const req = validate(item);
        authorizeApp(apiKey, req.app);
        await checkCallbackUrl(deps, req);
        return { index, id: (deps.newId ?? newMessageId)(), req };
      } catch (err) {
        return { index, error: itemError(deps, err) };
      }
    }),
  );
  const results: BatchItemResult[] = [];
  const valid: { index: number; id: string; req: MessageRequest }[] = [];
  for (const c of checked) {
    if ('error' in c) results.push(c);
    else valid.push(c);
  }
  if (valid.length > 0) {
    const accepted = await acceptAll(deps, apiKey, valid, 'batch');
    valid.forEach((v, i) => {
      results.push(
        accepted[i]
          ? { index: v.index, id: v.id, status: 'queued' }
          : {
              index: v.index,
              error: { code: 'unavailable', message: 'could not queue the message; retry', details: [] },
            },
      );
    });
  }
  return results.sort((a, b) => a.index - b.index);
}

/** GET /v1/messages/{id} (SPEC §2). */
export interface MessageStatusView {
  id: string;
  app: string;
  status: MessageStatus;
  priority: MessageRecord['priority'];
  attempts: number;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  metadata: Record<string, string>;
  wecom: ({ msgid: string } & Record<(typeof RECEIPT_LISTS)[number], string>) | null;
  error: MessageError | null;
  events: MessageEvent[];
}

/** GET /v1/messages/{id}: 404 (not 403) for ids of apps the key may not read, so ids do not leak. */
export async function getMessage(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  id: string,
): Promise<MessageStatusView> {
  return toStatusView(await readOwn(deps, apiKey, id));
}

/**
 * POST /v1/messages/{id}/recall: WeCom `message/recall` with the stored msgid, within 24 h of sending. Recalling
 * an already recalled message answers 200 again (a retried recall must not fail).
 */
export async function recallMessage(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  id: string,
): Promise<{ status: 'recalled' }> {
  const record = await readOwn(deps, apiKey, id);
  if (record.status === STATUS.recalled) return { status: 'recalled' };
  const msgid = record.wecom?.msgid;
  if (record.status !== STATUS.sent || !msgid) {
    throw new ConflictError(
      'not_recallable',
      `only sent messages can be recalled; this one is ${record.status}`,
    );
  }
  const now = (deps.now ?? Date.now)();
  const tooLate = () =>
    new ConflictError(
      'recall_window_passed',
      'WeCom allows recalling a message only within 24 hours of sending',
    );
  if (record.sentAt && now - Date.parse(record.sentAt) > RECALL_WINDOW_MS) throw tooLate();
  const app = deps.config.apps[record.app];
  if (!app) throw new ConflictError('app_not_configured', `app ${record.app} is no longer configured`);
  try {
    await deps.tokens.withToken(app, (token) => deps.wecom.recall(token, msgid));
  } catch (err) {
    deps.logger.warn('recall failed', { err, messageId: id });
    if (err instanceof WecomApiError && err.errcode === WECOM_RECALL_TOO_LATE) throw tooLate();
    if (err instanceof WecomApiError && (err.errclass === 'permanent' || err.errclass === 'config')) {
      throw new ConflictError(
        'wecom_recall_failed',
        `WeCom refused the recall: errcode ${err.errcode} ${err.errmsg}`,
      );
    }
    throw new ServiceUnavailableError('WeCom could not recall the message right now; retry the recall');
  }
  await deps.messages.transition(id, changes.recall(new Date(now).toISOString()));
  return { status: 'recalled' };
}

/** Writes the new records; true at the index of each record that was stored. */
async function storeRecords(
  deps: IngestDeps,
  records: MessageRecord[],
  mode: 'single' | 'batch',
): Promise<boolean[]> {
  if (mode === 'single') {
    return Promise.all(
      records.map((r) =>
        deps.messages.create(r).then(
          () => true,
          (err: unknown) => {
            // The id is fresh, so "already exists" means the SDK retried a write whose first answer was lost
            // (e.g. DynamoDB restarting): our record is stored.
            if (isConditionFailed(err)) return true;
            deps.logger.error('could not store message record', { err, messageId: r.id });
            return false;
          },
        ),
      ),
    );
  }
  const unwritten = new Set(
    await deps.messages.createBatch(records).catch((err: unknown) => {
      deps.logger.error('could not store message records', { err, count: records.length });
      return records.map((r) => r.id);
    }),
  );
  for (const id of unwritten) deps.logger.error('could not store message record', { messageId: id });
  // "Not written" may still have been written (a request that timed out after DynamoDB applied it): such a
  // record must not stay `queued` with no queue message behind it. Best effort; a missing record is fine.
  await Promise.all(
    records
      .filter((r) => unwritten.has(r.id))
      .map((r) =>
        deps.messages.transition(r.id, changes.withdraw(r.createdAt, 'store_failed')).catch(() => false),
      ),
  );
  return records.map((r) => !unwritten.has(r.id));
}

async function acceptAll(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  items: { id: string; req: MessageRequest }[],
  mode: 'single' | 'batch',
): Promise<(Accepted | undefined)[]> {
  const now = (deps.now ?? Date.now)();
  const createdAt = new Date(now).toISOString();
  const expiresAt = Math.floor(now / 1000) + deps.config.retentionDays * 86_400;
  const records = items.map(({ id, req }) =>
    newRecord({
      id,
      app: req.app,
      priority: req.priority,
      request: req,
      apiKey: apiKey.name,
      createdAt,
      expiresAt,
    }),
  );
  // 1. Records first (a status query must never 404 for an id we return): one conditional PutItem for a single
  // message, BatchWriteItem (25 per request) for a batch.
  const stored = await storeRecords(deps, records, mode);
  // 2. Enqueue, per lane: a single message with SendMessage, a batch with SendMessageBatch in chunks of 10.
  const failedIds = new Set<string>(records.filter((_, i) => !stored[i]).map((r) => r.id));
  await Promise.all(
    (['high', 'normal'] as const).map(async (lane) => {
      const laneRecords = records.filter((r, i) => stored[i] && r.priority === lane);
      if (laneRecords.length === 0) return;
      if (mode === 'single') {
        const only = laneRecords[0] as MessageRecord;
        await deps.queue.enqueue(lane, toQueuedMessage(only)).catch((err: unknown) => {
          deps.logger.error('enqueue failed', { err, messageId: only.id });
          failedIds.add(only.id);
        });
      } else {
        for (const id of await deps.queue.enqueueBatch(lane, laneRecords.map(toQueuedMessage))) {
          deps.logger.error('enqueue failed', { messageId: id });
          failedIds.add(id);
        }
      }
    }),
  );
  // 3. Never leave a record `queued` that no queue holds.
  await Promise.all(
    records
      .filter((r, i) => stored[i] && failedIds.has(r.id))
      .map((r) =>
        deps.messages
          .transition(r.id, changes.withdraw(createdAt, ENQUEUE_FAILED))
          .catch((err: unknown) =>
            deps.logger.error('could not mark unqueued record', { err, messageId: r.id }),
          ),
      ),
  );
  deps.metrics.count('Accepted', records.length - failedIds.size);
  return records.map((r) => (failedIds.has(r.id) ? undefined : { id: r.id, status: 'queued' as const }));
}

function validate(body: unknown): MessageRequest {
  const result = validateMessageRequest(body);
  if (!result.ok) throw new BadRequestError('invalid_message', 'the message is invalid', result.issues);
  return result.value;
}

/** Guards per config object: built on the first request of a container, then reused. */
const defaultGuards = new WeakMap<GatewayConfig, UrlGuard>();

function urlGuard(deps: IngestDeps): UrlGuard {
  if (deps.urlGuard) return deps.urlGuard;
  let guard = defaultGuards.get(deps.config);
  if (!guard) {
    guard = createUrlGuard({ allowLoopback: deps.config.allowLoopbackWebhooks });
    defaultGuards.set(deps.config, guard);
  }
  return guard;
}

/** SSRF: the webhook target must be https and must not resolve to a non-public address (400 on `callback_url`). */
async function checkCallbackUrl(deps: IngestDeps, req: MessageRequest): Promise<void> {
  if (req.callbackUrl === undefined) return;
  try {
    await urlGuard(deps).assertSafe(req.callbackUrl);
  } catch (err) {
    if (err instanceof UnsafeUrlError) {
      throw new BadRequestError('invalid_message', 'the message is invalid', [
        { field: 'callback_url', message: err.message },
      ]);
    }
    if (err instanceof LookupUnavailableError) {
      throw new ServiceUnavailableError(
        `could not resolve the callback_url host ${err.hostname} right now; retry`,
      );
    }
    throw err;
  }
}

/** The same answer for apps that exist and apps that do not, so a key cannot probe other teams' app names. */
function authorizeApp(apiKey: ApiKeyConfig, app: string): void {
  if (!apiKey.apps.includes(app)) {
    throw new ForbiddenError(`API key ${apiKey.name} may not send for app ${app}`);
  }
}

/** The scope a route asks for (lib/resources `ROUTES`); the ingest handler checks it before calling in here. */
export function requireScope(apiKey: ApiKeyConfig, scope: ApiKeyConfig['scopes'][number]): void {
  if (!apiKey.scopes.includes(scope))
    throw new ForbiddenError(`API key ${apiKey.name} lacks the ${scope} scope`);
}

async function readOwn(deps: IngestDeps, apiKey: ApiKeyConfig, id: string): Promise<MessageRecord> {
  if (!MESSAGE_ID.test(id)) throw new NotFoundError(`no message ${id.slice(0, 64)}`);
  const record = await deps.messages.get(id);
  if (!record || !apiKey.apps.includes(record.app)) throw new NotFoundError(`no message ${id}`);
  return record;
}

function toStatusView(r: MessageRecord): MessageStatusView {
  return {
    id: r.id,
    app: r.app,
    status: r.status,
    priority: r.priority,
    attempts: r.attempts,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    sent_at: r.sentAt ?? null,
    metadata: r.metadata ?? {},
    wecom: r.wecom ? receiptView(r.wecom) : null,
    error: r.error ?? null,
    events: recentEvents(r.events),
  };
}

/** WeCom's own shape: every list present, as an `a|b` string, empty when none. */
function receiptView(receipt: WecomReceipt): NonNullable<MessageStatusView['wecom']> {
  const view = { msgid: receipt.msgid } as NonNullable<MessageStatusView['wecom']>;
  for (const list of RECEIPT_LISTS) view[list] = receipt[list] ?? '';
  return view;
}

function itemError(deps: IngestDeps, err: unknown): ErrorBody {
  if (
    !(
      err instanceof BadRequestError ||
      err instanceof ForbiddenError ||
      err instanceof ServiceUnavailableError
    )
  ) {
    deps.logger.error('batch item failed', { err });
  }
  return toErrorBody(err);
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The PRNG ulid uses by default asks the OS for one byte per character (16 `getRandomValues` calls per id, a
 * visible share of ingest's CPU). This one draws from a 4 KB pool of the same CSPRNG. A byte ÷ 256 maps onto
 * ulid's 32 characters without bias (256 is a multiple of 32).
 */
const POOL_BYTES = 4096;
const randomPool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;
export const pooledRandom = (): number => {
  if (poolOffset >= POOL_BYTES) {
    randomFillSync(randomPool);
    poolOffset = 0;
  }
  return (randomPool[poolOffset++] as number) / 256;
};

export const newMessageId = (): string => `msg_${ulid(undefined, pooledRandom)}`;

/** JSON with sorted object keys: the same body with keys in another order hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

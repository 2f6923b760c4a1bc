import { ulid } from 'ulid';
import type { ApiKeyConfig, GatewayConfig } from '#lib/config/index.js';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  ServiceUnavailableError,
} from '#lib/http/index.js';
import { type MessageRequest, validateMessageRequest } from '#lib/messages/index.js';
import { type MessageRecord, STATUS, toQueuedMessage } from '#lib/model/index.js';
import type { Logger, Metrics } from '#lib/observability/index.js';
import type { MessageQueue } from '#lib/queue/index.js';
import type { TokenCache } from '#lib/sender/index.js';
import { type IdempotencyStore, type MessageStore, recentEvents } from '#lib/store/index.js';
import type { WecomApi } from '#lib/wecom/index.js';
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
  now?: () => number;
  newId?: () => string;
}

export interface Accepted {
  id: string;
  status: 'queued';
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,128}$/;
const RECALL_WINDOW_MS = 24 * 3600_000;

/**
 * Accepts one message: validate → (claim the Idempotency-Key) → store the record → enqueue. The record is written
 * before the enqueue so a status query never 404s for an id we answered with; if the enqueue fails the client
 * gets a 503 and the record is marked failed, never left `queued`.
 *
 * @example await submitMessage(deps, apiKey, JSON.parse(body), headers['idempotency-key'])
 */
export async function submitMessage(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  body: unknown,
  idempotencyKey?: string,
): Promise<Accepted> {
  const req = validate(body);
  authorizeApp(apiKey, req.app, deps.config);
  requireScope(apiKey, 'messages:write');
  const id = (deps.newId ?? newMessageId)();
  let keyHash: string | undefined;
  if (idempotencyKey !== undefined) {
    if (!IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw new BadRequestError(
        'invalid_idempotency_key',
        'Idempotency-Key must be 1-128 visible ASCII characters',
      );
    }
    keyHash = sha256Hex(idempotencyKey);
    const bodyHash = sha256Hex(canonicalJson(body));
    const claim = await deps.idempotency.claim(
      apiKey.name,
      keyHash,
      { bodyHash, messageId: id },
      deps.config.idempotencyHours * 3600_000,
    );
    if (!claim.claimed) {
      if (claim.existing.bodyHash !== bodyHash) {
        throw new ConflictError(
          'idempotency_conflict',
          'this Idempotency-Key was already used with a different body; use a new key for a new message',
        );
      }
      return { id: claim.existing.messageId, status: 'queued' };
    }
  }
  try {
    const [accepted] = await acceptAll(deps, apiKey, [{ id, req }], 'single');
    if (!accepted) throw new ServiceUnavailableError('could not queue the message; retry');
    return accepted;
  } catch (err) {
    if (keyHash) await deps.idempotency.release(apiKey.name, keyHash, id).catch(() => undefined);
    throw err;
  }
}

export type BatchItemResult =
  | { index: number; id: string; status: 'queued' }
  | { index: number; error: unknown };

/** Up to 100 messages; valid items are accepted even when others are invalid (HTTP 207). */
export async function submitBatch(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  body: unknown,
): Promise<BatchItemResult[]> {
  requireScope(apiKey, 'messages:write');
  const items = (body as { messages?: unknown } | null)?.messages;
  if (!body || typeof body !== 'object' || Array.isArray(body) || !Array.isArray(items)) {
    throw new BadRequestError('invalid_request', 'body must be {"messages": [...]}', [
      { field: 'messages', message: 'required array' },
    ]);
  }
  if (items.length === 0 || items.length > 100) {
    throw new BadRequestError('invalid_request', 'messages must hold 1-100 items', [
      { field: 'messages', message: `${items.length} items, allowed 1-100` },
    ]);
  }
  const results: BatchItemResult[] = [];
  const valid: { index: number; id: string; req: MessageRequest }[] = [];
  items.forEach((item, index) => {
    try {
      const req = validate(item);
      authorizeApp(apiKey, req.app, deps.config);
      valid.push({ index, id: (deps.newId ?? newMessageId)(), req });
    } catch (err) {
      results.push({ index, error: errorBody(err) });
    }
  });
  if (valid.length > 0) {
    const accepted = await acceptAll(deps, apiKey, valid, 'batch');
    valid.forEach((v, i) => {
      const a = accepted[i];
      results.push(
        a
          ? { index: v.index, id: a.id, status: 'queued' }
          : { index: v.index, error: { code: 'unavailable', message: 'could not queue the message; retry' } },
      );
    });
  }
  return results.sort((a, b) => a.index - b.index);
}

/** GET /v1/messages/{id}: 404 (not 403) for ids of apps the key may not read, so ids do not leak. */
export async function getMessage(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  id: string,
): Promise<Record<string, unknown>> {
  requireScope(apiKey, 'messages:read');
  const record = await readOwn(deps, apiKey, id);
  return toStatusView(record);
}

/** POST /v1/messages/{id}/recall: WeCom `message/recall` with the stored msgid, within 24 h. */
export async function recallMessage(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  id: string,
): Promise<{ status: 'recalled' }> {
  requireScope(apiKey, 'messages:recall');
  const record = await readOwn(deps, apiKey, id);
  if (record.status === STATUS.recalled) return { status: 'recalled' };
  if (record.status !== STATUS.sent || !record.wecom?.msgid) {
    throw new ConflictError(
      'not_recallable',
      `only sent messages can be recalled; this one is ${record.status}`,
    );
  }
  const now = (deps.now ?? Date.now)();
  if (record.sentAt && now - Date.parse(record.sentAt) > RECALL_WINDOW_MS) {
    throw new ConflictError('recall_window_passed', 'WeCom allows recalling a message only within 24 hours');
  }
  const app = deps.config.apps[record.app];
  if (!app) throw new ConflictError('app_not_configured', `app ${record.app} is no longer configured`);
  try {
    const token = await deps.tokens.get(app);
    await deps.wecom.recall(token, record.wecom.msgid).catch(async (err: unknown) => {
      if (!(err instanceof WecomApiError) || err.errclass !== 'token') throw err;
      await deps.tokens.invalidate(app, token);
      await deps.wecom.recall(await deps.tokens.get(app), record.wecom?.msgid ?? '');
    });
  } catch (err) {
    if (err instanceof WecomApiError) {
      throw new ConflictError(
        'wecom_recall_failed',
        `WeCom refused the recall: errcode ${err.errcode} ${err.errmsg}`,
      );
    }
    throw new ServiceUnavailableError('WeCom is unreachable; retry the recall');
  }
  const at = new Date(now).toISOString();
  await deps.messages.transition(id, {
    from: [STATUS.sent],
    to: STATUS.recalled,
    at,
    event: { at, type: 'recalled' },
  });
  return { status: 'recalled' };
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
  const records: MessageRecord[] = items.map(({ id, req }) => ({
    id,
    app: req.app,
    status: STATUS.queued,
    priority: req.priority,
    attempts: 0,
    createdAt,
    updatedAt: createdAt,
    ...(req.metadata ? { metadata: req.metadata } : {}),
    ...(req.callbackUrl ? { callbackUrl: req.callbackUrl } : {}),
    apiKey: apiKey.name,
    request: req,
    events: [{ at: createdAt, type: 'queued' }],
    generation: 0,
    expiresAt,
  }));
  // 1. Records first (a status query must never 404 for an id we return).
  const stored = await Promise.all(
    records.map((r) =>
      deps.messages.create(r).then(
        () => true,
        (err: unknown) => {
          deps.logger.error('could not store message record', { err, messageId: r.id });
          return false;
        },
      ),
    ),
  );
  // 2. Enqueue, per lane; single messages with SendMessage, batches with SendMessageBatch in chunks of 10.
  const failedIds = new Set<string>(records.filter((_, i) => !stored[i]).map((r) => r.id));
  for (const lane of ['high', 'normal'] as const) {
    const laneRecords = records.filter((r, i) => stored[i] && r.priority === lane);
    if (laneRecords.length === 0) continue;
    if (mode === 'single') {
      const only = laneRecords[0] as MessageRecord;
      await deps.queue.enqueue(lane, toQueuedMessage(only)).catch((err: unknown) => {
        deps.logger.error('enqueue failed', { err, messageId: only.id });
        failedIds.add(only.id);
      });
    } else {
      for (const id of await deps.queue.enqueueBatch(lane, laneRecords.map(toQueuedMessage)))
        failedIds.add(id);
    }
  }
  // 3. Never leave a record `queued` that no queue holds.
  await Promise.all(
    records
      .filter((r, i) => stored[i] && failedIds.has(r.id))
      .map((r) =>
        deps.messages
          .transition(r.id, {
            from: [STATUS.queued],
            to: STATUS.failed,
            at: createdAt,
            error: {
              code: 'enqueue_failed',
              message: 'the queue was unavailable; the client was told to retry',
            },
          })
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

function authorizeApp(apiKey: ApiKeyConfig, app: string, config: GatewayConfig): void {
  if (!apiKey.apps.includes(app)) {
    throw new ForbiddenError(
      app in config.apps ? `API key ${apiKey.name} may not send for app ${app}` : `unknown app ${app}`,
    );
  }
}

function requireScope(apiKey: ApiKeyConfig, scope: ApiKeyConfig['scopes'][number]): void {
  if (!apiKey.scopes.includes(scope))
    throw new ForbiddenError(`API key ${apiKey.name} lacks the ${scope} scope`);
}

async function readOwn(deps: IngestDeps, apiKey: ApiKeyConfig, id: string): Promise<MessageRecord> {
  if (!/^msg_[0-9A-HJKMNP-TV-Z]{26}$/.test(id)) throw new NotFoundError(`no message ${id.slice(0, 64)}`);
  const record = await deps.messages.get(id);
  if (!record || !apiKey.apps.includes(record.app)) throw new NotFoundError(`no message ${id}`);
  return record;
}

function toStatusView(r: MessageRecord): Record<string, unknown> {
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
    wecom: r.wecom ?? null,
    error: r.error ?? null,
    events: recentEvents(r.events),
  };
}

const errorBody = (err: unknown) =>
  err instanceof BadRequestError || err instanceof ForbiddenError
    ? { code: err.code, message: err.message, ...(err.details.length ? { details: err.details } : {}) }
    : { code: 'internal_error', message: 'internal error' };

export const newMessageId = (): string => `msg_${ulid()}`;

/** JSON with sorted object keys: the same body with keys in another order hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

import type { ApiKeyConfig, GatewayConfig } from '#lib/config/index.js';
import { type MessageRequest, validateMessageRequest } from '#lib/messages/index.js';
import { createUrlGuard, LookupUnavailableError, UnsafeUrlError, type UrlGuard } from '#lib/net/index.js';
import { acceptAll } from './accept.js';
import { authorizeApp } from './access.js';
import { sha256Hex } from './auth.js';
import { IngestError, InvalidRequestError, RetryLaterError, StateConflictError } from './errors.js';
import { canonicalJson, IDEMPOTENCY_KEY, replayClaim } from './idempotency.js';
import { newMessageId } from './ids.js';
import type { Accepted, BatchItemResult, IngestDeps } from './types.js';

/** SPEC §2: a batch holds at most 100 messages. */
export const MAX_BATCH_ITEMS = 100;

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
    throw new InvalidRequestError(
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
        throw new StateConflictError(
          'idempotency_conflict',
          'this Idempotency-Key was already used with a different body; use a new key for a new message',
        );
      }
      const replay = await replayClaim(deps, apiKey, keyHash, claim.existing);
      if (replay) return replay;
      // The claim was left by a request that never stored its message (and could not release the key, e.g.
      // DynamoDB was down): released now, so claim the key for this request. Once more at most.
      if (attempt > 0) throw new RetryLaterError('could not take over a stale Idempotency-Key; retry');
    }
  }
  try {
    const [accepted] = await acceptAll(deps, apiKey, [{ id, req }], 'single');
    if (!accepted) throw new RetryLaterError('could not queue the message; retry');
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
    throw new InvalidRequestError(
      'idempotency_not_supported',
      'Idempotency-Key is not supported on batches; send messages one by one to make retries safe',
      [{ field: 'Idempotency-Key', message: 'not supported on /v1/messages/batch' }],
    );
  }
  const items = isRecord(body) ? body.messages : undefined;
  if (!isRecord(body) || !Array.isArray(items)) {
    throw new InvalidRequestError('invalid_request', 'body must be {"messages": [...]}', [
      { field: 'messages', message: 'required array' },
    ]);
  }
  const unknown = Object.keys(body).filter((k) => k !== 'messages');
  if (unknown.length > 0) {
    throw new InvalidRequestError(
      'invalid_request',
      'body must be {"messages": [...]}',
      unknown.slice(0, 20).map((field) => ({ field, message: 'unknown field' })),
    );
  }
  if (items.length === 0 || items.length > MAX_BATCH_ITEMS) {
    throw new InvalidRequestError('invalid_request', `messages must hold 1-${MAX_BATCH_ITEMS} items`, [
      { field: 'messages', message: `${items.length} items, allowed 1-${MAX_BATCH_ITEMS}` },
    ]);
  }
  type Checked = { index: number; id: string; req: MessageRequest } | { index: number; error: unknown };
  const checked = await Promise.all(
    items.map(async (item, index): Promise<Checked> => {
      try {
        const req = validate(item);
        authorizeApp(apiKey, req.app);
        await checkCallbackUrl(deps, req);
        return { index, id: (deps.newId ?? newMessageId)(), req };
      } catch (err) {
        if (!(err instanceof IngestError)) deps.logger.error('batch item failed', { err });
        return { index, error: err };
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
          : { index: v.index, error: new RetryLaterError('could not queue the message; retry') },
      );
    });
  }
  return results.sort((a, b) => a.index - b.index);
}

function validate(body: unknown): MessageRequest {
  const result = validateMessageRequest(body);
  if (!result.ok) throw new InvalidRequestError('invalid_message', 'the message is invalid', result.issues);
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
      throw new InvalidRequestError('invalid_message', 'the message is invalid', [
        { field: 'callback_url', message: err.message },
      ]);
    }
    if (err instanceof LookupUnavailableError) {
      throw new RetryLaterError(`could not resolve the callback_url host ${err.hostname} right now; retry`);
    }
    throw err;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

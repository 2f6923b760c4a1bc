import type { ApiKeyConfig, GatewayConfig } from '#lib/config/index.js';
import {
  channelOf,
  DEFAULT_SPLIT_MAX_PARTS,
  type MessageRequest,
  validateMessageRequest,
} from '#lib/messages/index.js';
import type { Resolver, UrlGuard } from '#lib/net/index.js';
import { isPlainObject } from '#lib/util/index.js';
import { acceptAll } from './accept.js';
import { authorizeApp, authorizeChannel } from './access.js';
import { IngestError, InvalidRequestError, RetryLaterError } from './errors.js';
import { checkIdempotencyKey, claimKey, markKeyAccepted, releaseKey } from './idempotency.js';
import { newMessageId } from './ids.js';
import { checkSchedule } from './schedule.js';
import type { Accepted, BatchItemResult, IngestDeps, Principal } from './types.js';

/** SPEC §2: a batch holds at most 100 messages. */
export const MAX_BATCH_ITEMS = 100;

/**
 * Accepts one message: validate → check `callback_url` → (claim the Idempotency-Key) → store the record →
 * enqueue. Without an Idempotency-Key that is one DynamoDB write and one SQS send (one more write, before the
 * record's, for a message to several users: their entries in the recipient index, lib/store `create`). The record is written before
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
  checkIdempotencyKey(idempotencyKey);
  const req = validate(deps, apiKey, body);
  authorizeChannel(apiKey, channelOf(req));
  checkSchedule(apiKey, req, (deps.now ?? Date.now)());
  await checkCallbackUrl(deps, req);
  const accepted = await acceptOne(
    deps,
    apiKey,
    req,
    idempotencyKey === undefined ? undefined : { key: idempotencyKey },
  );
  return withParts(accepted, req);
}

/** The answer says how many parts a split message became (a replay of one too: it is the same request). */
export const withParts = <T extends object>(accepted: T, req: MessageRequest): T =>
  req.segments ? { ...accepted, parts: req.segments.length } : accepted;

/**
 * Accepts one validated message: (claim the Idempotency-Key) → store the record → enqueue; the key is marked
 * accepted, or released when the message could not be queued. `sameRequest` is what a replay must match to get the
 * first answer (default: the normalized message; hooks pass their delivery key, since a vendor's retry of one
 * delivery is the same request even if the hook's config changed in between).
 */
export async function acceptOne(
  deps: IngestDeps,
  principal: Principal,
  req: MessageRequest,
  idempotency?: { key: string; sameRequest?: string },
): Promise<Accepted> {
  const id = (deps.newId ?? newMessageId)();
  let keyHash: string | undefined;
  if (idempotency !== undefined) {
    const claim = await claimKey(deps, principal, idempotency.key, idempotency.sameRequest ?? req, id);
    if ('replay' in claim) return claim.replay;
    keyHash = claim.keyHash;
  }
  try {
    const [accepted] = await acceptAll(deps, principal, [{ id, req }], 'single');
    if (!accepted) throw new RetryLaterError('could not queue the message; retry');
    if (accepted instanceof Error) throw accepted;
    if (keyHash) await markKeyAccepted(deps, principal, keyHash, accepted);
    return accepted;
  } catch (err) {
    if (keyHash) await releaseKey(deps, principal, keyHash, id);
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
  const items = batchItems(body, idempotencyKey);
  type Checked = { index: number; id: string; req: MessageRequest } | { index: number; error: unknown };
  const checked = await Promise.all(
    items.map(async (item, index): Promise<Checked> => {
      try {
        const req = validate(deps, apiKey, item);
        authorizeChannel(apiKey, channelOf(req));
        checkSchedule(apiKey, req, (deps.now ?? Date.now)());
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
      const a = accepted[i];
      results.push(
        a === undefined
          ? { index: v.index, error: new RetryLaterError('could not queue the message; retry') }
          : a instanceof Error
            ? { index: v.index, error: a }
            : withParts({ index: v.index, ...a }, v.req),
      );
    });
  }
  return results.sort((a, b) => a.index - b.index);
}

/** The items of a batch body, `{"messages": [...]}` with 1–100 of them and nothing else. */
function batchItems(body: unknown, idempotencyKey: string | undefined): unknown[] {
  if (idempotencyKey !== undefined) {
    // Silently ignoring it would make a client's "safe" retry send every message twice.
    throw new InvalidRequestError(
      'idempotency_not_supported',
      'Idempotency-Key is not supported on batches; send messages one by one to make retries safe',
      [{ field: 'Idempotency-Key', message: 'not supported on /v1/messages/batch' }],
    );
  }
  const items = isPlainObject(body) ? body.messages : undefined;
  if (!isPlainObject(body) || !Array.isArray(items)) {
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
  return items;
}

/**
 * Validates a message body as every ingest route does (POST /v1/messages, batch items, hooks, push): a body that
 * names a template is rendered first (at acceptance, so the record, the queue and an Idempotency-Key's comparison
 * hold the rendered message, and a later edit of the template changes no accepted message); then with the app's
 * `markdownFallback`, so a markdown message of such an app is queued as the text or textcard members see; long
 * content is split into parts when the message or its app asks for it. A robot's message gets the robot's default
 * mentions and split settings.
 */
export function validate(deps: IngestDeps, principal: Principal, body: unknown): MessageRequest {
  const { apps } = deps.config;
  const robots = deps.config.robots ?? {};
  // A key learns nothing of another app's templates: its `template` for such an app is a 403 before any lookup.
  if (isPlainObject(body) && Object.hasOwn(body, 'template') && typeof body.app === 'string') {
    authorizeApp(principal, body.app);
  }
  const result = validateMessageRequest(body, {
    markdownFallback: (app) => (Object.hasOwn(apps, app) ? apps[app]?.markdownFallback : undefined),
    templates: (app) => (Object.hasOwn(apps, app) ? apps[app]?.templates : undefined),
    split: (app) => {
      const config = Object.hasOwn(apps, app) ? apps[app] : undefined;
      return config
        ? { byDefault: config.split ?? false, maxParts: config.splitMaxParts ?? DEFAULT_SPLIT_MAX_PARTS }
        : undefined;
    },
    robot: (name) => {
      const config = Object.hasOwn(robots, name) ? robots[name] : undefined;
      return config
        ? {
            ...(config.mentions ? { mentions: config.mentions } : {}),
            split: {
              byDefault: config.split ?? false,
              maxParts: config.splitMaxParts ?? DEFAULT_SPLIT_MAX_PARTS,
            },
          }
        : undefined;
    },
  });
  if (!result.ok) throw new InvalidRequestError('invalid_message', 'the message is invalid', result.issues);
  return result.value;
}

/** Guards per config object (and resolver): built for the first `callback_url` a container checks, then reused. */
const defaultGuards = new WeakMap<GatewayConfig, { resolve: Resolver | undefined; guard: UrlGuard }>();

// The guard's code (DNS, address classes) loads with the first message that names a `callback_url`: most do not.
const loadNet = () => import('#lib/net/index.js');
type Net = Awaited<ReturnType<typeof loadNet>>;

function urlGuard(deps: IngestDeps, net: Net): UrlGuard {
  if (deps.urlGuard) return deps.urlGuard;
  const cached = defaultGuards.get(deps.config);
  if (cached && cached.resolve === deps.resolve) return cached.guard;
  const guard = net.createUrlGuard({
    allowLoopback: deps.config.allowLoopbackWebhooks,
    ...(deps.resolve ? { resolve: deps.resolve } : {}),
  });
  defaultGuards.set(deps.config, { resolve: deps.resolve, guard });
  return guard;
}

/** SSRF: the webhook target must be https and must not resolve to a non-public address (400 on `callback_url`). */
async function checkCallbackUrl(deps: IngestDeps, req: MessageRequest): Promise<void> {
  if (req.callbackUrl === undefined) return;
  const net = await loadNet();
  try {
    await urlGuard(deps, net).assertSafe(req.callbackUrl);
  } catch (err) {
    if (err instanceof net.UnsafeUrlError) {
      throw new InvalidRequestError('invalid_message', 'the message is invalid', [
        { field: 'callback_url', message: err.message },
      ]);
    }
    if (err instanceof net.LookupUnavailableError) {
      throw new RetryLaterError(`could not resolve the callback_url host ${err.hostname} right now; retry`);
    }
    throw err;
  }
}

import {
  type CallbackEvent,
  type CallbackQuery,
  type CallbackVerifier,
  type CallbackVerifierOptions,
  createCallbackVerifier,
  dedupeKey,
} from '#lib/callback/index.js';
import type { GatewayConfig } from '#lib/config/index.js';
import { eventNotice } from '#lib/model/index.js';
import type { Logger, Metrics } from '#lib/observability/index.js';
import type { NotifyQueue } from '#lib/queue/index.js';
import type { CardCodeStore, EventStore, StoredEvent } from '#lib/store/index.js';
import { CallbackAppNotFoundError } from './errors.js';

export interface CallbackDeps {
  config: GatewayConfig;
  /** One verifier per app with callback settings, built at cold start ({@link createVerifiers}). */
  verifiers: ReadonlyMap<string, CallbackVerifier>;
  events: EventStore;
  cards: CardCodeStore;
  notify: NotifyQueue;
  logger: Logger;
  metrics: Metrics;
  now?: () => number;
}

/**
 * A verifier for every app with `callback` settings, keyed by app name. A bad EncodingAESKey fails here, at cold
 * start, not on the first callback.
 *
 * @example const verifiers = createVerifiers(config); // Map { 'ops' => CallbackVerifier }
 */
export function createVerifiers(
  config: GatewayConfig,
  opts: CallbackVerifierOptions = {},
): ReadonlyMap<string, CallbackVerifier> {
  const verifiers = new Map<string, CallbackVerifier>();
  for (const [name, app] of Object.entries(config.apps)) {
    if (!app.callback) continue;
    verifiers.set(
      name,
      createCallbackVerifier(
        { token: app.callback.token, encodingAESKey: app.callback.encodingAESKey, corpId: app.corpId },
        opts,
      ),
    );
  }
  return verifiers;
}

function verifierOf(deps: CallbackDeps, app: string): CallbackVerifier {
  // A Map has no inherited keys: `constructor` or `__proto__` as an app name finds nothing.
  const verifier = deps.verifiers.get(app);
  if (!verifier) throw new CallbackAppNotFoundError(app);
  return verifier;
}

/**
 * `GET /v1/wecom/callback/{app}`: WeCom's URL verification when an admin saves the callback URL. The answer is the
 * decrypted echostr, as the bare body (WeCom: no quotes, BOM or newline, within 1 s).
 *
 * @throws CallbackAppNotFoundError (404), lib/callback CallbackError (400/401)
 */
export function verifyCallbackUrl(deps: CallbackDeps, app: string, query: CallbackQuery): string {
  return verifierOf(deps, app).verifyUrl(query);
}

/** Card events carry the task_id that leads back to the message (lib/messages `withTaskId`). */
const taskIdOf = (event: CallbackEvent): string | undefined =>
  (event.kind === 'template_card_event' || event.kind === 'template_card_menu_event') && event.taskId !== ''
    ? event.taskId
    : undefined;

/**
 * `POST /v1/wecom/callback/{app}`: every check of lib/callback (size, freshness, signature, decryption, corp, XML)
 * before anything is stored; then the event is stored once however often WeCom retries it, tied to its message
 * when it is a card event, the card's new response_code is kept for `POST /v1/messages/{id}/card`, and a
 * `wecom.event` webhook job is queued (once) for the message. The caller answers WeCom an empty 200.
 *
 * A store or queue failure throws (the handler answers 503): WeCom retries, and the retry completes what the
 * first attempt left undone.
 *
 * @throws CallbackAppNotFoundError (404), lib/callback CallbackError (400/401/413)
 */
export async function receiveCallback(
  deps: CallbackDeps,
  app: string,
  query: CallbackQuery,
  body: string | Uint8Array,
): Promise<{ eventId: string; duplicate: boolean; messageId?: string }> {
  const verifier = verifierOf(deps, app);
  let event: CallbackEvent;
  try {
    event = verifier.receive(query, body);
  } catch (err) {
    deps.metrics.count('CallbacksRejected');
    throw err;
  }
  const now = (deps.now ?? Date.now)();
  const id = dedupeKey(event);
  const taskId = taskIdOf(event);
  const messageId = taskId === undefined ? undefined : await deps.events.findMessageByTask(app, taskId);
  const { responseCode, ...kept } = event as CallbackEvent & { responseCode?: string };
  const stored: StoredEvent = {
    id,
    app,
    receivedAt: new Date(now).toISOString(),
    ...(messageId !== undefined ? { messageId } : {}),
    event: kept as CallbackEvent,
  };
  const expiresAt = Math.floor(now / 1000) + deps.config.retentionDays * 86_400;
  const outcome = await deps.events.record(stored, expiresAt);
  const first = outcome.outcome === 'stored' ? stored : outcome.first;
  deps.metrics.count(outcome.outcome === 'stored' ? 'CallbacksStored' : 'CallbacksDuplicate');
  if (first.messageId !== undefined) {
    if (responseCode) await deps.cards.save(first.messageId, responseCode, first.receivedAt);
    if (outcome.outcome === 'stored' || !outcome.notified) {
      await deps.notify.enqueue(
        eventNotice({
          messageId: first.messageId,
          app,
          eventId: id,
          receivedAt: first.receivedAt,
          event: first.event,
        }),
      );
      await deps.events.markNotified(app, id);
    }
  }
  // What went well is not logged at info (docs/operations/monitoring.md): the stored event is the record
  // (`GET /v1/events`), and the CallbacksStored and CallbacksDuplicate metrics count them.
  deps.logger.debug('callback stored', {
    app,
    eventId: id,
    kind: event.kind,
    duplicate: outcome.outcome === 'duplicate',
    ...(first.messageId !== undefined ? { messageId: first.messageId } : {}),
  });
  return {
    eventId: id,
    duplicate: outcome.outcome === 'duplicate',
    ...(first.messageId !== undefined ? { messageId: first.messageId } : {}),
  };
}

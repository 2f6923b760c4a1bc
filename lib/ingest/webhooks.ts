import type { ApiKeyConfig } from '#lib/config/index.js';
import type { WebhookAttempt } from '#lib/store/index.js';
import { readOwn } from './access.js';
import type { IngestDeps } from './types.js';

/**
 * How many of a message's webhook attempts `GET /v1/messages/{id}/webhooks` reads (the newest). A status webhook
 * is tried about 32 times over 24 h at most (lib/webhooks `DEFAULT_WEBHOOK_RETRY`), so this holds every attempt of
 * a message's status webhooks and of dozens of card events; `truncated` says when older ones were left out.
 */
export const MAX_WEBHOOK_ATTEMPTS = 1000;

/** Where a delivery stands: its newest attempt's outcome, `retrying` while another attempt follows. */
export type DeliveryStatus = 'delivered' | 'retrying' | 'gone' | 'refused' | 'dead';

export interface DeliveryAttemptView {
  /** When the attempt started. */
  at: string;
  /** 1 for the first attempt. */
  attempt: number;
  outcome: WebhookAttempt['outcome'];
  /** The receiver's HTTP status; absent when there was no answer. */
  status_code?: number;
  latency_ms?: number;
  /** Why it did not count as delivered (`HTTP 500`, `ECONNREFUSED: …`, `refused: …`). */
  error?: string;
}

/** One webhook (one `webhook-id`) and its attempts, oldest first. */
export interface DeliveryView {
  /** The `webhook-id` header the receiver saw. */
  id: string;
  /** `message.sent`, `wecom.event`, … */
  event: string;
  /** Scheme, host, port and path; the query and fragment (they may hold a token) are never recorded. */
  target: string;
  status: DeliveryStatus;
  attempts: DeliveryAttemptView[];
  /** When the next attempt is due (about: SQS shows the job again then), while `retrying`. */
  next_attempt_at?: string;
}

export interface DeliveriesView {
  /** Newest first, by their latest attempt. */
  deliveries: DeliveryView[];
  /** True when the message has more attempts than were read (the oldest are left out). */
  truncated: boolean;
}

const STATUS_OF_OUTCOME: Record<WebhookAttempt['outcome'], DeliveryStatus> = {
  delivered: 'delivered',
  retry: 'retrying',
  gone: 'gone',
  refused: 'refused',
  dead: 'dead',
};

const attemptView = (a: WebhookAttempt): DeliveryAttemptView => ({
  at: a.at,
  attempt: a.attempt,
  outcome: a.outcome,
  ...(a.statusCode !== undefined ? { status_code: a.statusCode } : {}),
  ...(Number.isFinite(a.latencyMs) ? { latency_ms: a.latencyMs } : {}),
  ...(a.reason !== undefined ? { error: a.reason } : {}),
});

/**
 * A message's webhook attempts (newest first, as the store lists them) grouped into deliveries: one per
 * `webhook-id`, its attempts oldest first, its status that of its newest attempt.
 *
 * @example toDeliveries(await deps.webhooks.listAttempts(id, 1000)) // [{ id: 'msg_…:message.sent', status: 'delivered', … }]
 */
export function toDeliveries(newestFirst: readonly WebhookAttempt[]): DeliveryView[] {
  const byId = new Map<string, WebhookAttempt[]>();
  for (const a of newestFirst) {
    const list = byId.get(a.webhookId);
    if (list) list.push(a);
    else byId.set(a.webhookId, [a]);
  }
  return [...byId.values()].map((attempts) => {
    const oldestFirst = [...attempts].sort((x, y) => x.at.localeCompare(y.at) || x.attempt - y.attempt);
    const newest = oldestFirst.at(-1) as WebhookAttempt;
    const status = STATUS_OF_OUTCOME[newest.outcome];
    const nextAt =
      status === 'retrying' && newest.retryInSeconds !== undefined
        ? Date.parse(newest.at) + (newest.latencyMs || 0) + newest.retryInSeconds * 1000
        : undefined;
    return {
      id: newest.webhookId,
      event: newest.type,
      target: newest.target,
      status,
      attempts: oldestFirst.map(attemptView),
      ...(nextAt !== undefined && Number.isFinite(nextAt)
        ? { next_attempt_at: new Date(nextAt).toISOString() }
        : {}),
    };
  });
}

/**
 * GET /v1/messages/{id}/webhooks: the webhooks sent for a message and every attempt of each; 404 (not 403) for a
 * message of an app the key may not read, so ids do not leak. One Query of the message's partition (the attempts
 * share it: lib/store keys.ts).
 *
 * @example await listWebhookDeliveries(deps, apiKey, 'msg_01JD…') // { deliveries: [...], truncated: false }
 */
export async function listWebhookDeliveries(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  id: string,
): Promise<DeliveriesView> {
  await readOwn(deps, apiKey, id);
  // One more than shown: whether older attempts were left out.
  const attempts = await deps.webhooks.listAttempts(id, MAX_WEBHOOK_ATTEMPTS + 1);
  return {
    deliveries: toDeliveries(attempts.slice(0, MAX_WEBHOOK_ATTEMPTS)),
    truncated: attempts.length > MAX_WEBHOOK_ATTEMPTS,
  };
}

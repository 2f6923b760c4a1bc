import type { ApiKeyConfig } from '#lib/config/index.js';
import { type Addressed, addressOf, channelOf } from '#lib/messages/index.js';
import {
  type MessageError,
  type MessageEvent,
  type MessageRecord,
  type MessageStatus,
  RECEIPT_LISTS,
  type WebhookStatus,
  type WecomReceipt,
} from '#lib/model/index.js';
import type { WebhookAttempt } from '#lib/store/index.js';
import { recentEvents } from '#lib/store/message-store.js';
import { readOwn } from './access.js';
import { type EventView, toEventView } from './events.js';
import type { IngestDeps } from './types.js';

/** How many of a message's WeCom events and webhook attempts the status shows (the newest). */
const MAX_LISTED = 50;

/** One webhook attempt as the status shows it. */
export interface WebhookAttemptView {
  at: string;
  webhook_id: string;
  type: string;
  attempt: number;
  target: string;
  outcome: WebhookAttempt['outcome'];
  status_code: number | null;
  latency_ms: number;
  reason?: string;
  excerpt?: string;
  retry_in_seconds?: number;
}

/** GET /v1/messages/{id} (SPEC §2). */
/** GET /v1/messages/{id}: the message's channel (`app`, or `robot` for a group robot's) and its fields. */
export type MessageStatusView = Addressed & StatusViewFields;

export interface StatusViewFields {
  id: string;
  status: MessageStatus;
  priority: MessageRecord['priority'];
  attempts: number;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  /**
   * A scheduled message (docs/scheduling.md): when it is due (its `send_at`, or the end of the quiet hours that held
   * it), when it is released to be sent (plus its share of the spread), and which of the two scheduled it. Null for a
   * message sent at once.
   */
  send_at: string | null;
  release_at: string | null;
  scheduled_by: 'send_at' | 'quiet_hours' | null;
  metadata: Record<string, string>;
  wecom: ({ msgid: string } & Record<(typeof RECEIPT_LISTS)[number], string>) | null;
  /**
   * Present when the message went out in parts (some recipients waited for their quota slots): each part's users,
   * when it was sent and WeCom's receipt for it. `wecom` is the receipt of the last part.
   */
  parts?: {
    touser: string[];
    sent_at: string;
    wecom: NonNullable<MessageStatusView['wecom']>;
    /** Split content: which of its parts (1-based) this send carried. */
    content_part?: number;
  }[];
  /** Present when long content was split (`split`): how many parts, each sent to every recipient in order. */
  split?: { parts: number };
  error: MessageError | null;
  events: MessageEvent[];
  /** Events of a long run of retries or deferrals that were counted instead of listed (the newest is listed). */
  events_omitted: number;
  /** How the message's webhooks ended, beside its status: delivered, gone (410), refused, dead; null until one ends. */
  webhook_status: WebhookStatus | null;
  /** WeCom events tied to the message (card button presses …), newest first. */
  wecom_events: EventView[];
  /** Webhook attempts, newest first: when, the receiver's status code, how long it took. */
  webhook_attempts: WebhookAttemptView[];
  /**
   * The message as the gateway sends it to WeCom, without recipients and options: `msgtype` and that type's object
   * (`{"msgtype":"text","text":{"content":"…"}}`), e.g. for the console's preview.
   */
  body: { msgtype: string } & Record<string, unknown>;
}

/** GET /v1/messages/{id}: 404 (not 403) for ids of apps the key may not read, so ids do not leak. */
export async function getMessage(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  id: string,
): Promise<MessageStatusView> {
  const record = await readOwn(deps, apiKey, id);
  const [events, attempts] = await Promise.all([
    deps.events.listByMessage(id, MAX_LISTED),
    deps.webhooks.listAttempts(id, MAX_LISTED),
  ]);
  return {
    ...toStatusView(record),
    wecom_events: events.map(toEventView),
    webhook_attempts: attempts.map(toAttemptView),
  };
}

const toAttemptView = (a: WebhookAttempt): WebhookAttemptView => ({
  at: a.at,
  webhook_id: a.webhookId,
  type: a.type,
  attempt: a.attempt,
  target: a.target,
  outcome: a.outcome,
  status_code: a.statusCode ?? null,
  latency_ms: a.latencyMs,
  ...(a.reason !== undefined ? { reason: a.reason } : {}),
  ...(a.excerpt !== undefined ? { excerpt: a.excerpt } : {}),
  ...(a.retryInSeconds !== undefined ? { retry_in_seconds: a.retryInSeconds } : {}),
});

function toStatusView(
  r: MessageRecord,
): Addressed & Omit<StatusViewFields, 'wecom_events' | 'webhook_attempts'> {
  const { msgtype, content } = r.request;
  return {
    id: r.id,
    ...addressOf(channelOf(r)),
    status: r.status,
    priority: r.priority,
    attempts: r.attempts,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    sent_at: r.sentAt ?? null,
    send_at: r.schedule?.dueAt ?? null,
    release_at: r.schedule?.releaseAt ?? null,
    scheduled_by: r.schedule?.reason ?? null,
    metadata: r.metadata ?? {},
    wecom: r.wecom ? receiptView(r.wecom) : null,
    ...(r.parts?.length
      ? {
          parts: r.parts.map((p) => ({
            touser: p.touser,
            sent_at: p.sentAt,
            wecom: receiptView(p.wecom),
            ...(r.request.segments ? { content_part: (p.segment ?? 0) + 1 } : {}),
          })),
        }
      : {}),
    ...(r.request.segments ? { split: { parts: r.request.segments.length } } : {}),
    error: r.error ?? null,
    events: recentEvents(r),
    events_omitted: r.eventsOmitted ?? 0,
    webhook_status: r.webhookStatus ?? null,
    body: { msgtype, [msgtype]: content },
  };
}

/** WeCom's own shape: every list present, as an `a|b` string, empty when none. */
function receiptView(receipt: WecomReceipt): NonNullable<MessageStatusView['wecom']> {
  const view = { msgid: receipt.msgid } as NonNullable<MessageStatusView['wecom']>;
  for (const list of RECEIPT_LISTS) view[list] = receipt[list] ?? '';
  return view;
}

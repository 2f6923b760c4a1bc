import { createHash } from 'node:crypto';
import type { CallbackEvent } from '#lib/callback/index.js';
import { type Addressed, addressOf, channelOf } from '#lib/messages/index.js';

/**
 * Webhook bodies sent to the business, in the Standard Webhooks payload shape `{ type, timestamp, data }`
 * (spec "Payload structure"). Field names in `data` are snake_case like the HTTP API (`GET /v1/messages/{id}`).
 * Nothing secret is ever included: no API keys, WeCom secrets or tokens, and no card `response_code` (a
 * single-use WeCom credential the gateway spends itself, in `POST /v1/messages/{id}/card`).
 *
 * Status events, one per message and status:
 * ```json
 * { "type": "message.sent", "timestamp": "2026-12-01T08:00:07.000Z",
 *   "data": { "id": "msg_01J…", "app": "ops", "status": "sent", "priority": "normal", "attempts": 1,
 *             "created_at": "…", "updated_at": "…", "sent_at": "…", "metadata": { "ticket": "T-1" },
 *             "wecom": { "msgid": "…", "invaliduser": "bob" } } }
 * ```
 * `message.failed` / `message.dead` / `message.expired` carry `error: { code, message, wecom_errcode? }`.
 *
 * A WeCom event tied to a message (a card button pressed, …):
 * ```json
 * { "type": "wecom.event", "timestamp": "<the event's CreateTime>",
 *   "data": { "app": "ops", "message_id": "msg_01J…", "metadata": { … }, "received_at": "…",
 *             "event": { "kind": "template_card_event", "from": "alice", "create_time": 1790000000,
 *                        "event_key": "approve", "task_id": "…", "card_type": "button_interaction",
 *                        "selected_items": [] } } }
 * ```
 */
export type MessageStatusEventType =
  | 'message.sent'
  | 'message.failed'
  | 'message.dead'
  | 'message.expired'
  | 'message.recalled'
  | 'message.canceled';
export type WebhookEventType = MessageStatusEventType | 'wecom.event';

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'message.sent',
  'message.failed',
  'message.dead',
  'message.expired',
  'message.recalled',
  'message.canceled',
  'wecom.event',
];

export type TerminalStatus = 'sent' | 'failed' | 'dead' | 'expired' | 'recalled' | 'canceled';

/**
 * What a status webhook says about a message; the notify function fills it from the message record. Its channel
 * (`app`, or `robot` for a group robot's message) is said under that name.
 */
export type MessageSnapshot = Addressed & SnapshotFields;

export interface SnapshotFields {
  id: string;
  status: TerminalStatus;
  priority?: string;
  attempts?: number;
  /** ISO 8601. `updatedAt` is when the status was reached: the event's timestamp. */
  createdAt: string;
  updatedAt: string;
  sentAt?: string;
  metadata?: Record<string, string>;
  wecom?: {
    msgid?: string;
    invaliduser?: string;
    invalidparty?: string;
    invalidtag?: string;
    unlicenseduser?: string;
  };
  error?: { code: string; message: string; wecomErrcode?: number };
}

export interface WebhookPayload<T extends WebhookEventType = WebhookEventType> {
  type: T;
  timestamp: string;
  data: Record<string, unknown>;
}

/** The `message.<status>` webhook for a message that reached a terminal status. */
export function messageStatusPayload(message: MessageSnapshot): WebhookPayload<MessageStatusEventType> {
  return {
    type: `message.${message.status}`,
    timestamp: message.updatedAt,
    data: {
      id: message.id,
      ...addressOf(channelOf(message)),
      status: message.status,
      ...(message.priority !== undefined ? { priority: message.priority } : {}),
      ...(message.attempts !== undefined ? { attempts: message.attempts } : {}),
      created_at: message.createdAt,
      updated_at: message.updatedAt,
      ...(message.sentAt !== undefined ? { sent_at: message.sentAt } : {}),
      ...(message.metadata !== undefined ? { metadata: message.metadata } : {}),
      ...(message.wecom !== undefined ? { wecom: message.wecom } : {}),
      ...(message.error !== undefined
        ? {
            error: {
              code: message.error.code,
              message: message.error.message,
              ...(message.error.wecomErrcode !== undefined
                ? { wecom_errcode: message.error.wecomErrcode }
                : {}),
            },
          }
        : {}),
    },
  };
}

/** The `wecom.event` webhook: a received WeCom event and the message it is tied to (null when none). */
export function wecomEventPayload(args: {
  app: string;
  event: CallbackEvent;
  receivedAt: string;
  messageId?: string;
  metadata?: Record<string, string>;
}): WebhookPayload<'wecom.event'> {
  return {
    type: 'wecom.event',
    timestamp: new Date(args.event.createTime * 1000).toISOString(),
    data: {
      app: args.app,
      message_id: args.messageId ?? null,
      ...(args.metadata !== undefined ? { metadata: args.metadata } : {}),
      received_at: args.receivedAt,
      event: publicEvent(args.event),
    },
  };
}

/**
 * A callback event as the business sees it: snake_case keys, the corp id and the card's response_code left
 * out; `fields` (contact changes, unknown events) stays exactly as WeCom sent it.
 */
export function publicEvent(event: CallbackEvent): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) {
    if (key === 'corpId' || key === 'responseCode') continue;
    out[snakeCase(key)] =
      key === 'selectedItems'
        ? (value as { questionKey: string; optionIds: string[] }[]).map((item) => ({
            question_key: item.questionKey,
            option_ids: item.optionIds,
          }))
        : value;
  }
  return out;
}

/**
 * A stable webhook id from what the webhook is about, e.g. (message id, type) or (app, event dedupe key): the
 * same event queued twice gets the same `webhook-id`, which receivers use as their idempotency key.
 *
 * @example webhookIdFor('msg_01J…', 'message.sent') // 'wh_…' (26 characters after the prefix)
 */
export function webhookIdFor(...parts: string[]): string {
  return `wh_${createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 26)}`;
}

const snakeCase = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

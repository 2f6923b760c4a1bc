import type { CallbackEvent } from '#lib/callback/index.js';
import { type Addressed, addressOf, channelOf } from '#lib/messages/index.js';
import type { RecordFields } from './record.js';
import type { TransitionName } from './transitions.js';

/**
 * The notify queue's message body: one webhook to send. Like the lanes' body it must stay readable while queued
 * (the notify queue keeps jobs 4 days): add optional fields freely; anything else needs a new `v`.
 *
 * - `status`: the message reached a status the business hears about (`message.<status>`); the notify function
 *   reads the record for the rest, so the webhook says what the record says when it is sent.
 * - `event`: a WeCom event tied to the message (`wecom.event`), carried whole: the callback that brought it has
 *   already been answered, and the event's own copy in the store is keyed by when it arrived.
 */
export type NotifyJob = StatusNotice | EventNotice;

/** A status webhook to send; its channel (`app` or `robot`) as the record names it. */
export type StatusNotice = Addressed & StatusNoticeFields;

export interface StatusNoticeFields {
  v: 1;
  kind: 'status';
  messageId: string;
  status: NotifyStatus;
  /** When the status was reached (ISO 8601). */
  at: string;
}

export interface EventNotice {
  v: 1;
  kind: 'event';
  messageId: string;
  app: string;
  /** The event's dedupe key (`msg:…`/`evt:…`): its id in `GET /v1/events`, and the webhook id's source. */
  eventId: string;
  receivedAt: string;
  /** The parsed event, without its response_code (a credential the gateway keeps). */
  event: CallbackEvent;
}

/**
 * Statuses with a `message.<status>` webhook (SPEC §2 "Outbound webhooks"); `expired` once a TTL ends one,
 * `canceled` once a client takes a message back.
 */
export const NOTIFY_STATUSES = ['sent', 'failed', 'dead', 'expired', 'recalled', 'canceled'] as const;
export type NotifyStatus = (typeof NOTIFY_STATUSES)[number];

const NOTIFY_STATUS_SET: ReadonlySet<string> = new Set(NOTIFY_STATUSES);

/**
 * The status webhook a change calls for, or undefined. `withdraw` is not one: the client was answered 503 for
 * that message and told to retry, so it never learned the id.
 *
 * @example statusNotice(record, 'send') // { v: 1, kind: 'status', messageId, app, status: 'sent', at }
 */
export function statusNotice(
  record: Addressed & Pick<RecordFields, 'id' | 'status' | 'updatedAt'>,
  transition: TransitionName,
): StatusNotice | undefined {
  if (transition === 'withdraw' || !NOTIFY_STATUS_SET.has(record.status)) return undefined;
  return {
    v: 1,
    kind: 'status',
    messageId: record.id,
    ...addressOf(channelOf(record)),
    status: record.status as NotifyStatus,
    at: record.updatedAt,
  };
}

/** A WeCom event tied to a message, as a notify job; the response_code stays behind. */
export function eventNotice(args: {
  messageId: string;
  app: string;
  eventId: string;
  receivedAt: string;
  event: CallbackEvent;
}): EventNotice {
  const { responseCode: _spent, ...event } = args.event as CallbackEvent & { responseCode?: string };
  return { v: 1, kind: 'event', ...args, event: event as CallbackEvent };
}

export const encodeNotifyJob = (job: NotifyJob): string => JSON.stringify(job);

/** The job in a notify queue body; undefined for a body of an unknown version or shape (it is dropped). */
export function decodeNotifyJob(body: string): NotifyJob | undefined {
  try {
    const job = JSON.parse(body) as NotifyJob;
    if (job?.v !== 1 || typeof job.messageId !== 'string') return undefined;
    if (typeof job.app !== 'string' && !(job.kind === 'status' && typeof job.robot === 'string'))
      return undefined;
    if (job.kind === 'status') return NOTIFY_STATUS_SET.has(job.status) ? job : undefined;
    if (job.kind === 'event') return job.event && typeof job.eventId === 'string' ? job : undefined;
    return undefined;
  } catch {
    return undefined;
  }
}

import {
  type Addressed,
  cardTaskId,
  channelKey,
  channelOf,
  type MessageRequest,
  type Priority,
} from '#lib/messages/index.js';
import type { Schedule } from '#lib/schedule/index.js';
import type { SendResponse } from '#lib/wecom/index.js';

/**
 * A message's statuses (SPEC §2). Which changes are allowed, and what each writes, is the table in
 * `./transitions.ts`; nothing else writes a status.
 */
export const STATUS = {
  /** Accepted for a later time (`send_at`, or an app's quiet hours): released to its lane then (docs/scheduling.md). */
  scheduled: 'scheduled',
  queued: 'queued',
  deferred: 'deferred',
  sent: 'sent',
  failed: 'failed',
  dead: 'dead',
  /** Not delivered within the message's own `ttl_seconds`: dropped on purpose, never sent. */
  expired: 'expired',
  recalled: 'recalled',
  /** Taken back before it was sent (`DELETE /v1/messages/{id}`): never delivered. */
  canceled: 'canceled',
} as const;
export type MessageStatus = (typeof STATUS)[keyof typeof STATUS];

/** Statuses after which the sender must never call WeCom for this message again. */
export const TERMINAL_STATUSES: ReadonlySet<MessageStatus> = new Set([
  STATUS.sent,
  STATUS.failed,
  STATUS.dead,
  STATUS.expired,
  STATUS.recalled,
  STATUS.canceled,
]);

/**
 * Statuses the sender still works on: a message in one of them may yet be sent. A `scheduled` message's copy comes
 * to the sender at its time and leaves the status as any copy does (sent, deferred, …): its release is no write.
 */
export const PENDING_STATUSES: readonly MessageStatus[] = [STATUS.scheduled, STATUS.queued, STATUS.deferred];

/** The lists of a WeCom send answer naming recipients it could not reach (`a|b` strings, absent when none). */
export const RECEIPT_LISTS = ['invaliduser', 'invalidparty', 'invalidtag', 'unlicenseduser'] as const;

/**
 * What the record keeps of WeCom's answer to the send. `response_code` (interaction cards only) is a single-use
 * credential for `update_template_card`: stored, spent by `POST /v1/messages/{id}/card`, never shown to clients.
 */
export type WecomReceipt = Pick<SendResponse, 'msgid' | (typeof RECEIPT_LISTS)[number] | 'response_code'>;

/** The receipt of a send answer: the msgid, the lists that name someone, and a card's response_code. */
export function receiptOf(response: SendResponse): WecomReceipt {
  const receipt: WecomReceipt = { msgid: response.msgid };
  for (const list of RECEIPT_LISTS) if (response[list]) receipt[list] = response[list];
  if (response.response_code) receipt.response_code = response.response_code;
  return receipt;
}

/**
 * How the webhooks of a message ended, kept beside its status (never instead of it): `delivered` (2xx), `gone`
 * (the receiver answered 410), `refused` (the SSRF guard or a missing secret stopped it) or `dead` (retries ran out,
 * the job is in the notify DLQ). `dead` stays once set: a later delivery does not hide a lost webhook.
 */
export const WEBHOOK_STATUS = {
  delivered: 'delivered',
  gone: 'gone',
  refused: 'refused',
  dead: 'dead',
} as const;
export type WebhookStatus = (typeof WEBHOOK_STATUS)[keyof typeof WEBHOOK_STATUS];

/** The key a template card's task_id is found by (unique per app in WeCom): `<app>#<task_id>`. */
export const taskKeyOf = (app: string, taskId: string): string => `${app}#${taskId}`;

export interface MessageError {
  code: string;
  message: string;
  wecom_errcode?: number;
}

/** Recipients who got the message in one send, when it was split (the others waited for their quota slots). */
export interface SentPart {
  touser: string[];
  sentAt: string;
  wecom: WecomReceipt;
  /**
   * Which part of split content this send carried (0-based; see MessageRequest `segments`). Absent: the first,
   * or content that was not split.
   */
  segment?: number;
  /** This send completed its part of split content: every recipient has it, the next part may go. */
  completes?: true;
}

export interface MessageEvent {
  at: string;
  type: string;
  detail?: string;
}

/**
 * A message is in doubt once an attempt may have reached WeCom and no answer was recorded (a timeout, a lost answer,
 * a crash between sending and recording), since the start of the first such attempt. Every later send of it must go
 * with WeCom's duplicate check on, and only within its interval after `since`, so that WeCom drops a repeat.
 */
export interface InDoubt {
  /** When the first attempt in doubt started (ISO time). */
  since: string;
}

/** The proof that an attempt missed WeCom: it certainly did not reach it (the opposite of being in doubt). */
export interface Missed {
  /** The attempt's receive count (of the record's `generation`); 0 = the deferral that made the copy. */
  receive: number;
}

/** What the gateway stores per accepted message: its channel (`app` or `robot`) and the fields below. */
export type MessageRecord = Addressed & RecordFields;

/** A record's fields besides its channel. */
export interface RecordFields {
  id: string;
  status: MessageStatus;
  priority: Priority;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  sentAt?: string;
  metadata?: Record<string, string>;
  callbackUrl?: string;
  /** Name of the API key that submitted it. */
  apiKey: string;
  request: MessageRequest;
  /** The receipt of the (last) send. */
  wecom?: WecomReceipt;
  /**
   * Set when the message went out in parts: each part's recipients and receipt. The message is `deferred` while
   * parts are still waiting, `sent` when the last one went.
   */
  parts?: SentPart[];
  error?: MessageError;
  /** At most a bounded number of events (lib/model `changes` decides which are kept); see `lastEvent`. */
  events?: MessageEvent[];
  /** The newest event, when it was one too many for `events` (a long run of retries or deferrals). */
  lastEvent?: MessageEvent;
  /** How many events were counted here instead of being appended to `events`. */
  eventsOmitted?: number;
  /**
   * Sticky: set once any attempt is in doubt (a timeout, or an attempt that itself ran with the duplicate check
   * because an earlier one was). Every later attempt — redelivery or deferred copy — must then let WeCom's duplicate
   * check drop a repeat, within its interval after `since`; proof that the *last* attempt missed WeCom says nothing
   * about the ones before it.
   */
  inDoubt?: InDoubt;
  /**
   * A first delivery's outcome, stored beside the record (lib/store) and folded into it on read; set on a record
   * read back whose `sent` status came from it.
   */
  firstDelivery?: FirstDelivery;
  /**
   * Deferral generation: every deferral re-enqueues a fresh SQS copy with generation + 1, so a stale copy
   * (its original was not deleted) recognises itself and is dropped instead of sending twice.
   */
  generation: number;
  /**
   * Set when the sender knows the last attempt missed WeCom (a definite WeCom error, or a deferral). A redelivery
   * skips WeCom's duplicate check only when that receive is the one right before it; any attempt since (a timeout, a
   * crash between sending and recording) is in doubt.
   */
  missed?: Missed;
  /** Highest deferred copy (generation) that has claimed the right to send: a duplicate copy stands down. */
  claimedGeneration?: number;
  /** See RecordOrigin. */
  duplicateCheckSeconds?: number;
  /** `<app>#<task_id>` of a template card ({@link taskKeyOf}): how a card callback finds the message. */
  taskKey?: string;
  /** The newest response_code a card callback brought, not yet spent (single use, valid 72 h). */
  cardCode?: { code: string; at: string };
  /** The send answer's `wecom.response_code` has been spent on a card update. */
  sendCodeSpent?: true;
  /** How its webhooks ended (see {@link WEBHOOK_STATUS}); absent while none has ended. */
  webhookStatus?: WebhookStatus;
  /** Set for a message accepted for later: when it is due, when it goes, and why (docs/scheduling.md). */
  schedule?: Schedule;
  /** Epoch seconds; DynamoDB TTL. */
  expiresAt: number;
}

/**
 * Where a record comes from: what ingest decided about an accepted request (the queue body carries the same), with
 * its channel (`app` or `robot`, as in the request).
 */
export type RecordOrigin = Addressed & OriginFields;

/** An origin's fields besides its channel. */
export interface OriginFields {
  id: string;
  priority: Priority;
  request: MessageRequest;
  /** Name of the API key that submitted it. */
  apiKey: string;
  createdAt: string;
  /** Epoch seconds; DynamoDB TTL. */
  expiresAt: number;
  /**
   * WeCom's `duplicate_check_interval` every attempt of this message carries, fixed at acceptance so that every
   * attempt is the same request (lib/messages `toWecomSendBody`); 0 when the client opted out. Absent on records
   * and queue bodies written before it existed.
   */
  duplicateCheckSeconds?: number;
  /** Accepted for a later time: the record starts `scheduled` (absent on bodies of messages sent at once). */
  schedule?: Schedule;
}

/** The outcome of a first delivery, as the sender stores it apart from the record. */
export interface FirstDelivery {
  at: string;
  receipt: WecomReceipt;
}

/**
 * The generation of a scheduled message's first copy. Copies of generation 1 and above claim the right to send on
 * the record before they call WeCom (lib/store `claimCopy`), which is what makes a scheduled message cancelable at
 * any moment (docs/scheduling.md, "The fire/cancel race").
 */
export const SCHEDULED_GENERATION = 1;

/**
 * The record ingest writes for an accepted message: `queued`, no attempts, generation 0; or `scheduled`, generation
 * 1 ({@link SCHEDULED_GENERATION}), when it is accepted for a later time.
 *
 * @example await messages.create(newRecord({ id, app: req.app, priority: req.priority, request: req, apiKey, createdAt, expiresAt }));
 */
export function newRecord(o: RecordOrigin): MessageRecord {
  const taskId = cardTaskId(o.request);
  const s = o.schedule;
  return {
    id: o.id,
    ...(o.robot !== undefined ? { robot: o.robot } : { app: o.app }),
    status: s ? STATUS.scheduled : STATUS.queued,
    priority: o.priority,
    attempts: 0,
    createdAt: o.createdAt,
    updatedAt: o.createdAt,
    ...(o.request.metadata ? { metadata: o.request.metadata } : {}),
    ...(o.request.callbackUrl ? { callbackUrl: o.request.callbackUrl } : {}),
    apiKey: o.apiKey,
    request: o.request,
    events: [s ? scheduledEvent(o.createdAt, s) : { at: o.createdAt, type: 'queued' }],
    generation: s ? SCHEDULED_GENERATION : 0,
    ...(s ? { schedule: s } : {}),
    ...(taskId !== undefined ? { taskKey: taskKeyOf(channelKey(channelOf(o)), taskId) } : {}),
    expiresAt: o.expiresAt,
    ...(o.duplicateCheckSeconds !== undefined ? { duplicateCheckSeconds: o.duplicateCheckSeconds } : {}),
  };
}

/** The event of an accepted `scheduled` message: what holds it and when it goes. */
const scheduledEvent = (at: string, s: Schedule): MessageEvent => ({
  at,
  type: 'scheduled',
  detail: `${s.reason === 'quiet_hours' ? 'held by quiet hours until' : 'send_at'} ${s.dueAt}; released at ${s.releaseAt}`,
});

/** The event of a `sent` status. */
export const sentEvent = (at: string, receipt: WecomReceipt): MessageEvent => ({
  at,
  type: 'sent',
  // A group robot's send is answered without a msgid.
  ...(receipt.msgid ? { detail: `msgid ${receipt.msgid}` } : {}),
});

/**
 * The redelivery proof: must a redelivered message (receive `receive` of deferral generation `generation`) go out
 * with WeCom's duplicate check on? Only when its record proves that the attempt right before this receive did not
 * reach WeCom may it go without. Anything since that proof (a timeout, a crash between sending and recording) is in
 * doubt; and once the message is in doubt (`inDoubt`, sticky), every later attempt needs the check.
 */
export function inDoubtOnRedelivery(stored: MessageRecord, generation: number, receive: number): boolean {
  if (stored.inDoubt) return true;
  const provedMissed =
    stored.missed !== undefined && stored.generation === generation && stored.missed.receive === receive - 1;
  return !provedMissed;
}

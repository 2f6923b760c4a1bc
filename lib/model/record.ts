import type { MessageRequest, Priority } from '#lib/messages/index.js';

/** Status machine (SPEC §2): queued → (deferred ⇄ queued) → sent | failed | dead; sent → recalled. */
export const STATUS = {
  queued: 'queued',
  deferred: 'deferred',
  sent: 'sent',
  failed: 'failed',
  dead: 'dead',
  recalled: 'recalled',
} as const;
export type MessageStatus = (typeof STATUS)[keyof typeof STATUS];

/** Statuses after which the sender must never call WeCom for this message again. */
export const TERMINAL_STATUSES: ReadonlySet<MessageStatus> = new Set([
  STATUS.sent,
  STATUS.failed,
  STATUS.dead,
  STATUS.recalled,
]);

export interface WecomReceipt {
  msgid: string;
  invaliduser?: string;
  invalidparty?: string;
  invalidtag?: string;
  unlicenseduser?: string;
}

export interface MessageError {
  code: string;
  message: string;
  wecom_errcode?: number;
}

export interface MessageEvent {
  at: string;
  type: string;
  detail?: string;
}

/** What the gateway stores per accepted message. */
export interface MessageRecord {
  id: string;
  app: string;
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
  wecom?: WecomReceipt;
  error?: MessageError;
  events?: MessageEvent[];
  /**
   * Deferral generation: every deferral re-enqueues a fresh SQS copy with generation + 1, so a stale copy
   * (its original was not deleted) recognises itself and is dropped instead of sending twice.
   */
  generation: number;
  /**
   * Set when the sender knows an attempt did not reach WeCom (a definite WeCom error, or a deferral), together
   * with the receive it describes. A redelivery skips WeCom's duplicate check only when that receive is the one
   * right before it; any attempt since (a timeout, a crash between sending and recording) may have reached WeCom.
   */
  lastAttemptReachedWecom?: false;
  /** Receive count (of `generation`) whose attempt did not reach WeCom; 0 = the deferral that made the copy. */
  notReachedAtReceive?: number;
  /**
   * Sticky: set once any attempt may have reached WeCom without a recorded success (a timeout, or an attempt that
   * itself ran with the duplicate check because an earlier one may have). Every later attempt — redelivery or
   * deferred copy — must then let WeCom's duplicate check drop a repeat; proof that the *last* attempt missed
   * WeCom says nothing about the ones before it.
   */
  mayHaveReachedWecom?: true;
  /** Highest deferred copy (generation) that has claimed the right to send: a duplicate copy stands down. */
  claimedGeneration?: number;
  /** Epoch seconds; DynamoDB TTL. */
  expiresAt: number;
}

/** The SQS message body: everything the sender needs, so a first delivery needs no DynamoDB read. */
export interface QueuedMessage {
  v: 1;
  id: string;
  app: string;
  priority: Priority;
  createdAt: string;
  expiresAt: number;
  apiKey: string;
  request: MessageRequest;
  generation: number;
  /** Carried by deferred copies: an attempt before the deferral may have reached WeCom (see MessageRecord). */
  mayHaveReachedWecom?: true;
}

export const toQueuedMessage = (r: MessageRecord): QueuedMessage => ({
  v: 1,
  id: r.id,
  app: r.app,
  priority: r.priority,
  createdAt: r.createdAt,
  expiresAt: r.expiresAt,
  apiKey: r.apiKey,
  request: r.request,
  generation: r.generation,
});

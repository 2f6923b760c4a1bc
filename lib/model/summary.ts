import {
  type Addressed,
  addressOf,
  channelOf,
  type MsgType,
  type Priority,
  type Recipients,
  type RobotMsgType,
} from '#lib/messages/index.js';
import { type MessageRecord, type MessageStatus, STATUS } from './record.js';
import { TRANSITIONS } from './transitions.js';

/** How many recipients of each kind a list entry names (a message may list 1,000 users). */
export const PREVIEW_RECIPIENTS = 20;

const NO_RECIPIENTS: Recipients = { touser: [], toparty: [], totag: [] };

/** The first recipients of each kind, as the client wrote them, and how many more the message lists. */
export interface RecipientsPreview {
  touser: string[];
  toparty: string[];
  totag: string[];
  /** Recipients of all three kinds left out of the lists above. */
  omitted: number;
}

/**
 * A message as a list shows it (`GET /v1/messages`): who it is for and where it stands, never its content. Only
 * `status`, `attempts`, `updatedAt` and `sentAt` change after acceptance.
 */
export type MessageSummary = Addressed & SummaryFields;

/** A summary's fields besides its channel. A robot's message names no recipients: it goes to the robot's group. */
export interface SummaryFields {
  id: string;
  status: MessageStatus;
  priority: Priority;
  msgtype: MsgType | RobotMsgType;
  recipients: RecipientsPreview;
  attempts: number;
  createdAt: string;
  updatedAt: string;
  sentAt?: string;
  /** A scheduled message's time (lib/schedule `Schedule`): what it was asked for, and when it leaves. */
  schedule?: { dueAt: string; releaseAt: string };
}

/**
 * The recipients a list entry names.
 *
 * @example recipientsPreview({ touser: ['a', 'b'], toparty: [], totag: ['7'] }) // { touser: ['a', 'b'], …, omitted: 0 }
 */
export function recipientsPreview(r: Recipients): RecipientsPreview {
  const lists = [r.touser, r.toparty, r.totag];
  const omitted = lists.reduce((n, list) => n + Math.max(0, list.length - PREVIEW_RECIPIENTS), 0);
  return {
    touser: r.touser.slice(0, PREVIEW_RECIPIENTS),
    toparty: r.toparty.slice(0, PREVIEW_RECIPIENTS),
    totag: r.totag.slice(0, PREVIEW_RECIPIENTS),
    omitted,
  };
}

/** The summary of a record (as read back, first delivery folded in). */
export function summaryOf(r: MessageRecord): MessageSummary {
  return {
    id: r.id,
    ...addressOf(channelOf(r)),
    status: r.status,
    priority: r.priority,
    msgtype: r.request.msgtype,
    recipients: recipientsPreview(r.request.robot === undefined ? r.request.recipients : NO_RECIPIENTS),
    attempts: r.attempts,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    ...(r.sentAt !== undefined ? { sentAt: r.sentAt } : {}),
    ...(r.schedule ? { schedule: { dueAt: r.schedule.dueAt, releaseAt: r.schedule.releaseAt } } : {}),
  };
}

/** Statuses a first delivery turns into `sent` (the `send` transition's `from`). */
const SENDABLE: ReadonlySet<MessageStatus> = new Set(TRANSITIONS.send.from);

/**
 * Whether a summary read from the record alone may be out of date: a first delivery is stored beside the record
 * (lib/store `putFirstDeliveries`), so a record still `queued`, `deferred` or `dead` may have been sent.
 */
export const mayHaveFirstDelivery = (s: Pick<MessageSummary, 'status'>): boolean => SENDABLE.has(s.status);

/**
 * A summary with its first delivery folded in, exactly as lib/model `withFirstDelivery` folds it into the record
 * (the `send` change: status, times, one more attempt), under the same condition: a message failed, expired or
 * recalled meanwhile stays so. `at`: when the first delivery was recorded; undefined when there is none.
 *
 * @example summaryWithFirstDelivery(queuedSummary, '2026-12-01T08:00:01.000Z').status // 'sent'
 */
export function summaryWithFirstDelivery(s: MessageSummary, at: string | undefined): MessageSummary {
  if (at === undefined || !mayHaveFirstDelivery(s)) return s;
  return { ...s, status: STATUS.sent, updatedAt: at, sentAt: at, attempts: s.attempts + 1 };
}

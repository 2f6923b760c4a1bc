import {
  type MessageError,
  type MessageEvent,
  type MessageRecord,
  type MessageStatus,
  PENDING_STATUSES,
  STATUS,
  sentEvent,
  type WecomReceipt,
} from './record.js';

/**
 * Every status change a message may go through (SPEC §2: `queued → (deferred ⇄ queued) → sent | failed | dead`,
 * `sent → recalled`), by name. A change is written only if the record's status is in `from` at that moment
 * (a conditional write), so two writers racing on one record cannot move it anywhere this table does not allow.
 */
export const TRANSITIONS = {
  /** Ingest: a record whose request was answered 503 (not stored, not queued, or replaced by a retry). */
  withdraw: { from: [STATUS.queued], to: STATUS.failed },
  /** Sender: WeCom took the message (a redelivery or deferred copy; first deliveries write `sentRecord` whole). */
  // `dead` too: an operator may have redriven a message from its DLQ.
  send: { from: [...PENDING_STATUSES, STATUS.dead], to: STATUS.sent },
  /** Sender: an attempt failed; SQS delivers the message again after a backoff. */
  retry: { from: PENDING_STATUSES, to: STATUS.queued },
  /** Sender: the last allowed receive failed; SQS moves the message to the DLQ. */
  die: { from: PENDING_STATUSES, to: STATUS.dead },
  /** Sender: waiting for quota or a paused app; a fresh copy (generation + 1) is queued with a delay. */
  defer: { from: PENDING_STATUSES, to: STATUS.deferred },
  /** Sender: WeCom refused it for good, or no window could ever hold it. */
  fail: { from: PENDING_STATUSES, to: STATUS.failed },
  /** Ingest: WeCom recalled it (within 24 h of sending). */
  recall: { from: [STATUS.sent], to: STATUS.recalled },
} as const satisfies Record<string, { from: readonly MessageStatus[]; to: MessageStatus }>;

export type TransitionName = keyof typeof TRANSITIONS;

/**
 * One status change as the store writes it: built only by {@link changes}, never by hand, so `from`/`to` always
 * come from the table.
 */
export interface StatusChange {
  transition: TransitionName;
  from: readonly MessageStatus[];
  to: MessageStatus;
  at: string;
  event: MessageEvent;
  attemptsDelta?: number;
  wecom?: WecomReceipt;
  error?: MessageError;
  sentAt?: string;
  generation?: number;
  /**
   * What this change proves about the attempt it records. A number: the attempt certainly did not reach WeCom, and
   * was that receive of its generation (0: the deferral that made the copy). `false`: no proof (clears an older one).
   */
  missedWecomAtReceive?: number | false;
  /** Sets the sticky `mayHaveReachedWecom` marker (never cleared). */
  mayHaveReachedWecom?: true;
}

const change = (name: TransitionName, at: string, event: Omit<MessageEvent, 'at'>) => ({
  transition: name,
  from: TRANSITIONS[name].from,
  to: TRANSITIONS[name].to,
  at,
  event: { at, ...event },
});

/** Why ingest withdrew a record; the client was answered 503 each time and told to retry. */
const WITHDRAWN = {
  store_failed: 'the record could not be stored; the client was told to retry',
  enqueue_failed: 'the queue was unavailable; the client was told to retry',
  superseded: 'not accepted (answered 503); a retry with its Idempotency-Key replaced it',
} as const;
export type WithdrawReason = keyof typeof WITHDRAWN;

/** A failed attempt, as the sender saw it. */
export interface FailedAttempt {
  /** Its SQS receive count. */
  receive: number;
  /** `no`: it certainly did not reach WeCom; `unknown`: it may have (a timeout, a lost answer). */
  reached: 'no' | 'unknown';
  /** An earlier attempt may have reached WeCom (the queue body's sticky marker): the marker stays set. */
  earlierMayHaveReached: boolean;
  /** Short cause for the event list: `errcode 45033`, `ECONNRESET`. */
  detail: string;
}

const attemptFields = (a: FailedAttempt) => ({
  attemptsDelta: 1,
  missedWecomAtReceive: a.reached === 'no' ? a.receive : (false as const),
  // This attempt may have reached WeCom, or ran with the check because an earlier one may have: sticky.
  ...(a.reached !== 'no' || a.earlierMayHaveReached ? { mayHaveReachedWecom: true as const } : {}),
});

/**
 * The named status changes, each with exactly the fields it writes.
 *
 * @example await messages.transition(id, changes.recall(at));
 */
export const changes = {
  withdraw: (at: string, reason: WithdrawReason): StatusChange => ({
    ...change('withdraw', at, { type: 'failed', detail: reason }),
    error: { code: reason, message: WITHDRAWN[reason] },
  }),
  send: (at: string, receipt: WecomReceipt): StatusChange => ({
    ...change('send', at, sentEvent(at, receipt)),
    sentAt: at,
    wecom: receipt,
    attemptsDelta: 1,
  }),
  retry: (at: string, attempt: FailedAttempt): StatusChange => ({
    ...change('retry', at, { type: 'retry', detail: attempt.detail }),
    ...attemptFields(attempt),
  }),
  die: (at: string, attempt: FailedAttempt, error: MessageError): StatusChange => ({
    ...change('die', at, { type: 'dead', detail: attempt.detail }),
    ...attemptFields(attempt),
    error,
  }),
  /** `generation`: the new copy's; `detail` says why and for how long. */
  defer: (at: string, generation: number, earlierMayHaveReached: boolean, detail: string): StatusChange => ({
    ...change('defer', at, { type: 'deferred', detail }),
    generation,
    // Deferring proves this receive did not reach WeCom; the copy's own first receive may rely on that.
    missedWecomAtReceive: 0,
    ...(earlierMayHaveReached ? { mayHaveReachedWecom: true as const } : {}),
  }),
  fail: (at: string, error: MessageError): StatusChange => ({
    ...change('fail', at, { type: 'failed', detail: error.code }),
    attemptsDelta: 1,
    error,
  }),
  recall: (at: string): StatusChange => change('recall', at, { type: 'recalled' }),
} satisfies Record<TransitionName, (...args: never[]) => StatusChange>;

/**
 * A change applied to a record in memory, exactly as the store applies it; undefined when the record's status is
 * not in `from` (the store's conditional write fails). The reference for the DynamoDB adapter and the test doubles.
 */
export function applyChange(record: MessageRecord, c: StatusChange): MessageRecord | undefined {
  if (!c.from.includes(record.status)) return undefined;
  const r: MessageRecord = { ...record, status: c.to, updatedAt: c.at };
  r.events = [...(record.events ?? []), c.event];
  if (c.attemptsDelta) r.attempts += c.attemptsDelta;
  if (c.wecom) r.wecom = c.wecom;
  if (c.error) r.error = c.error;
  if (c.sentAt) r.sentAt = c.sentAt;
  if (c.generation !== undefined) r.generation = c.generation;
  if (c.mayHaveReachedWecom) r.mayHaveReachedWecom = true;
  if (c.missedWecomAtReceive === false) {
    delete r.lastAttemptReachedWecom;
    delete r.notReachedAtReceive;
  } else if (c.missedWecomAtReceive !== undefined) {
    r.lastAttemptReachedWecom = false;
    r.notReachedAtReceive = c.missedWecomAtReceive;
  }
  return r;
}

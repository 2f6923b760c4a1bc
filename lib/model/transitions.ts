import { FUNCTIONS } from '#lib/resources/index.js';
import {
  type FirstDelivery,
  type InDoubt,
  type MessageError,
  type MessageEvent,
  type MessageRecord,
  type MessageStatus,
  type Missed,
  PENDING_STATUSES,
  type SentPart,
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
  withdraw: { from: [STATUS.queued, STATUS.scheduled], to: STATUS.failed },
  /**
   * Sender: WeCom took the message. A first delivery stores this change beside the record instead (lib/store
   * `putFirstDeliveries`) and it is applied on read ({@link withFirstDelivery}), under the same `from`.
   */
  // `dead` too: an operator may have redriven a message from its DLQ.
  send: { from: [...PENDING_STATUSES, STATUS.dead], to: STATUS.sent },
  /** Sender: an attempt failed; the message comes again after a backoff (SQS, or a fresh copy). */
  retry: { from: PENDING_STATUSES, to: STATUS.queued },
  /** Sender: the message's delivery budget ran out while it kept failing or waiting. */
  die: { from: PENDING_STATUSES, to: STATUS.dead },
  /** Sender: its own `ttl_seconds` ran out before it could be delivered. */
  expire: { from: PENDING_STATUSES, to: STATUS.expired },
  /** Sender: waiting for quota or a paused app; a fresh copy (generation + 1) is queued with a delay. */
  defer: { from: PENDING_STATUSES, to: STATUS.deferred },
  /**
   * Sender: some recipients got the message; the others wait for their quota slots in a copy of their own
   * (generation + 1). The message stays pending until its last part is sent (`send`).
   */
  sendPart: { from: PENDING_STATUSES, to: STATUS.deferred },
  /**
   * Sender: a part of split content reached every recipient; the next part waits in a copy of its own (generation
   * + 1). The message stays pending until its last part is sent (`send`).
   */
  sendSegment: { from: PENDING_STATUSES, to: STATUS.deferred },
  /** Sender: WeCom refused it for good, or no window could ever hold it. */
  fail: { from: PENDING_STATUSES, to: STATUS.failed },
  /** Ingest: WeCom recalled it (within 24 h of sending). */
  recall: { from: [STATUS.sent], to: STATUS.recalled },
  /**
   * Ingest (`DELETE /v1/messages/{id}`): taken back before it was sent. Written only while no copy holds the claim
   * to send ({@link StatusChange} `unclaimed`), so that a copy in flight either stands down or the cancel is refused.
   */
  cancel: { from: PENDING_STATUSES, to: STATUS.canceled },
  /**
   * Operator (`wecom-gateway dlq list`): the message's current copy lies in a dead-letter queue (the sender
   * could not handle it `maxReceiveCount` times), so nothing will send it: its status says so.
   */
  deadLetter: { from: PENDING_STATUSES, to: STATUS.dead },
  /**
   * Operator (`wecom-gateway dlq redrive`): a message from a dead-letter queue goes back to its lane as a fresh
   * copy (generation + 1), sent with WeCom's duplicate check since an earlier attempt may have reached WeCom.
   */
  redrive: { from: [...PENDING_STATUSES, STATUS.dead], to: STATUS.queued },
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
   * `count`: the event is one of a long run (retries, deferrals) past what the record lists: it is kept as the
   * record's `lastEvent` and counted in `eventsOmitted` instead of being appended, so the item stays bounded.
   */
  eventMode?: 'append' | 'count';
  /** Marks the message in doubt (sticky); its `since` yields to the record's, so the earliest such time wins. */
  inDoubt?: InDoubt;
  /**
   * What this change proves about the attempt it records: that it missed WeCom (at that receive of its generation),
   * or `false`, no proof (clears an older one).
   */
  missed?: Missed | false;
  /**
   * A further condition: the record's generation must be this one. For changes made outside the sender from a
   * copy it read (an operator's DLQ tools): a newer copy owns the message, and an older one must not touch it.
   */
  ifGeneration?: number;
  /** `inDoubt` replaces the record's instead of yielding to it (a forced redrive starts protection afresh). */
  replaceInDoubt?: true;
  /** Removes the record's `error` (a redriven message is no longer dead). */
  clearError?: true;
  /**
   * Removes the record's in-doubt marker: the request it was about is settled (a part of split content reached
   * everyone, and the next part, a request of its own, is queued).
   */
  clearInDoubt?: true;
  /** Appended to `parts`. */
  part?: SentPart;
  /**
   * A further condition (cancel): no copy may hold the claim to send (lib/store `claimCopy`), the message must not be
   * in doubt nor sent in part, and a record of generation 0 that is not `scheduled` must have been accepted before
   * `freshBefore`: until then its first copy may go without claiming ({@link UNCLAIMED_SEND_MS}).
   */
  unclaimed?: { freshBefore: string };
}

/**
 * How long after acceptance a message's first copy (generation 0, first receive) may call WeCom without claiming the
 * right to send on its record: the hot path pays no extra write. A copy that would call later claims first. Every
 * other copy (scheduled, deferred, retried, redriven, redelivered) claims always.
 */
export const UNCLAIMED_SEND_MS = 30_000;

/**
 * How long after acceptance a message sent at once can be canceled at the earliest: the unclaimed window, plus the
 * longest a sender invocation runs (its `message/send` answered and its first delivery recorded), plus a margin for
 * the clocks of two functions.
 */
export const FRESH_CANCEL_AFTER_MS = UNCLAIMED_SEND_MS + FUNCTIONS.sender.timeoutSeconds * 1000 + 5_000;

/** Whether the record's current copy has claimed the right to send (its `generation`, or a newer one). */
export const isClaimed = (r: Pick<MessageRecord, 'claimedGeneration' | 'generation'>): boolean =>
  r.claimedGeneration !== undefined && r.claimedGeneration >= r.generation;

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
  /** Failed attempts of the message so far, this one included (across copies): decides whether it is listed. */
  number: number;
  /** When it started (ISO time). */
  startedAt: string;
  /**
   * True when it may have reached WeCom and no answer was recorded: `message/send` was called and its answer is
   * missing (a timeout, a lost answer). False when it certainly did not reach WeCom (WeCom answered an error, or it
   * failed before `message/send` was called).
   */
  inDoubt: boolean;
  /** The message was in doubt already before this attempt (the queue body's marker); undefined when it was not. */
  earlierInDoubt: InDoubt | undefined;
  /** Short cause for the event list: `errcode 45033`, `ECONNRESET`. */
  detail: string;
}

/** Retries and deferrals listed in a record's events; later ones are counted (StatusChange `eventMode`). */
export const MAX_LISTED_RETRIES = 20;
export const MAX_LISTED_DEFERRALS = 20;

/** Whether, and since when, the message is in doubt once this attempt failed. */
export const inDoubtAfter = (a: FailedAttempt): InDoubt | undefined =>
  a.earlierInDoubt ?? (a.inDoubt ? { since: a.startedAt } : undefined);

const attemptFields = (a: FailedAttempt) => {
  const inDoubt = inDoubtAfter(a);
  return {
    attemptsDelta: 1,
    missed: a.inDoubt ? (false as const) : { receive: a.receive },
    // This attempt is in doubt, or ran with the check because an earlier one was: sticky.
    ...(inDoubt ? { inDoubt } : {}),
  };
};

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
  /** `part`: the recipients of this send, when the message went out in parts (this is the last one). */
  send: (at: string, receipt: WecomReceipt, part?: Omit<SentPart, 'sentAt' | 'wecom'>): StatusChange => ({
    ...change('send', at, sentEvent(at, receipt)),
    sentAt: at,
    wecom: receipt,
    attemptsDelta: 1,
    ...(part ? { part: { ...part, sentAt: at, wecom: receipt } } : {}),
  }),
  /**
   * Some recipients got the message (`touser`); `waiting` others wait for their slots in the copy of generation
   * `generation` (absent: the copy could not be queued, the message is retried and skips whoever got it).
   * `inDoubt`: this send retried an attempt whose answer was lost (kept like any such marker).
   */
  sendPart: (
    at: string,
    receipt: WecomReceipt,
    part: { touser: string[]; waiting: number; generation?: number; inDoubt?: InDoubt; segment?: number },
  ): StatusChange => ({
    ...change('sendPart', at, {
      type: 'part_sent',
      detail: `msgid ${receipt.msgid} to ${part.touser.length}; ${part.waiting} wait for their quota slots`,
    }),
    attemptsDelta: 1,
    part: {
      touser: part.touser,
      sentAt: at,
      wecom: receipt,
      ...(part.segment !== undefined ? { segment: part.segment } : {}),
    },
    ...(part.generation !== undefined ? { generation: part.generation, missed: { receive: 0 } } : {}),
    // A message waiting long in many parts lists the first ones (the parts themselves are all kept).
    eventMode: (part.generation ?? 0) > MAX_LISTED_DEFERRALS ? 'count' : 'append',
    ...(part.inDoubt !== undefined ? { inDoubt: part.inDoubt } : {}),
  }),
  /**
   * A part of split content (`segment`, 0-based, of `count`) reached every recipient (`touser`: this send's);
   * the next part waits in the copy of generation `generation` (absent: it could not be queued, and the retry
   * queues it without sending this part again). The message stays pending until its last part is sent (`send`).
   */
  sendSegment: (
    at: string,
    receipt: WecomReceipt,
    s: { segment: number; count: number; touser: string[]; generation?: number; inDoubt?: InDoubt },
  ): StatusChange => ({
    ...change('sendSegment', at, {
      type: 'content_part_sent',
      detail: `part ${s.segment + 1}/${s.count}: msgid ${receipt.msgid}`,
    }),
    attemptsDelta: 1,
    part: { touser: s.touser, sentAt: at, wecom: receipt, segment: s.segment, completes: true },
    // With the next part queued, a doubt about this one is settled: it must not fail the next part's redelivery.
    ...(s.generation !== undefined
      ? { generation: s.generation, missed: { receive: 0 }, clearInDoubt: true as const }
      : s.inDoubt !== undefined
        ? { inDoubt: s.inDoubt }
        : {}),
  }),
  /** `generation`: set when the retry travels as a fresh copy (its receive count starts again). */
  retry: (at: string, attempt: FailedAttempt, generation?: number): StatusChange => ({
    ...change('retry', at, { type: 'retry', detail: attempt.detail }),
    ...attemptFields(attempt),
    ...(generation !== undefined ? { generation, missed: attempt.inDoubt ? false : { receive: 0 } } : {}),
    eventMode: attempt.number > MAX_LISTED_RETRIES ? 'count' : 'append',
  }),
  /** The budget ran out with a failed attempt (`attempt`), or while waiting (no attempt: nothing was tried). */
  die: (at: string, attempt: FailedAttempt | undefined, error: MessageError): StatusChange => ({
    ...change('die', at, { type: 'dead', detail: attempt?.detail ?? error.code }),
    ...(attempt ? attemptFields(attempt) : {}),
    error,
  }),
  expire: (at: string, error: MessageError): StatusChange => ({
    ...change('expire', at, { type: 'expired', detail: error.code }),
    error,
  }),
  /**
   * `generation`: the new copy's; `inDoubt`: the message's marker (undefined: it is not in doubt); `detail` says
   * why and for how long.
   */
  defer: (at: string, generation: number, inDoubt: InDoubt | undefined, detail: string): StatusChange => ({
    ...change('defer', at, { type: 'deferred', detail }),
    generation,
    // Deferring proves this receive did not reach WeCom; the copy's own first receive may rely on that.
    missed: { receive: 0 },
    ...(inDoubt ? { inDoubt } : {}),
    eventMode: generation > MAX_LISTED_DEFERRALS ? 'count' : 'append',
  }),
  fail: (at: string, error: MessageError): StatusChange => ({
    ...change('fail', at, { type: 'failed', detail: error.code }),
    attemptsDelta: 1,
    error,
  }),
  recall: (at: string): StatusChange => change('recall', at, { type: 'recalled' }),
  /** `by`: the API key that canceled it. */
  cancel: (at: string, by: string): StatusChange => ({
    ...change('cancel', at, { type: 'canceled', detail: `by ${by}` }),
    unclaimed: { freshBefore: new Date(Date.parse(at) - FRESH_CANCEL_AFTER_MS).toISOString() },
  }),
  /** `generation`: the dead copy's, which must still be the record's. */
  deadLetter: (at: string, generation: number, error: MessageError): StatusChange => ({
    ...change('deadLetter', at, { type: 'dead', detail: error.code }),
    ifGeneration: generation,
    error,
  }),
  /**
   * `from`: the record's generation as read (the condition); `to`: the new copy's (above any copy seen). `inDoubt`:
   * since when the message is in doubt; `forced`: the operator sends it although WeCom's duplicate check no longer
   * covers that time, so protection counts from this redrive instead.
   */
  redrive: (
    at: string,
    r: { from: number; to: number; inDoubt: InDoubt; forced: boolean; detail: string },
  ): StatusChange => ({
    ...change('redrive', at, { type: 'redriven', detail: r.detail }),
    ifGeneration: r.from,
    generation: r.to,
    inDoubt: r.inDoubt,
    ...(r.forced ? { replaceInDoubt: true as const } : {}),
    // Whatever an earlier receive proved, this copy starts unproven.
    missed: false,
    clearError: true,
  }),
} satisfies Record<TransitionName, (...args: never[]) => StatusChange>;

/**
 * A change applied to a record in memory, exactly as the store applies it; undefined when the record's status is
 * not in `from` (the store's conditional write fails). The reference for the DynamoDB adapter and the test doubles.
 */
export function applyChange(record: MessageRecord, c: StatusChange): MessageRecord | undefined {
  if (!c.from.includes(record.status)) return undefined;
  if (c.ifGeneration !== undefined && record.generation !== c.ifGeneration) return undefined;
  if (c.unclaimed && !unclaimed(record, c.unclaimed.freshBefore)) return undefined;
  const r: MessageRecord = { ...record, status: c.to, updatedAt: c.at };
  if (c.eventMode === 'count') {
    r.lastEvent = c.event;
    r.eventsOmitted = (record.eventsOmitted ?? 0) + 1;
  } else r.events = [...(record.events ?? []), c.event];
  if (c.attemptsDelta) r.attempts += c.attemptsDelta;
  if (c.wecom) r.wecom = c.wecom;
  if (c.error) r.error = c.error;
  if (c.sentAt) r.sentAt = c.sentAt;
  if (c.generation !== undefined) r.generation = c.generation;
  if (c.inDoubt && (record.inDoubt === undefined || c.replaceInDoubt)) r.inDoubt = c.inDoubt;
  if (c.clearError) delete r.error;
  if (c.clearInDoubt) delete r.inDoubt;
  if (c.part) r.parts = [...(record.parts ?? []), c.part];
  if (c.missed === false) delete r.missed;
  else if (c.missed !== undefined) r.missed = c.missed;
  return r;
}

/** The `unclaimed` condition of a change, in memory (lib/store writes the same as a ConditionExpression). */
function unclaimed(r: MessageRecord, freshBefore: string): boolean {
  if (isClaimed(r) || r.inDoubt || r.parts?.length || r.firstDelivery) return false;
  return r.generation > 0 || r.status === STATUS.scheduled || r.createdAt < freshBefore;
}

/**
 * A record with its first delivery folded in: the `send` change applied as the store would have applied it, under
 * the same condition. A record that meanwhile became `failed`, `expired` or `recalled` stays so: a first delivery
 * never moves a status backwards.
 *
 * @example const record = withFirstDelivery(stored, { at, receipt: { msgid } });
 */
export function withFirstDelivery(record: MessageRecord, delivery: FirstDelivery | undefined): MessageRecord {
  if (!delivery) return record;
  const sent = applyChange(record, changes.send(delivery.at, delivery.receipt));
  return sent ? { ...sent, firstDelivery: delivery } : record;
}

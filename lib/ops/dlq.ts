import {
  changes,
  decodeQueuedMessage,
  type InDoubt,
  type MessageEvent,
  type MessageRecord,
  type MessageStatus,
  PENDING_STATUSES,
  type QueuedMessage,
  STATUS,
} from '#lib/model/index.js';
import type { DeadLetter, DeadLetterQueue, MessageQueue } from '#lib/queue/index.js';
import type { LaneName } from '#lib/resources/index.js';
import { pastProtection, protectionSecondsOf } from '#lib/sender/deadline.js';
import type { MessageStore } from '#lib/store/index.js';

/**
 * The operator's way back from a dead-letter queue (`wecom-gateway dlq list|redrive`). A message lands in a lane's
 * DLQ when the sender could not finish it `maxReceiveCount` times (a crash, a Lambda timeout): its record still says
 * `queued` or `deferred`, and one of those attempts may have reached WeCom. Listing makes the record say `dead`;
 * a redrive puts the message back the way the sender's own deferred copies go (a fresh copy, generation + 1, sent
 * with WeCom's duplicate check), never as a raw SQS move, so a message WeCom already took is not shown twice.
 */

export interface DlqDeps {
  deadLetters: DeadLetterQueue;
  lanes: Pick<MessageQueue, 'enqueue'>;
  messages: Pick<MessageStore, 'get' | 'transition'>;
  now?: () => number;
}

/**
 * How long a listed or redriven message stays hidden from other readers: long enough for one pass of the tool,
 * short enough that a tool that dies half-way hides nothing for long. Every message not deleted is shown again at
 * the end of the pass anyway.
 */
export const DLQ_HIDE_SECONDS = 60;

/** What a dead letter's record says about it. */
export type DeadLetterState =
  /** Nothing will send it: the record is (now) `dead`; a redrive brings it back. */
  | 'dead'
  /** The record ended otherwise (sent, recalled, failed, expired): the DLQ copy is a leftover. */
  | 'handled'
  /** A newer copy of the message owns the record (this one is stale). */
  | 'superseded'
  /** An earlier redrive recorded itself but may not have queued its copy: a redrive finishes it. */
  | 'redrive_interrupted'
  /** No record (its retention passed) or a body this version cannot read: left in the DLQ. */
  | 'unknown';

export interface DeadLetterView {
  lane: LaneName;
  sqsMessageId: string;
  state: DeadLetterState;
  /** The gateway's message id (`msg_…`), when the body is readable. */
  id?: string;
  /** The message's app, or for a group robot's message its robot (`robot`). */
  app?: string;
  robot?: string;
  /** The record's status after this pass. */
  status?: MessageStatus;
  /** True when this pass moved the record to `dead`. */
  reconciled: boolean;
  attempts?: number;
  /** The last error the record knows of (its error, or the detail of its last retry). */
  lastError?: string;
  /** Seconds since the gateway accepted the message. */
  ageSeconds?: number;
  /** Receives of this copy so far (lane and DLQ). */
  receives?: number;
  /** Why the state is what it is, for the operator. */
  note?: string;
  /** Whether a redrive (without `force`) would send it again: the same verdict {@link redriveDeadLetters} acts on. */
  redrivable: boolean;
  /** When not redrivable: why a redrive would be refused or pointless, in plain words. */
  notRedrivableReason?: string;
}

export type RedriveOutcome = 'redriven' | 'already_handled' | 'refused' | 'skipped' | 'failed';

export interface RedriveResult extends DeadLetterView {
  outcome: RedriveOutcome;
  detail: string;
}

const DONE: ReadonlySet<MessageStatus> = new Set([
  STATUS.sent,
  STATUS.recalled,
  STATUS.failed,
  STATUS.expired,
]);

interface Examined {
  letter: DeadLetter;
  view: DeadLetterView;
  msg?: QueuedMessage;
  record?: MessageRecord;
}

/** Which dead letters a pass takes: the others are not examined, changed or returned. */
export interface DeadLetterFilter {
  /** Only these gateway ids (`msg_…`). */
  ids?: readonly string[];
  /**
   * Only messages of these apps (from the message body): for a caller who may see only some apps. A body that
   * cannot be read names no app, so such a filter never takes it.
   */
  apps?: readonly string[];
  /** With `apps`: the robots whose messages the caller may also see. */
  robots?: readonly string[];
}

function filterOf(opts: DeadLetterFilter): (letter: DeadLetter) => boolean {
  const ids = opts.ids ? new Set(opts.ids) : undefined;
  const apps = opts.apps ? new Set(opts.apps) : undefined;
  const robots = new Set(opts.robots ?? []);
  if (!ids && !apps) return () => true;
  const visible = (msg: QueuedMessage) =>
    !apps || (msg.robot !== undefined ? robots.has(msg.robot) : apps.has(msg.app));
  return (letter) => {
    const msg = decodeQueuedMessage(letter.body);
    return msg !== undefined && (!ids || ids.has(msg.id)) && visible(msg);
  };
}

const nowOf = (deps: DlqDeps): number => (deps.now ?? Date.now)();

/** The newest event of a record: its last listed one, or the counted `lastEvent` when that is newer. */
function newestEvent(r: MessageRecord): MessageEvent | undefined {
  const listed = r.events?.at(-1);
  return r.lastEvent && (!listed || r.lastEvent.at >= listed.at) ? r.lastEvent : listed;
}

function lastErrorOf(r: MessageRecord): string | undefined {
  if (r.error && r.error.code !== DEAD_LETTERED) return `${r.error.code}: ${r.error.message}`;
  const events = [...(r.events ?? []), ...(r.lastEvent ? [r.lastEvent] : [])];
  const retry = events.filter((e) => e.type === 'retry').at(-1);
  return retry?.detail ?? (r.error ? undefined : 'none recorded (the sender stopped without an answer)');
}

const DEAD_LETTERED = 'dead_lettered';

function stateOf(msg: QueuedMessage, record: MessageRecord): { state: DeadLetterState; note?: string } {
  if (DONE.has(record.status)) return { state: 'handled', note: `already ${record.status}` };
  if (record.status === STATUS.dead) return { state: 'dead' };
  if (record.generation <= msg.generation) return { state: 'dead' };
  if (newestEvent(record)?.type === 'redriven')
    return { state: 'redrive_interrupted', note: 'redriven, but its copy may not have been queued' };
  return {
    state: 'superseded',
    note: `a newer copy (generation ${record.generation}) is ${record.status}; this one is stale`,
  };
}

async function examine(deps: DlqDeps, lane: LaneName, letter: DeadLetter): Promise<Examined> {
  const base = {
    lane,
    sqsMessageId: letter.messageId,
    reconciled: false,
    ...(letter.receiveCount !== undefined ? { receives: letter.receiveCount } : {}),
  };
  const msg = decodeQueuedMessage(letter.body);
  if (!msg) {
    const note = 'unreadable body (left in the DLQ)';
    return { letter, view: withVerdict({ ...base, state: 'unknown', note }, { kind: 'skip', reason: note }) };
  }
  const facts = {
    ...base,
    id: msg.id,
    ...(msg.robot !== undefined ? { robot: msg.robot } : { app: msg.app }),
    ageSeconds: Math.max(0, Math.round((nowOf(deps) - Date.parse(msg.createdAt)) / 1000)),
  };
  const record = await deps.messages.get(msg.id);
  if (!record) {
    const note = 'no record (its retention passed?); left in the DLQ';
    return {
      letter,
      msg,
      view: withVerdict({ ...facts, state: 'unknown', note }, { kind: 'skip', reason: note }),
    };
  }
  const { state, note } = stateOf(msg, record);
  const lastError = lastErrorOf(record);
  const view = {
    ...facts,
    state,
    status: record.status,
    attempts: record.attempts,
    ...(lastError ? { lastError } : {}),
    ...(note ? { note } : {}),
  };
  return {
    letter,
    msg,
    record,
    view: withVerdict(view, planRedrive(view, msg, record, letter, nowOf(deps))),
  };
}

/** What a redrive would do with a dead letter: one verdict for the listing's `redrivable` and for the redrive. */
type RedrivePlan =
  /** Unreadable, or no record: left in the DLQ. */
  | { kind: 'skip'; reason: string }
  /** Ended, or a newer copy owns the record: only the leftover DLQ copy goes. */
  | { kind: 'leftover'; reason: string }
  /** An earlier redrive moved the record but may not have queued its copy. */
  | { kind: 'finish' }
  /** Sent again as a fresh copy; `unprotected`: past WeCom's duplicate check, refused unless forced. */
  | {
      kind: 'resend';
      since: string;
      generation: number;
      copy: QueuedMessage & { inDoubt: InDoubt };
      unprotected: boolean;
      ttlPassed: boolean;
    };

const earliest = (...times: (string | undefined)[]): string | undefined =>
  times.filter((t): t is string => t !== undefined).sort()[0];

function planRedrive(
  view: Pick<DeadLetterView, 'state' | 'note' | 'lane'>,
  msg: QueuedMessage,
  record: MessageRecord,
  letter: DeadLetter,
  now: number,
): RedrivePlan {
  if (view.state === 'handled')
    return {
      kind: 'leftover',
      reason: `already ${record.status}: a redrive only removes its leftover DLQ copy`,
    };
  if (view.state === 'superseded')
    return { kind: 'leftover', reason: `${view.note}: a redrive only removes this leftover DLQ copy` };
  if (view.state === 'redrive_interrupted') return { kind: 'finish' };
  // Since when the message is in doubt: no attempt of this copy began before it was sent.
  const since =
    earliest(
      record.inDoubt?.since,
      msg.inDoubt?.since,
      letter.sentAtMs !== undefined ? new Date(letter.sentAtMs).toISOString() : msg.createdAt,
    ) ?? msg.createdAt;
  const generation = Math.max(record.generation, msg.generation, record.claimedGeneration ?? -1) + 1;
  const copy = redrivenCopy(msg, generation, since, new Date(now).toISOString());
  const ttl = msg.request.ttlSeconds;
  return {
    kind: 'resend',
    since,
    generation,
    copy,
    unprotected: pastProtection(copy, since, now),
    ttlPassed: ttl !== undefined && Date.parse(msg.createdAt) + ttl * 1000 <= now,
  };
}

/** Why a redrive past WeCom's duplicate check is refused (the redrive's detail and the listing's reason). */
const unprotectedReason = (plan: Extract<RedrivePlan, { kind: 'resend' }>): string =>
  `an attempt from ${plan.since} may have reached WeCom, and WeCom's duplicate check (${protectionSecondsOf(plan.copy)} s) no longer covers it: a resend could arrive twice`;

function withVerdict(view: Omit<DeadLetterView, 'redrivable'>, plan: RedrivePlan): DeadLetterView {
  const reason =
    plan.kind === 'skip' || plan.kind === 'leftover'
      ? plan.reason
      : plan.kind === 'resend' && plan.unprotected
        ? `${unprotectedReason(plan)}; a redrive is refused unless forced`
        : plan.kind === 'resend' && plan.ttlPassed
          ? 'its ttl_seconds has passed: a redrive would only mark it expired'
          : undefined;
  return reason === undefined
    ? { ...view, redrivable: true }
    : { ...view, redrivable: false, notRedrivableReason: reason };
}

/**
 * Shows up to `max` messages of the lane's DLQ and makes each record whose current copy is there say `dead` (a
 * conditional change at that copy's generation; a record that ended otherwise, or that a newer copy owns, is left
 * alone). Nothing is deleted: every message is shown again when the listing ends. With `ids` or `apps`, the other
 * messages read are neither examined nor changed nor shown.
 *
 * @example const dead = await listDeadLetters(deps, { lane: 'normal', max: 50 });
 */
export async function listDeadLetters(
  deps: DlqDeps,
  opts: DeadLetterFilter & { lane: LaneName; max: number; progress?: (done: number, total: number) => void },
): Promise<DeadLetterView[]> {
  const letters = await deps.deadLetters.receive(opts.lane, opts.max, DLQ_HIDE_SECONDS);
  try {
    const chosen = letters.filter(filterOf(opts));
    const views: DeadLetterView[] = [];
    for (const letter of chosen) {
      const seen = await examine(deps, opts.lane, letter);
      views.push(await reconcile(deps, seen));
      opts.progress?.(views.length, chosen.length);
    }
    return views;
  } finally {
    await deps.deadLetters.release(
      opts.lane,
      letters.map((l) => l.receiptHandle),
    );
  }
}

async function reconcile(deps: DlqDeps, { msg, record, view, letter }: Examined): Promise<DeadLetterView> {
  if (!msg || !record || view.state !== 'dead' || !PENDING_STATUSES.includes(record.status)) return view;
  const receives = letter.receiveCount !== undefined ? ` after ${letter.receiveCount} receives` : '';
  const moved = await deps.messages.transition(
    msg.id,
    changes.deadLetter(new Date(nowOf(deps)).toISOString(), record.generation, {
      code: DEAD_LETTERED,
      message: `in the ${view.lane} lane's dead-letter queue${receives}: the sender could not finish it (a crash or a timeout); \`wecom-gateway dlq redrive\` sends it again`,
    }),
  );
  if (moved) return { ...view, status: STATUS.dead, reconciled: true };
  // Changed meanwhile (a late copy sent it, a redrive ran): show what it is now.
  const fresh = await examine(deps, view.lane, letter);
  return fresh.view;
}

export interface RedriveOptions extends DeadLetterFilter {
  lane: LaneName;
  max: number;
  /** Redrive even a message WeCom's duplicate check no longer covers (it may then arrive twice). */
  force?: boolean;
  progress?: (done: number, total: number, last: RedriveResult) => void;
}

/**
 * Brings messages of the lane's DLQ back through the gateway's own path. Per message: a record that ended
 * (sent, recalled, failed, expired) or that a newer copy owns only loses its leftover DLQ copy; otherwise the
 * record goes back to `queued` (generation + 1, a `redriven` event, marked as possibly delivered), a copy goes to
 * the lane exactly as the sender's deferred copies do, and the DLQ copy is deleted. A message whose possible
 * delivery lies further back than WeCom's duplicate-check interval is refused unless `force`: WeCom would no longer
 * drop a repeat. Whatever is not deleted is shown again in the DLQ at the end; with `ids` or `apps`, the other
 * messages read are left untouched.
 *
 * @example const results = await redriveDeadLetters(deps, { lane: 'high', max: 100 });
 */
export async function redriveDeadLetters(deps: DlqDeps, opts: RedriveOptions): Promise<RedriveResult[]> {
  const letters = await deps.deadLetters.receive(opts.lane, opts.max, DLQ_HIDE_SECONDS);
  const results: RedriveResult[] = [];
  const deleted = new Set<string>();
  try {
    const chosen: Examined[] = [];
    for (const letter of letters.filter(filterOf(opts))) chosen.push(await examine(deps, opts.lane, letter));
    for (const seen of chosen) {
      const result = await redriveOne(deps, seen, opts.force === true).catch(
        (err: unknown): RedriveResult => ({
          ...seen.view,
          outcome: 'failed',
          detail: `${err instanceof Error ? err.message : String(err)}; left in the DLQ, run again`,
        }),
      );
      if (result.outcome === 'redriven' || result.outcome === 'already_handled') {
        await deps.deadLetters.delete(opts.lane, seen.letter.receiptHandle).then(
          () => deleted.add(seen.letter.receiptHandle),
          (err: unknown) => {
            result.detail += `; its DLQ copy could not be deleted (${err instanceof Error ? err.message : String(err)}): a later run finds it handled`;
          },
        );
      }
      results.push(result);
      opts.progress?.(results.length, chosen.length, result);
    }
    return results;
  } finally {
    await deps.deadLetters.release(
      opts.lane,
      letters.map((l) => l.receiptHandle).filter((h) => !deleted.has(h)),
    );
  }
}

async function redriveOne(deps: DlqDeps, seen: Examined, force: boolean): Promise<RedriveResult> {
  const { msg, record, view, letter } = seen;
  const result = (outcome: RedriveOutcome, detail: string): RedriveResult => ({ ...view, outcome, detail });
  if (!msg || !record) return result('skipped', view.note ?? 'not readable');
  const now = nowOf(deps);
  const at = new Date(now).toISOString();
  const plan = planRedrive(view, msg, record, letter, now);
  if (plan.kind === 'skip') return result('skipped', plan.reason);
  if (plan.kind === 'leftover') return result('already_handled', plan.reason);

  if (plan.kind === 'finish') {
    // The record already says redriven (generation G); a second copy of G is harmless: only one claims the send.
    const copy = redrivenCopy(msg, record.generation, record.inDoubt?.since ?? msg.createdAt, at);
    await deps.lanes.enqueue(view.lane, copy);
    return { ...result('redriven', 'finished an interrupted redrive'), status: record.status };
  }

  const { generation, unprotected, ttlPassed } = plan;
  if (unprotected && !force) {
    return result(
      'refused',
      `${unprotectedReason(plan)}. Left in the DLQ; a forced redrive (--force; over HTTP {"force": true}) sends it anyway`,
    );
  }
  // Forced: the operator accepts a possible repeat; the duplicate check protects the resends after this one.
  const copy = unprotected ? redrivenCopy(msg, generation, at, at) : plan.copy;
  const moved = await deps.messages.transition(
    msg.id,
    changes.redrive(at, {
      from: record.generation,
      to: generation,
      inDoubt: copy.inDoubt,
      forced: unprotected,
      detail: `from the ${view.lane} lane's dead-letter queue${unprotected ? ' (forced)' : ''}`,
    }),
  );
  if (!moved) return result('skipped', 'its record changed meanwhile; left in the DLQ, run again');
  await deps.lanes.enqueue(view.lane, copy);
  const notes = [
    unprotected ? 'forced: it may arrive twice' : 'sent with WeCom duplicate check',
    ttlPassed ? 'its ttl_seconds has passed, so the sender will mark it expired' : undefined,
  ].filter(Boolean);
  return { ...result('redriven', notes.join('; ')), status: STATUS.queued };
}

/** The copy a redrive queues: like a deferred copy, in doubt since `since`, budget from `at`. */
function redrivenCopy(
  msg: QueuedMessage,
  generation: number,
  since: string,
  at: string,
): QueuedMessage & { inDoubt: InDoubt } {
  const { priorFailures: _restart, ...rest } = msg;
  return { ...rest, generation, inDoubt: { since }, redrivenAt: at };
}

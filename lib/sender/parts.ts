import type { AppConfig } from '#lib/config/index.js';
import { foldUserId, type Recipients } from '#lib/messages/index.js';
import { changes, type MessageRecord, type QueuedMessage, receiptOf, segmentOf } from '#lib/model/index.js';
import {
  compactHeld,
  earliestHeld,
  type HeldReservations,
  heldFor,
  type SendDecision,
} from '#lib/quota/index.js';
import { type SendResponse, WecomApiError, WecomError } from '#lib/wecom/index.js';
import { DEFAULT_RETRY, fullJitterSeconds } from './backoff.js';
import { type BroadcastSizing, broadcastTargets, NO_BROADCASTS, sizeBroadcasts } from './demand.js';
import { defer, enqueueCopy } from './outcomes.js';
import { type Attempt, nowOf, type Outcome, type SenderDeps } from './types.js';

/** The members left for a later part after this send, as the client spelled them, with their held slots. */
export interface RestOfMessage {
  touser: string[];
  held: HeldReservations;
  wakeAtMs: number;
}

/**
 * Who an earlier part of this message already reached, from the record a redelivery reads anyway (a copy whose part
 * was sent but whose remainder could not be queued comes back whole). A first delivery has none to skip. For split
 * content, only the sends of the copy's own part of the content (`segment`) count.
 */
export function sentBefore(stored: MessageRecord | undefined, segment = 0): Set<string> {
  const sameSegment = (stored?.parts ?? []).filter((p) => (p.segment ?? 0) === segment);
  return new Set(sameSegment.flatMap((p) => p.touser.map(foldUserId)));
}

/**
 * What the send's parties, tags and `@all` cost: their members through the contacts API (cached, lib/wecom
 * directory.ts), or the app's configured sizes where it may not read them. Failures are WeCom errors (lib/wecom), or
 * `WecomApiError(-1)` for anything else: nothing was sent, so nothing may have reached WeCom.
 */
export async function sizeFor(
  deps: SenderDeps,
  app: AppConfig,
  recipients: Recipients,
): Promise<BroadcastSizing> {
  const targets = broadcastTargets(recipients);
  if (targets.length === 0) return NO_BROADCASTS;
  const directory = deps.broadcasts;
  if (!directory)
    return sizeBroadcasts(
      targets,
      targets.map(() => ({ status: 'forbidden', errcode: 0 })),
      app.broadcast,
    );
  try {
    const reaches = await deps.tokens.withToken(app, (token) =>
      Promise.all(targets.map((t) => directory.reach(app, t, token))),
    );
    return sizeBroadcasts(targets, reaches, app.broadcast);
  } catch (err) {
    // WeCom's answers (a wrong secret pauses the app like a failed send), a remembered gettoken failure with its
    // retry time, another container still resolving: as they are. Anything else: retried as WeCom's -1.
    if (err instanceof WecomError) throw err;
    throw new WecomApiError(-1, `contacts: ${err instanceof Error ? err.message : String(err)}`, 'contacts');
  }
}

/** The members a decision leaves for later, or (for a copy that had to resend `first` alone) the rest of its part. */
export function restOf(
  msg: QueuedMessage,
  recipients: Recipients,
  decision: SendDecision,
  nowMs: number,
): RestOfMessage | undefined {
  const spelled = new Map(recipients.touser.map((u) => [foldUserId(u), u]));
  if (decision.rest) {
    return {
      touser: decision.rest.members.map((m) => spelled.get(m) ?? m),
      held: decision.rest.held,
      wakeAtMs: decision.rest.wakeAtMs,
    };
  }
  const first = msg.part?.first;
  if (!first || !msg.part?.touser) return undefined;
  const sent = new Set(first.map(foldUserId));
  const touser = msg.part.touser.filter((u) => !sent.has(foldUserId(u)));
  if (touser.length === 0) return undefined;
  const held = heldFor(msg.part.reservations, touser.map(foldUserId));
  return { touser, held, wakeAtMs: earliestHeld(held) ?? nowMs };
}

/**
 * Some recipients got the message; the rest wait for their slots in a copy of their own (generation + 1), holding
 * them. The part is recorded with the copy's generation in one conditional write. If the copy cannot be queued,
 * the part is recorded without it and the received copy is retried: its redelivery skips whoever got it.
 */
export async function sentPart(
  a: Pick<Attempt, 'deps' | 'incoming' | 'msg' | 'log'>,
  sent: { response: SendResponse; touser: string[] },
  rest: RestOfMessage,
): Promise<Outcome> {
  const { deps, msg, log } = a;
  const at = new Date(nowOf(deps)).toISOString();
  // The rest is a request of its own, never attempted: whatever an earlier attempt left unknown is about another
  // request (recorded on the message), so the copy carries no such marker and may itself be split again.
  const { inDoubt, ...base } = msg;
  const reservations = compactHeld(rest.held);
  const copy: QueuedMessage = {
    ...base,
    generation: msg.generation + 1,
    part: { touser: rest.touser, ...(reservations ? { reservations } : {}) },
  };
  let generation: number | undefined = copy.generation;
  try {
    await enqueueCopy(a, copy, { atMs: rest.wakeAtMs, exact: reservations !== undefined });
  } catch (err) {
    log.error('sent a part, but could not queue the rest; the message is retried without its sent part', {
      err,
    });
    generation = undefined;
  }
  const segment = segmentOf(msg);
  const change = changes.sendPart(at, receiptOf(sent.response), {
    touser: sent.touser,
    ...(segment > 0 ? { segment } : {}),
    waiting: rest.touser.length,
    ...(generation !== undefined ? { generation } : {}),
    ...(inDoubt ? { inDoubt } : {}),
  });
  const recorded = await deps.messages.transition(msg.id, change).catch((err: unknown) => {
    log.error('could not record a sent part', { err });
    return false;
  });
  deps.metrics.count('SentPart');
  // Queued: done. Not queued: the retry must know who got it; if even that was not recorded, retrying would send
  // the part twice, so the rest is given up (logged above) rather than duplicated.
  if (generation !== undefined || !recorded) return 'ack';
  return 'retry';
}

/** A send to part of a copy's recipients that is in doubt: whom the copy sends to, whom it tried, what it holds. */
export interface SplitInDoubt {
  recipients: Recipients;
  /** The users of the send in doubt. */
  attempted: string[];
  /** The slots still reserved for the others. */
  held: HeldReservations;
}

/**
 * A part whose send is in doubt (timeout, lost answer): its retry must be the very same request, so the copy goes
 * back with `first` set to exactly these recipients (and the rest held as before), after a backoff.
 */
export async function retrySplit(
  a: Pick<Attempt, 'deps' | 'incoming' | 'msg' | 'startedAtMs'>,
  { recipients, attempted, held }: SplitInDoubt,
): Promise<Outcome> {
  const { deps, incoming: r, msg } = a;
  // A failed attempt like any other: the backoff keeps growing across copies (lib/sender outcomes `scheduleRetry`).
  const failures = (msg.priorFailures ?? 0) + r.receiveCount;
  const delay = fullJitterSeconds(failures, deps.retry ?? DEFAULT_RETRY, deps.random);
  const part = {
    touser: recipients.touser,
    first: attempted,
    ...(compactHeld(held) ? { reservations: held } : {}),
  };
  const inDoubt = msg.inDoubt ?? { since: new Date(a.startedAtMs).toISOString() };
  return defer(
    { ...a, msg: { ...msg, inDoubt, priorFailures: failures } },
    {
      untilMs: nowOf(deps) + delay * 1000,
      reason: 'a part may have reached WeCom; resent as the same request',
      part,
    },
  );
}

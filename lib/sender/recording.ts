import { channelKey } from '#lib/messages/index.js';
import {
  changes,
  type InDoubt,
  inDoubtOnRedelivery,
  type MessageRecord,
  receiptOf,
  segmentOf,
  TERMINAL_STATUSES,
} from '#lib/model/index.js';
import type { Logger } from '#lib/observability/index.js';
import type { SendResponse } from '#lib/wecom/index.js';
import { fail } from './outcomes.js';
import { type ChannelAttempt, nowOf, type Outcome, type Received } from './types.js';

/*
 * What both channels do around a send: decide whether a received copy may go (its redelivery proof), record a send
 * that was not a first delivery, release a probe that learned nothing, and end a message whose outcome is unknown.
 */

/** The probe learned nothing about the pause's cause (nothing was sent): the next message probes. */
export async function probeInconclusive(a: Pick<ChannelAttempt, 'deps' | 'target' | 'gate'>): Promise<void> {
  if (a.gate.state === 'probe')
    await a.deps.pauses.probeInconclusive(channelKey(a.target.channel), a.gate.pause).catch(() => undefined);
}

/**
 * The message is in doubt, but a resend now would fall outside WeCom's duplicate-check interval (or, for a robot,
 * no duplicate check covers it at all) and could be delivered twice: the message is not resent, and fails with a
 * code that says its delivery is unknown.
 */
export async function outcomeUnknown(a: ChannelAttempt): Promise<Outcome> {
  await probeInconclusive(a);
  const robot = a.target.channel.kind === 'robot';
  a.log.warn(
    robot
      ? "not resent: an earlier attempt may have reached WeCom and a robot's webhook has no duplicate check"
      : 'not resent: an earlier attempt may have reached WeCom and the duplicate check no longer covers it',
  );
  const lost = `an attempt that started at ${a.msg.inDoubt?.since} may have reached WeCom (its answer was lost)`;
  await fail(a, {
    code: 'delivery_unknown',
    message: robot
      ? `${lost}; a robot's webhook has no duplicate check, so a resend might show the group the message twice: it was not resent`
      : `${lost}; a resend now would be outside WeCom's duplicate check interval and might be delivered twice, so it was not resent`,
  });
  return 'ack';
}

/** Records a redelivered or deferred message `sent` (with `touser`: the last part of a message sent in parts). */
export async function recordSent(
  a: Pick<ChannelAttempt, 'deps' | 'msg' | 'log'>,
  response: SendResponse,
  touser?: string[],
): Promise<Outcome> {
  const { deps, msg, log } = a;
  const at = new Date(nowOf(deps)).toISOString();
  try {
    const segment = segmentOf(msg);
    await deps.messages.transition(
      msg.id,
      changes.send(
        at,
        receiptOf(response),
        touser ? { touser, ...(segment > 0 ? { segment } : {}) } : undefined,
      ),
    );
    return 'ack';
  } catch (err) {
    // Sent but not recorded: SQS redelivers after the visibility timeout, the redelivery finds no proof that
    // this attempt missed WeCom, and resends the same request, which WeCom's duplicate check drops.
    log.error('sent, but recording it failed; redelivery will resend with duplicate check', { err });
    return 'retry';
  }
}

/**
 * Whether the message is in doubt (`inDoubt`: since its first attempt in doubt started), or `ack` when this copy
 * must not go out at all: its message was already handled, or another copy of its deferral sends it. A redelivery is
 * the only case that pays a read (the record's redelivery proof, lib/model `inDoubtOnRedelivery`; `stored` also
 * tells who an earlier part reached); a first delivery trusts its body (a deferred copy carries what the attempts
 * before its deferral left in doubt).
 */
export async function duplicateCheckFor(
  c: Received,
  log: Logger,
): Promise<{ inDoubt?: InDoubt; stored?: MessageRecord } | 'ack'> {
  const { deps, incoming: r, msg } = c;
  const carried = msg.inDoubt?.since;
  if (r.receiveCount > 1) {
    const stored = await deps.messages.get(msg.id);
    if (!stored) {
      log.warn('record gone (retention expired?); dropping redelivered message');
      return 'ack';
    }
    if (TERMINAL_STATUSES.has(stored.status) || stored.generation > msg.generation) {
      deps.metrics.count('DuplicateSuppressed');
      log.info('already handled; acknowledged without calling WeCom', { status: stored.status });
      return 'ack';
    }
    if (!inDoubtOnRedelivery(stored, msg.generation, r.receiveCount)) return { stored };
    // Without a recorded failure, the previous receive of this copy (a crash, an unrecorded send) is the one in
    // doubt: no earlier than this copy's first receive.
    const unrecorded = stored.inDoubt
      ? undefined
      : new Date(r.firstReceivedAtMs ?? Date.parse(msg.createdAt)).toISOString();
    return {
      inDoubt: { since: earliest(stored.inDoubt?.since, carried, unrecorded) ?? msg.createdAt },
      stored,
    };
  }
  if (msg.generation > 0 && !(await deps.messages.claimCopy(msg.id, msg.generation))) {
    // Two copies of one deferral (an SDK retry of a SendMessage that had succeeded): only one may send.
    deps.metrics.count('DuplicateSuppressed');
    log.info('another copy of this deferral is already being handled; acknowledged');
    return 'ack';
  }
  return msg.inDoubt ? { inDoubt: msg.inDoubt } : {};
}

const earliest = (...times: (string | undefined)[]): string | undefined =>
  times.filter((t): t is string => t !== undefined).sort()[0];

import {
  type InDoubt,
  inDoubtOnRedelivery,
  type MessageRecord,
  TERMINAL_STATUSES,
} from '#lib/model/index.js';
import type { Logger } from '#lib/observability/index.js';
import type { Received } from './types.js';

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

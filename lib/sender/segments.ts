import { changes, type QueuedMessage, receiptOf, segmentCount, segmentOf } from '#lib/model/index.js';
import type { SendResponse } from '#lib/wecom/index.js';
import { enqueueCopy } from './outcomes.js';
import { type ChannelAttempt, nowOf, type Outcome } from './types.js';

/*
 * Split content (MessageRequest `segments`, the API's "parts") goes out one part after another: a copy sends one
 * part to every recipient, through the quota guard like any message, and only then queues a copy for the next part
 * (generation + 1). So every member gets part 1 before part 2, and each part costs a send and a person-time per
 * member, as WeCom counts it.
 */

/**
 * This copy's part reached every recipient (`sent`: the send that completed it; absent when an earlier receive
 * sent it and only the next copy is missing): the next part gets its copy, at once, and the part is recorded with
 * that copy's generation in one conditional write. If the copy cannot be queued, the part is recorded without it
 * and the received copy is retried; its redelivery finds the part sent to everyone and only queues the next one.
 */
export async function nextSegment(
  a: Pick<ChannelAttempt, 'deps' | 'incoming' | 'log'> & { msg: QueuedMessage },
  sent: { response: SendResponse; touser: string[] } | undefined,
): Promise<Outcome> {
  const { deps, msg, log } = a;
  // The next part is a request of its own, never attempted (as the rest of a part's recipients, parts.ts).
  const { inDoubt, part: _part, notBeforeMs: _wait, ...base } = msg;
  const copy: QueuedMessage = { ...base, generation: msg.generation + 1, segment: segmentOf(msg) + 1 };
  let generation: number | undefined = copy.generation;
  try {
    await enqueueCopy(a, copy, { atMs: nowOf(deps), exact: true });
  } catch (err) {
    log.error('sent a part of split content, but could not queue the next; the copy is retried', { err });
    generation = undefined;
  }
  if (!sent) {
    if (generation === undefined) return 'retry';
    const recorded = await deps.messages
      .transition(
        msg.id,
        changes.defer(
          new Date(nowOf(deps)).toISOString(),
          generation,
          inDoubt,
          `part ${segmentOf(msg) + 1}/${segmentCount(msg.request)} reached everyone; the next part is queued`,
        ),
      )
      .catch((err: unknown) => {
        log.error('could not record the next part’s copy', { err });
        return false;
      });
    return recorded ? 'ack' : 'retry';
  }
  const change = changes.sendSegment(new Date(nowOf(deps)).toISOString(), receiptOf(sent.response), {
    segment: segmentOf(msg),
    count: segmentCount(msg.request),
    touser: sent.touser,
    ...(generation !== undefined ? { generation } : {}),
    ...(inDoubt ? { inDoubt } : {}),
  });
  const recorded = await deps.messages.transition(msg.id, change).catch((err: unknown) => {
    log.error('could not record a sent part of split content', { err });
    return false;
  });
  deps.metrics.count('SentPart');
  if (generation !== undefined) return 'ack';
  // Recorded: the redelivery finds this part complete and only queues the next one.
  if (recorded) return 'retry';
  // Neither: the redelivery resends this part as the same request, which WeCom's duplicate check drops. Without
  // the check (opted out, or a robot's message: its webhook has none) it would be shown twice, so the rest of the
  // message is given up instead (and logged).
  if (msg.robot !== undefined || msg.duplicateCheckSeconds === 0) {
    log.error('gave up the rest of a split message: its next part could not be queued nor this one recorded');
    return 'ack';
  }
  return 'retry';
}

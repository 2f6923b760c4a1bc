import { STATUS, toQueuedMessage } from '#lib/model/index.js';
import { MAX_DELAY_SECONDS } from '#lib/queue/index.js';
import { type IncomingRecord, nowOf, type Outcome, type SenderDeps } from './types.js';

/**
 * A release timer fired for a message scheduled far ahead (lib/model `ReleaseNotice`): its copy goes to its lane
 * with the SQS delay left to its release, so it arrives on time to the second whatever the timer's own precision.
 * A message no longer `scheduled` (canceled, or released by a duplicate notice that was already sent) needs nothing;
 * duplicate notices queue duplicate copies of one generation, and only one of them may claim the right to send.
 */
export async function release(deps: SenderDeps, r: IncomingRecord, id: string): Promise<Outcome> {
  const log = deps.logger.child({ messageId: id });
  const stored = await deps.messages.get(id);
  if (!stored?.schedule || stored.status !== STATUS.scheduled) {
    log.info('release notice for a message no longer scheduled; nothing to do', { status: stored?.status });
    return 'ack';
  }
  const releaseMs = Date.parse(stored.schedule.releaseAt);
  const delay = Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((releaseMs - nowOf(deps)) / 1000)));
  try {
    await deps.queue.enqueue(stored.priority, toQueuedMessage(stored), delay);
  } catch (err) {
    log.warn('could not queue the released copy; the notice comes again', { err });
    await deps.queue.retryAfter(r.lane, r.receiptHandle, 5).catch(() => undefined);
    return 'retry';
  }
  log.info('released', { delaySeconds: delay });
  return 'ack';
}

import type { ApiKeyConfig } from '#lib/config/index.js';
import {
  changes,
  FRESH_CANCEL_AFTER_MS,
  isClaimed,
  type MessageRecord,
  STATUS,
  TERMINAL_STATUSES,
} from '#lib/model/index.js';
import { readOwn } from './access.js';
import { StateConflictError } from './errors.js';
import { releaseVia } from './schedule.js';
import type { IngestDeps } from './types.js';

/**
 * Why a message is no longer cancelable, naming its status, or undefined when it is. `sending` is not a stored
 * status: a copy holds the claim to send, an attempt may have reached WeCom, or a message sent at once is still in
 * its first moments, when its copy may call WeCom without claiming (lib/model `FRESH_CANCEL_AFTER_MS`).
 */
function refusal(r: MessageRecord, nowMs: number): string | undefined {
  if (TERMINAL_STATUSES.has(r.status)) {
    return r.status === STATUS.sent
      ? 'it is sent; recall it (POST /v1/messages/{id}/recall) to take it back from its recipients'
      : `it is ${r.status}`;
  }
  if (r.parts?.length) return 'it is sending: some recipients have it already';
  if (r.inDoubt) return 'it is sending: an attempt may have reached WeCom';
  if (isClaimed(r)) return 'it is sending';
  if (
    r.generation === 0 &&
    r.status !== STATUS.scheduled &&
    nowMs - Date.parse(r.createdAt) < FRESH_CANCEL_AFTER_MS
  ) {
    return 'it is sending: a message sent at once is in the sender’s hands for its first minute';
  }
  return undefined;
}

/** Whether acceptance set a release timer (a release beyond SQS's longest delay), so there may be one to remove. */
const hadTimer = (r: MessageRecord): boolean =>
  r.schedule !== undefined && releaseVia(r.schedule, Date.parse(r.createdAt)).kind === 'timer';

/**
 * DELETE /v1/messages/{id}: takes back a message that is `scheduled`, `queued` or `deferred` before it is sent
 * (docs/scheduling.md). One conditional write decides between the cancel and a copy that claims the right to send
 * (lib/model `changes.cancel`): a 200 means no copy will ever call WeCom with it. Its release timer, if any, is
 * removed (best effort: a timer that fires anyway finds the message canceled). Canceling a canceled message answers
 * 200 again; any other status is a 409 that names it.
 *
 * @example await cancelMessage(deps, apiKey, 'msg_01J…') // { id: 'msg_01J…', status: 'canceled' }
 */
export async function cancelMessage(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  id: string,
): Promise<{ id: string; status: 'canceled' }> {
  const record = await readOwn(deps, apiKey, id);
  const canceled = { id, status: 'canceled' as const };
  if (record.status === STATUS.canceled) return canceled;
  const now = (deps.now ?? Date.now)();
  const refused = refusal(record, now);
  if (refused) throw new StateConflictError('not_cancelable', `the message cannot be canceled: ${refused}`);
  const written = await deps.messages.transition(
    id,
    changes.cancel(new Date(now).toISOString(), apiKey.name),
  );
  if (!written) {
    // Something moved first: a copy claimed the right to send, or the message went on.
    const now2 = await deps.messages.get(id);
    if (now2?.status === STATUS.canceled) return canceled;
    const why = now2 ? (refusal(now2, now) ?? 'it is sending') : 'it is gone';
    throw new StateConflictError('not_cancelable', `the message cannot be canceled: ${why}`);
  }
  if (record.schedule && deps.timers && hadTimer(record)) {
    await deps.timers.clear(id).catch((err: unknown) => {
      deps.logger.warn('could not remove the release timer; it will find the message canceled', {
        err,
        messageId: id,
      });
    });
  }
  return canceled;
}

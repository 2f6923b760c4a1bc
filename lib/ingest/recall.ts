import type { ApiKeyConfig } from '#lib/config/index.js';

import { changes, STATUS } from '#lib/model/index.js';
import { WecomApiError } from '#lib/wecom/index.js';
import { readOwn } from './access.js';
import { RetryLaterError, StateConflictError } from './errors.js';
import type { IngestDeps } from './types.js';

/** WeCom `message/recall` only works within 24 h of sending (errcode 42052 after). */
const RECALL_WINDOW_MS = 24 * 3600_000;
/** WeCom: the message was sent more than 24 hours ago. */
const WECOM_RECALL_TOO_LATE = 42052;

/**
 * POST /v1/messages/{id}/recall: WeCom `message/recall` with the stored msgid, within 24 h of sending; a message sent
 * in parts (recipients that waited for their quota slots) has one msgid per part, and each is recalled. Recalling
 * an already recalled message answers 200 again (a retried recall must not fail).
 */
export async function recallMessage(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  id: string,
): Promise<{ status: 'recalled' }> {
  const record = await readOwn(deps, apiKey, id);
  if (record.robot !== undefined) {
    throw new StateConflictError(
      'not_recallable',
      "a robot's messages cannot be recalled: WeCom's robot webhook has no recall",
    );
  }
  if (record.status === STATUS.recalled) return { status: 'recalled' };
  const msgid = record.wecom?.msgid;
  if (record.status !== STATUS.sent || !msgid) {
    throw new StateConflictError(
      'not_recallable',
      `only sent messages can be recalled; this one is ${record.status}`,
    );
  }
  const now = (deps.now ?? Date.now)();
  const tooLate = () =>
    new StateConflictError(
      'recall_window_passed',
      'WeCom allows recalling a message only within 24 hours of sending',
    );
  if (record.sentAt && now - Date.parse(record.sentAt) > RECALL_WINDOW_MS) throw tooLate();
  const app = deps.config.apps[record.app];
  if (!app) throw new StateConflictError('app_not_configured', `app ${record.app} is no longer configured`);
  const msgids = [...new Set([...(record.parts ?? []).map((p) => p.wecom.msgid), msgid])];
  let recalled = 0;
  try {
    for (const m of msgids) {
      try {
        await deps.tokens.withToken(app, (token) => deps.wecom.recall(token, m));
        recalled++;
      } catch (err) {
        // An early part may be past WeCom's 24 hours while a later one is not.
        if (!(err instanceof WecomApiError && err.errcode === WECOM_RECALL_TOO_LATE && msgids.length > 1))
          throw err;
      }
    }
    if (recalled === 0) throw tooLate();
  } catch (err) {
    if (err instanceof StateConflictError) throw err;
    deps.logger.warn('recall failed', { err, messageId: id });
    if (err instanceof WecomApiError && err.errcode === WECOM_RECALL_TOO_LATE) throw tooLate();
    if (err instanceof WecomApiError && (err.errclass === 'permanent' || err.errclass === 'config')) {
      throw new StateConflictError(
        'wecom_recall_failed',
        `WeCom refused the recall: errcode ${err.errcode} ${err.errmsg}`,
      );
    }
    throw new RetryLaterError('WeCom could not recall the message right now; retry the recall');
  }
  if (record.firstDelivery) {
    // A first delivery is stored beside the record and folded in on read: write it into the record first, so the
    // recall (allowed from `sent` only) applies. Conditional like any change: a no-op when already written.
    await deps.messages.transition(id, changes.send(record.firstDelivery.at, record.firstDelivery.receipt));
  }
  await deps.messages.transition(id, changes.recall(new Date(now).toISOString()));
  return { status: 'recalled' };
}

import type { ApiKeyConfig } from '#lib/config/index.js';
import {
  type CardUpdate,
  cardTaskId,
  toWecomCardUpdateBody,
  validateCardUpdate,
} from '#lib/messages/index.js';
import { type MessageRecord, STATUS } from '#lib/model/index.js';
import type { CardCodeSource } from '#lib/store/index.js';
import { WecomApiError } from '#lib/wecom/index.js';
import { readOwn } from './access.js';
import { InvalidRequestError, RetryLaterError, StateConflictError } from './errors.js';
import type { IngestDeps } from './types.js';

/**
 * WeCom: "response_code的有效期是72小时" and each is usable once (更新模版卡片消息, path/94945). An older copy of the
 * send doc said 24 h; a code past its time is answered 60140, and the next one is tried.
 */
const CARD_CODE_TTL_MS = 72 * 3600_000;
/** WeCom: 无效的response_code (used already, or expired). */
const INVALID_RESPONSE_CODE = 60140;

interface Candidate {
  source: CardCodeSource;
  code: string;
  /** When WeCom handed it out (a click, or the send). */
  at: string;
}

/** The record's unspent codes, newest first: the one a click brought, then the send answer's. */
function candidates(record: MessageRecord, now: number): Candidate[] {
  const fresh = (at: string | undefined) => at !== undefined && now - Date.parse(at) < CARD_CODE_TTL_MS;
  const out: Candidate[] = [];
  if (record.cardCode && fresh(record.cardCode.at)) out.push({ source: 'event', ...record.cardCode });
  const sent = record.wecom?.response_code;
  if (sent && !record.sendCodeSpent && fresh(record.sentAt)) {
    out.push({ source: 'send', code: sent, at: record.sentAt as string });
  }
  return out;
}

/**
 * POST /v1/messages/{id}/card: WeCom `update_template_card` for a sent card, spending one of its stored
 * response_codes — the newest a button press brought, else the one the send answer carried. A code is claimed in
 * the store before WeCom sees it, so two updates at once never spend the same one; WeCom's answer decides whether
 * it is spent (success, 60140) or put back (any other error). Through the same WeCom client as recall.
 *
 * @example await updateCard(deps, apiKey, 'msg_01J…', { button: { replace_name: 'Approved by alice' } })
 */
export async function updateCard(
  deps: IngestDeps,
  apiKey: ApiKeyConfig,
  id: string,
  body: unknown,
): Promise<{ id: string; status: 'updated' }> {
  const record = await readOwn(deps, apiKey, id);
  const validated = validateCardUpdate(body);
  if (!validated.ok)
    throw new InvalidRequestError('invalid_request', 'the card update is invalid', validated.issues);
  if (record.robot !== undefined) {
    throw new StateConflictError(
      'not_updatable',
      "a robot's cards cannot be updated: only an app's interaction cards carry a response_code",
    );
  }
  if (record.status !== STATUS.sent || record.request.msgtype !== 'template_card') {
    throw new StateConflictError(
      'not_updatable',
      `only sent template cards can be updated; this message is a ${record.request.msgtype}, ${record.status}`,
    );
  }
  const app = deps.config.apps[record.app];
  if (!app) throw new StateConflictError('app_not_configured', `app ${record.app} is no longer configured`);
  const now = (deps.now ?? Date.now)();
  const codes = candidates(record, now);
  if (codes.length === 0) {
    throw new StateConflictError(
      'no_response_code',
      'no unspent response_code for this card: WeCom gives one with the send of an interaction card and one per ' +
        'button press, each usable once within 72 hours',
    );
  }
  for (const candidate of codes) {
    // Lost to a concurrent update: try the next code.
    if (!(await deps.cards.take(id, candidate.source, candidate.code))) continue;
    const wecomBody = toWecomCardUpdateBody(
      validated.value,
      app.agentId,
      candidate.code,
      cardTaskId(record.request),
    );
    try {
      await deps.tokens.withToken(app, (token) => deps.wecom.updateTemplateCard(token, wecomBody));
      // The timeline shows the update; the card is updated either way, so a failed note is only logged.
      await deps.messages
        .noteEvent(id, {
          at: new Date(now).toISOString(),
          type: 'card_updated',
          detail: updateDetail(validated.value),
        })
        .catch((err: unknown) => deps.logger.warn('could not note the card update', { err, messageId: id }));
      return { id, status: 'updated' };
    } catch (err) {
      deps.logger.warn('card update failed', { err, messageId: id, source: candidate.source });
      if (err instanceof WecomApiError && err.errcode === INVALID_RESPONSE_CODE) continue; // spent or expired
      await deps.cards.restore(id, candidate.source, candidate.code, candidate.at);
      if (err instanceof WecomApiError && (err.errclass === 'permanent' || err.errclass === 'config')) {
        throw new StateConflictError(
          'wecom_card_update_failed',
          `WeCom refused the card update: errcode ${err.errcode} ${err.errmsg}`,
        );
      }
      throw new RetryLaterError('WeCom could not update the card right now; retry');
    }
  }
  throw new StateConflictError(
    'response_code_invalid',
    'WeCom no longer accepts the stored response_codes (60140: used or expired); the next button press brings a new one',
  );
}

/**
 * The timeline's words for an update: the buttons' new text, or a new card of its type. The console reads the first
 * back (web/console/format.ts `cardUpdateOf`).
 */
export function updateDetail(update: CardUpdate): string {
  const whom = update.userids ? ` for ${update.userids.length} member(s)` : '';
  if ('button' in update) return `buttons replaced by “${update.button.replace_name}”${whom}`;
  return `replaced by a new ${String(update.template_card.card_type ?? 'template')} card${whom}`;
}

import * as v from 'valibot';
import { isPlainObject } from '#lib/util/index.js';
import { EMPTY, maxBytes, maxItems, PARSE_CONFIG, toValidationIssues } from './issues.js';
import { LIMITS } from './limits.js';
import { TemplateCardSchema } from './schemas/template-card.js';
import type { AppMessageRequest, MessageRequest, ValidationIssue } from './types.js';

/**
 * Template cards that call back (更新模版卡片消息, path/94945): the three interaction types, and the notice types
 * when they carry an `action_menu`. Only these get a `task_id` from the gateway and can be updated later.
 */
const INTERACTION_TYPES: ReadonlySet<string> = new Set([
  'button_interaction',
  'vote_interaction',
  'multiple_interaction',
]);

const callsBack = (card: Record<string, unknown>): boolean =>
  INTERACTION_TYPES.has(String(card.card_type)) || card.action_menu !== undefined;

/** The `task_id` of a template card message; undefined for other messages or cards without one. */
export function cardTaskId(req: Pick<MessageRequest, 'msgtype' | 'content'>): string | undefined {
  if (req.msgtype !== 'template_card') return undefined;
  const taskId = req.content.task_id;
  return typeof taskId === 'string' && taskId !== '' ? taskId : undefined;
}

/**
 * The request with a `task_id` on a card that calls back but has none: the message id, which is unique, made of
 * the characters WeCom allows and far below its 128 bytes. WeCom's callbacks carry the task_id back (TaskId), and
 * that is how a button press finds its message. Assigned once, at ingest, and stored with the request, so every
 * send attempt and a later card update use the same one.
 *
 * @example withTaskId(req, 'msg_01J…').content.task_id // 'msg_01J…' for a button_interaction card without one
 */
export function withTaskId(req: AppMessageRequest, messageId: string): AppMessageRequest {
  if (req.msgtype !== 'template_card' || cardTaskId(req) !== undefined || !callsBack(req.content)) return req;
  return { ...req, content: { ...req.content, task_id: messageId } };
}

/** A validated `POST /v1/messages/{id}/card` body. */
export type CardUpdate = {
  /** Who sees the update; none given means every recipient of the card (`atall`). */
  userids?: string[];
  partyids?: number[];
  tagids?: number[];
} & ({ button: { replace_name: string } } | { template_card: Record<string, unknown> });

const R = LIMITS.recipients;
/** WeCom gives no limit for replace_name; a button's own text is far shorter. */
const MAX_REPLACE_NAME_BYTES = 128;

export const CardUpdateSchema = v.strictObject({
  button: v.optional(
    v.strictObject({
      replace_name: v.pipe(v.string(), v.nonEmpty(EMPTY), maxBytes(MAX_REPLACE_NAME_BYTES)),
    }),
  ),
  template_card: v.optional(TemplateCardSchema),
  userids: v.optional(
    v.pipe(
      v.array(v.pipe(v.string(), v.nonEmpty(EMPTY), maxBytes(R.maxUserIdBytes))),
      maxItems(R.maxUsers, 'users'),
    ),
  ),
  partyids: v.optional(v.pipe(v.array(v.pipe(v.number(), v.integer())), maxItems(R.maxParties, 'parties'))),
  tagids: v.optional(v.pipe(v.array(v.pipe(v.number(), v.integer())), maxItems(R.maxTags, 'tags'))),
});

/**
 * Validates a card update: exactly one of `button` (the pressed button becomes unclickable with this text, e.g.
 * "Approved by alice") or `template_card` (a whole new card of any type), and optionally whom it is for.
 *
 * @example validateCardUpdate({ button: { replace_name: 'Approved by alice' } })
 */
export function validateCardUpdate(
  body: unknown,
): { ok: true; value: CardUpdate } | { ok: false; issues: ValidationIssue[] } {
  if (!isPlainObject(body))
    return { ok: false, issues: [{ field: '(body)', message: 'must be a JSON object' }] };
  const parsed = v.safeParse(CardUpdateSchema, body, PARSE_CONFIG);
  if (!parsed.success) return { ok: false, issues: toValidationIssues(parsed.issues) };
  const { button, template_card: card, ...targets } = parsed.output;
  if ((button === undefined) === (card === undefined)) {
    return {
      ok: false,
      issues: [{ field: 'button', message: 'give exactly one of button or template_card' }],
    };
  }
  const value = button
    ? { ...targets, button }
    : { ...targets, template_card: card as Record<string, unknown> };
  return { ok: true, value };
}

/**
 * WeCom's `message/update_template_card` body. A new card keeps the original `task_id` unless it names its own,
 * so later clicks on it still find the message.
 */
export function toWecomCardUpdateBody(
  update: CardUpdate,
  agentid: number,
  responseCode: string,
  taskId: string | undefined,
): Record<string, unknown> {
  const targets = update.userids || update.partyids || update.tagids;
  const body: Record<string, unknown> = {
    ...(update.userids ? { userids: update.userids } : {}),
    ...(update.partyids ? { partyids: update.partyids } : {}),
    ...(update.tagids ? { tagids: update.tagids } : {}),
    ...(targets ? {} : { atall: 1 }),
    agentid,
    response_code: responseCode,
  };
  if ('button' in update) body.button = update.button;
  else
    body.template_card =
      taskId && !update.template_card.task_id
        ? { ...update.template_card, task_id: taskId }
        : update.template_card;
  return body;
}

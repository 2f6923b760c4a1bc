import { isPlainObject } from '#lib/util/index.js';
import { CARD_TYPE_NAMES, MSG_TYPE_NAMES, ROBOT_CARD_TYPE_NAMES, ROBOT_MSG_TYPE_NAMES } from './limits.js';
import type { ValidationIssue } from './types.js';

/**
 * The fields and types only one channel takes, so that a body written for an app and sent to a robot (or the
 * reverse) is answered with the field and the channel that takes it — not with "unknown field", which would leave
 * the user guessing. The issues come before the schema's, which name the same fields less helpfully.
 */

/** Top-level fields of an app's message that a robot has no use for, and why. */
const APP_ONLY_FIELDS: Readonly<Record<string, string>> = {
  touser: 'a robot posts to its group chat; mention people with text.mentioned_list or <@userid> in markdown',
  toparty: 'a robot posts to its group chat',
  totag: 'a robot posts to its group chat',
  agentid: 'a robot has no agentid',
  safe: "a robot's webhook takes no safe flag",
  enable_id_trans: "a robot's webhook takes no id translation",
  enable_duplicate_check: "a robot's webhook has no duplicate check",
  duplicate_check_interval: "a robot's webhook has no duplicate check",
  duplicate_protection: "a robot's webhook has no duplicate check",
  markdown_fallback: 'a robot posts markdown to WeCom only, where it is rendered',
  template: "message templates belong to an app's config",
  variables: "message templates belong to an app's config",
};

const BY_MEDIA_ID = 'an app sends it by a media_id from its own media/upload';
/** Nested fields only a robot's message objects take, by msgtype, and why an app has none. */
const ROBOT_ONLY_NESTED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  text: {
    mentioned_list: 'an app reaches people by touser, toparty and totag',
    mentioned_mobile_list: 'an app reaches people by touser, toparty and totag',
  },
  image: { base64: BY_MEDIA_ID, md5: BY_MEDIA_ID },
  file: { base64: BY_MEDIA_ID, filename: BY_MEDIA_ID },
  voice: { base64: BY_MEDIA_ID, filename: BY_MEDIA_ID },
};

const APP_CARDS: ReadonlySet<string> = new Set(CARD_TYPE_NAMES);
const ROBOT_TYPES: ReadonlySet<string> = new Set(ROBOT_MSG_TYPE_NAMES);
const APP_TYPES: ReadonlySet<string> = new Set(MSG_TYPE_NAMES);
const ROBOT_CARDS: ReadonlySet<string> = new Set(ROBOT_CARD_TYPE_NAMES);

const forApps = (field: string, why: string): ValidationIssue => ({
  field,
  message: `not for a robot: ${field} is for apps (${why})`,
});
const forRobots = (field: string, why: string): ValidationIssue => ({
  field,
  message: `not for an app: ${field} is for robots (${why})`,
});

/**
 * What a robot's body holds that only apps take: top-level fields, app-only msgtypes, an image by media_id, an
 * interactive card.
 *
 * @example appOnlyIssues({ robot: 'oncall', touser: 'zhangsan', … }) // [{ field: 'touser', message: 'not for a robot: touser is for apps (…)' }]
 */
export function appOnlyIssues(body: Record<string, unknown>): ValidationIssue[] {
  const issues = Object.entries(APP_ONLY_FIELDS)
    .filter(([field]) => Object.hasOwn(body, field))
    .map(([field, why]) => forApps(field, why));
  const msgtype = typeof body.msgtype === 'string' ? body.msgtype : undefined;
  if (msgtype !== undefined && APP_TYPES.has(msgtype) && !ROBOT_TYPES.has(msgtype)) {
    issues.push(forApps('msgtype', `msgtype ${msgtype}; robots take ${ROBOT_MSG_TYPE_NAMES.join(', ')}`));
  }
  const object = msgtype !== undefined ? body[msgtype] : undefined;
  if (!isPlainObject(object)) return issues;
  if (msgtype === 'image' && Object.hasOwn(object, 'media_id')) {
    issues.push(forApps('image.media_id', 'a robot sends the image itself: image.base64 and image.md5'));
  }
  if (msgtype === 'template_card') {
    const cardType = object.card_type;
    if (typeof cardType === 'string' && APP_CARDS.has(cardType) && !ROBOT_CARDS.has(cardType)) {
      const robots = ROBOT_CARD_TYPE_NAMES.join(', ');
      issues.push(forApps('template_card.card_type', `card_type ${cardType}; robots take ${robots}`));
    }
    for (const field of ['task_id', 'action_menu']) {
      if (Object.hasOwn(object, field)) {
        issues.push(forApps(`template_card.${field}`, "a robot's cards call nobody back"));
      }
    }
  }
  return issues;
}

/**
 * What an app's body holds that only robots take: msgtype markdown_v2, mentions in text, an image or file given as
 * bytes.
 *
 * @example robotOnlyIssues({ app: 'ops', msgtype: 'markdown_v2', … }) // [{ field: 'msgtype', message: 'not for an app: msgtype is for robots (…)' }]
 */
export function robotOnlyIssues(body: Record<string, unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const msgtype = typeof body.msgtype === 'string' ? body.msgtype : undefined;
  if (msgtype === undefined) return issues;
  if (ROBOT_TYPES.has(msgtype) && !APP_TYPES.has(msgtype)) {
    issues.push(forRobots('msgtype', `msgtype ${msgtype}; apps take markdown`));
  }
  const object = body[msgtype];
  if (!isPlainObject(object)) return issues;
  for (const [field, why] of Object.entries(ROBOT_ONLY_NESTED[msgtype] ?? {})) {
    if (Object.hasOwn(object, field)) issues.push(forRobots(`${msgtype}.${field}`, why));
  }
  return issues;
}

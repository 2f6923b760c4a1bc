import { ERRCODE } from './errcodes.js';

/**
 * message/send body checks, after https://developer.work.weixin.qq.com/document/path/90236 (发送应用消息).
 * Where the docs give a limit but not the errcode WeCom answers when it is exceeded, the choice is
 * marked "assumed".
 *
 * Deliberately written apart from the gateway's own validation (lib/messages): the simulator stands in for WeCom,
 * and a limit shared between the two could be wrong in both without any test noticing.
 */
export const MSG_TYPES = new Set([
  'text',
  'image',
  'voice',
  'video',
  'file',
  'textcard',
  'news',
  'mpnews',
  'markdown',
  'miniprogram_notice',
  'template_card',
]);

export const MAX_TOUSER = 1000;
export const MAX_TOPARTY = 100;
export const MAX_TOTAG = 100;
/** WeCom: duplicate_check_interval defaults to 1800 s and may not exceed 4 hours. */
export const DEFAULT_DUPLICATE_CHECK_INTERVAL_S = 1800;
export const MAX_DUPLICATE_CHECK_INTERVAL_S = 14_400;

/** Template card types whose send answer carries a `response_code` for later card updates. */
const CARD_TYPES_WITH_RESPONSE_CODE = new Set([
  'button_interaction',
  'vote_interaction',
  'multiple_interaction',
]);

export interface Rejection {
  errcode: number;
  detail: string;
}

export interface Recipients {
  users: string[];
  parties: string[];
  tags: string[];
  all: boolean;
}

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

function reject(errcode: number, detail: string): Rejection {
  return { errcode, detail };
}

/** WeCom takes agentid as a JSON number, and tolerates a numeric string. */
export function parseAgentId(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  return undefined;
}

function splitIds(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'string') return undefined;
  return value
    .split('|')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export function parseRecipients(body: Record<string, unknown>): Recipients | Rejection {
  const users = splitIds(body.touser);
  const parties = splitIds(body.toparty);
  const tags = splitIds(body.totag);
  if (users === undefined || parties === undefined || tags === undefined) {
    return reject(ERRCODE.invalidParameter, 'touser/toparty/totag must be "id1|id2" strings');
  }
  if (users.length > MAX_TOUSER) return reject(ERRCODE.invalidUserIdListSize, `touser > ${MAX_TOUSER}`); // assumed
  if (parties.length > MAX_TOPARTY) return reject(ERRCODE.invalidParameter, `toparty > ${MAX_TOPARTY}`); // assumed
  if (tags.length > MAX_TOTAG) return reject(ERRCODE.invalidParameter, `totag > ${MAX_TOTAG}`); // assumed
  // WeCom: "touser 为 @all 时忽略本参数": @all overrides toparty and totag.
  const all = users.includes('@all');
  return { users: all ? [] : users, parties: all ? [] : parties, tags: all ? [] : tags, all };
}

function checkContent(obj: Record<string, unknown>, max: number): Rejection | undefined {
  const content = obj.content;
  if (!nonEmptyString(content)) return reject(ERRCODE.emptyContent, 'content is empty');
  if (bytes(content) > max) return reject(ERRCODE.contentTooLong, `content > ${max} bytes`);
  return undefined;
}

function checkMaxBytes(obj: Record<string, unknown>, field: string, max: number): Rejection | undefined {
  const v = obj[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') return reject(ERRCODE.invalidParameter, `${field} must be a string`);
  // The global list has no per-field codes for WeCom apps, so every size overflow answers 45002 (assumed).
  if (bytes(v) > max) return reject(ERRCODE.contentTooLong, `${field} > ${max} bytes`);
  return undefined;
}

function checkArticles(obj: Record<string, unknown>, mp: boolean): Rejection | undefined {
  const articles = obj.articles;
  if (!Array.isArray(articles)) return reject(ERRCODE.invalidParameter, 'articles missing');
  if (articles.length < 1 || articles.length > 8) {
    return reject(ERRCODE.articleCountOutOfLimit, 'articles must hold 1 to 8 items');
  }
  for (const a of articles) {
    if (!isObject(a) || !nonEmptyString(a.title)) return reject(ERRCODE.invalidParameter, 'article title');
    const failure =
      checkMaxBytes(a, 'title', 128) ??
      checkMaxBytes(a, 'description', 512) ??
      checkMaxBytes(a, 'url', 2048) ??
      // mpnews content: "不超过666 K个字节".
      (mp ? checkMaxBytes(a, 'content', 666 * 1024) : undefined);
    if (failure !== undefined) return failure;
    if (mp && (!nonEmptyString(a.thumb_media_id) || !nonEmptyString(a.content))) {
      return reject(ERRCODE.invalidParameter, 'mpnews article needs thumb_media_id and content');
    }
  }
  return undefined;
}

/** Checks the message object named by `msgtype`. Returns undefined when WeCom would accept it. */
export function validateMessage(body: Record<string, unknown>): Rejection | undefined {
  const msgtype = body.msgtype;
  if (typeof msgtype !== 'string' || !MSG_TYPES.has(msgtype)) {
    return reject(ERRCODE.invalidMsgType, `msgtype ${String(msgtype)}`);
  }
  const obj = body[msgtype];
  if (msgtype === 'text' || msgtype === 'markdown') {
    return isObject(obj) ? checkContent(obj, 2048) : reject(ERRCODE.emptyContent, `${msgtype} missing`);
  }
  if (!isObject(obj)) return reject(ERRCODE.invalidParameter, `${msgtype} object missing`);
  switch (msgtype) {
    case 'image':
    case 'voice':
    case 'video':
    case 'file':
      return nonEmptyString(obj.media_id) ? undefined : reject(ERRCODE.invalidMediaId, 'media_id missing');
    case 'textcard': {
      if (!nonEmptyString(obj.title) || !nonEmptyString(obj.description) || !nonEmptyString(obj.url)) {
        return reject(ERRCODE.invalidParameter, 'textcard needs title, description and url');
      }
      const failure =
        checkMaxBytes(obj, 'title', 128) ??
        checkMaxBytes(obj, 'description', 512) ??
        checkMaxBytes(obj, 'url', 2048);
      if (failure !== undefined) return failure;
      // btntxt is limited in characters, not bytes ("不超过4个文字").
      if (obj.btntxt !== undefined && (typeof obj.btntxt !== 'string' || [...obj.btntxt].length > 4)) {
        return reject(ERRCODE.contentTooLong, 'btntxt > 4 characters');
      }
      return undefined;
    }
    case 'news':
      return checkArticles(obj, false);
    case 'mpnews':
      return checkArticles(obj, true);
    case 'miniprogram_notice': {
      if (!nonEmptyString(obj.appid) || !nonEmptyString(obj.title)) {
        return reject(ERRCODE.invalidParameter, 'miniprogram_notice needs appid and title');
      }
      const items = obj.content_item;
      if (items !== undefined && (!Array.isArray(items) || items.length > 10)) {
        return reject(ERRCODE.invalidParameter, 'content_item holds at most 10 items'); // assumed errcode
      }
      return undefined;
    }
    case 'template_card':
      return nonEmptyString(obj.card_type)
        ? undefined
        : reject(ERRCODE.invalidParameter, 'card_type missing');
    default:
      return undefined;
  }
}

export function wantsResponseCode(body: Record<string, unknown>): boolean {
  const card = body.template_card;
  return (
    body.msgtype === 'template_card' &&
    isObject(card) &&
    CARD_TYPES_WITH_RESPONSE_CODE.has(String(card.card_type))
  );
}

/**
 * Interaction cards and cards with an action_menu must carry a task_id ("任务id … 交互型卡片必填", "填了action_menu
 * 字段的话本字段必填"); errcode assumed (参数为空).
 */
export function missingTaskId(body: Record<string, unknown>): Rejection | undefined {
  const card = body.template_card;
  if (body.msgtype !== 'template_card' || !isObject(card)) return undefined;
  const callsBack =
    CARD_TYPES_WITH_RESPONSE_CODE.has(String(card.card_type)) || card.action_menu !== undefined;
  if (!callsBack || (typeof card.task_id === 'string' && card.task_id !== '')) return undefined;
  return { errcode: ERRCODE.emptyParameter, detail: 'template_card.task_id missing' };
}

/** Returns the interval in seconds, or a rejection when it is out of WeCom's range. */
export function duplicateCheckInterval(body: Record<string, unknown>): number | Rejection {
  const v = body.duplicate_check_interval;
  if (v === undefined) return DEFAULT_DUPLICATE_CHECK_INTERVAL_S;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_DUPLICATE_CHECK_INTERVAL_S) {
    return reject(
      ERRCODE.invalidParameter,
      `duplicate_check_interval must be 0..${MAX_DUPLICATE_CHECK_INTERVAL_S}`,
    );
  }
  return v;
}

export const isRejection = (v: unknown): v is Rejection => isObject(v) && typeof v.errcode === 'number';

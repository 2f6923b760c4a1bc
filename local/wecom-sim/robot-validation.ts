import { createHash } from 'node:crypto';
import { ERRCODE } from './errcodes.js';
import type { Rejection } from './validation.js';

/**
 * `webhook/send` body checks, after 消息推送配置说明 (https://developer.work.weixin.qq.com/document/path/91770).
 * Written apart from the gateway's own validation (lib/messages), like validation.ts: the simulator stands in for
 * WeCom. Where the docs give a limit but not the errcode WeCom answers, the choice is marked "assumed"; 40058 for
 * an over-long markdown was seen in a user's report ("markdown.content exceed max length 4096").
 */

export const ROBOT_MSG_TYPES = new Set([
  'text',
  'markdown',
  'markdown_v2',
  'image',
  'news',
  'file',
  'voice',
  'template_card',
]);

const ROBOT_CARD_TYPES = new Set(['text_notice', 'news_notice']);
const MAX_TEXT_BYTES = 2048;
const MAX_MARKDOWN_BYTES = 4096;
const MAX_IMAGE_BYTES = 2 * 1024 * 1024;
/** Seen in a user's report for markdown over 4096 bytes; assumed for text and markdown_v2 too. */
const CONTENT_TOO_LONG = 40058;

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const reject = (errcode: number, detail: string): Rejection => ({ errcode, detail });

function checkContent(object: Record<string, unknown>, msgtype: string, max: number): Rejection | undefined {
  const content = object.content;
  if (typeof content !== 'string' || content === '')
    return reject(ERRCODE.emptyContent, `${msgtype}.content`);
  if (bytes(content) > max) return reject(CONTENT_TOO_LONG, `${msgtype}.content exceed max length ${max}`);
  return undefined;
}

function checkImage(image: Record<string, unknown>): Rejection | undefined {
  const { base64, md5 } = image;
  if (typeof base64 !== 'string' || base64 === '' || typeof md5 !== 'string')
    return reject(ERRCODE.emptyParameter, 'image.base64 and image.md5'); // assumed
  const raw = Buffer.from(base64, 'base64');
  if (raw.length > MAX_IMAGE_BYTES) return reject(ERRCODE.invalidParameter, 'image over 2 MB'); // assumed
  const jpeg = raw[0] === 0xff && raw[1] === 0xd8;
  const png = raw.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  if (!jpeg && !png) return reject(ERRCODE.invalidParameter, 'image must be JPG or PNG'); // assumed
  if (createHash('md5').update(raw).digest('hex') !== md5.toLowerCase())
    return reject(ERRCODE.invalidParameter, 'image.md5 does not match'); // assumed
  return undefined;
}

function checkNews(news: Record<string, unknown>): Rejection | undefined {
  const articles = news.articles;
  if (!Array.isArray(articles) || articles.length < 1 || articles.length > 8)
    return reject(ERRCODE.articleCountOutOfLimit, 'news.articles');
  for (const article of articles) {
    if (!isObject(article) || typeof article.title !== 'string' || typeof article.url !== 'string')
      return reject(ERRCODE.emptyParameter, 'news article title and url'); // assumed
  }
  return undefined;
}

/**
 * The rejection of a robot's message body, or undefined when WeCom would take it. Media ids are checked by the
 * caller (they belong to one robot).
 */
export function validateRobotMessage(body: Record<string, unknown>): Rejection | undefined {
  const msgtype = body.msgtype;
  if (typeof msgtype !== 'string' || !ROBOT_MSG_TYPES.has(msgtype))
    return reject(ERRCODE.invalidMsgType, String(msgtype));
  const object = body[msgtype];
  if (!isObject(object)) return reject(ERRCODE.emptyParameter, msgtype); // assumed
  switch (msgtype) {
    case 'text':
      return checkContent(object, msgtype, MAX_TEXT_BYTES);
    case 'markdown':
    case 'markdown_v2':
      return checkContent(object, msgtype, MAX_MARKDOWN_BYTES);
    case 'image':
      return checkImage(object);
    case 'news':
      return checkNews(object);
    case 'file':
    case 'voice':
      return typeof object.media_id === 'string' && object.media_id !== ''
        ? undefined
        : reject(ERRCODE.invalidMediaId, `${msgtype}.media_id`);
    default:
      return ROBOT_CARD_TYPES.has(String(object.card_type))
        ? undefined
        : reject(ERRCODE.invalidMsgType, `template_card.card_type ${String(object.card_type)}`); // assumed
  }
}

/** One part of a multipart/form-data body: its disposition parameters and bytes. */
export interface FormPart {
  name: string;
  filename?: string;
  bytes: Buffer;
}

/** The parts of a multipart/form-data body (what upload_media reads); undefined when it is not one. */
export function parseMultipart(contentType: string | undefined, body: Buffer): FormPart[] | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  const marker = boundary?.[1] ?? boundary?.[2];
  if (!contentType?.toLowerCase().startsWith('multipart/form-data') || !marker) return undefined;
  const delimiter = Buffer.from(`--${marker}`);
  const parts: FormPart[] = [];
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next === -1) return undefined;
    const raw = body.subarray(start + 2, next - 2); // after CRLF, before the CRLF that precedes the next delimiter
    const split = raw.indexOf('\r\n\r\n');
    if (split === -1) return undefined;
    const headers = raw.subarray(0, split).toString('utf8');
    const name = /(?:^|[;\s])name="([^"]*)"/i.exec(headers)?.[1];
    const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
    if (name !== undefined) {
      parts.push({ name, ...(filename !== undefined ? { filename } : {}), bytes: raw.subarray(split + 4) });
    }
    at = next;
  }
  return parts;
}

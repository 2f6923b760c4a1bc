import { createHash } from 'node:crypto';
import * as v from 'valibot';
import {
  discriminatorMessage,
  EMPTY,
  maxBytes,
  maxItems,
  minItems,
  optionalString,
  requiredString,
} from '../issues.js';
import { ROBOT_LIMITS as L, ROBOT_CARD_TYPE_NAMES, ROBOT_MSG_TYPE_NAMES } from '../limits.js';
import { NewsNoticeCardSchema, TextNoticeCardSchema } from './template-card.js';

/**
 * One schema per msgtype of a group robot's `webhook/send`, as in 消息推送配置说明
 * (https://developer.work.weixin.qq.com/document/path/91770). Strict like the app's: a typo is a 400, not a field
 * WeCom drops. What the robot takes differently from an app: mentions in text, twice the markdown, markdown_v2,
 * an image sent inline (base64 and its md5), and a file or voice the gateway uploads through the robot's own
 * `upload_media` (a media id is valid for that robot only, so a client cannot bring one from elsewhere).
 */

/**
 * A check with what the OpenAPI document says of it (scripts/openapi): a check's function cannot be read, so the
 * rule travels as JSON Schema keywords beside it, as `maxChars` does for character limits.
 */
const documented = <A extends object>(action: A, openApi: Record<string, unknown>): A =>
  Object.assign(action, { openApi });

/** Standard base64 with padding, as `Buffer.from(…, 'base64')` would read it without dropping anything. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Bytes of base64 text once decoded (the text is checked against BASE64 first). */
export const decodedBytes = (b64: string): number =>
  (b64.length / 4) * 3 - (b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0);

const base64Of = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.nonEmpty(EMPTY),
    v.regex(BASE64, 'must be standard base64 (A-Z a-z 0-9 + /, padded with =)'),
    documented(
      v.check(
        (s: string) => decodedBytes(s) >= min,
        (issue) => `${decodedBytes(issue.input as string)} bytes decoded, min ${min}`,
      ),
      { 'x-min-decoded-bytes': min },
    ),
    documented(
      v.check(
        (s: string) => decodedBytes(s) <= max,
        (issue) => `${decodedBytes(issue.input as string)} bytes decoded, max ${max}`,
      ),
      { 'x-max-decoded-bytes': max },
    ),
  );

/** The first bytes of the decoded data (enough for a file signature). */
const head = (b64: string, bytes: number): Buffer =>
  Buffer.from(b64.slice(0, Math.ceil(bytes / 3) * 4), 'base64');

/** "支持JPG,PNG格式": JPEG starts FF D8 FF, PNG 89 50 4E 47. */
const isJpegOrPng = (b64: string): boolean => {
  const h = head(b64, 4);
  return (
    (h[0] === 0xff && h[1] === 0xd8 && h[2] === 0xff) ||
    h.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47]))
  );
};

/** Voice "仅支持AMR格式": an AMR file starts with `#!AMR`. */
const isAmr = (b64: string): boolean => head(b64, 5).subarray(0, 5).toString('latin1') === '#!AMR';

/** The md5 WeCom wants beside an image: of the raw bytes ("图片内容(base64编码前)的md5值"). */
export const md5OfBase64 = (b64: string): string =>
  createHash('md5').update(Buffer.from(b64, 'base64')).digest('hex');

/** text: content ≤2048 bytes; `mentioned_list` userids and `mentioned_mobile_list` phones, `@all` in either. */
export const RobotTextSchema = v.strictObject({
  content: requiredString(L.text.maxContentBytes),
  mentioned_list: v.optional(
    v.pipe(v.array(v.pipe(v.string(), v.nonEmpty(EMPTY), maxBytes(64))), maxItems(L.maxMentions, 'users')),
  ),
  mentioned_mobile_list: v.optional(
    v.pipe(
      v.array(v.pipe(v.string(), v.regex(/^(@all|\+?[0-9-]{5,20})$/, 'must be a phone number or @all'))),
      maxItems(L.maxMentions, 'mobiles'),
    ),
  ),
});

/** markdown: content ≤4096 bytes (twice an app's); `<@userid>` mentions inside it. */
export const RobotMarkdownSchema = v.strictObject({
  content: requiredString(L.markdown.maxContentBytes),
});

/**
 * markdown_v2: content ≤4096 bytes; tables, lists, code blocks, images. "markdown_v2不支持字体颜色、@群成员的语法":
 * content that uses them is refused, since the group would see the tags as text.
 */
export const RobotMarkdownV2Schema = v.strictObject({
  content: v.pipe(
    requiredString(L.markdown_v2.maxContentBytes),
    documented(
      v.check(
        (s: string) => !/<font\s+color\s*=/i.test(s),
        'markdown_v2 shows no <font color>: send msgtype markdown for colour',
      ),
      // One keyword for both checks (a schema holds it once): colour or a mention.
      { 'x-forbids': '<font\\s+color\\s*=|<@[^>\\s]+>' },
    ),
    documented(
      v.check(
        (s: string) => !/<@[^>\s]+>/.test(s),
        'markdown_v2 mentions nobody (<@userid>): send msgtype markdown or text',
      ),
      {},
    ),
  ),
});

/** image: the raw JPG or PNG (≤2 MB) in base64, and its md5 (the gateway computes it when absent). */
export const RobotImageSchema = v.strictObject({
  base64: v.pipe(
    base64Of(1, L.image.maxBytes),
    documented(v.check(isJpegOrPng, 'must be a JPG or PNG image'), {
      contentMediaType: 'image/jpeg or image/png',
    }),
  ),
  md5: v.optional(
    v.pipe(v.string(), v.regex(/^[0-9a-fA-F]{32}$/, 'must be 32 hex digits (the md5 of the raw image)')),
  ),
});

const httpUrl = v.pipe(
  v.string(),
  v.nonEmpty(EMPTY),
  maxBytes(L.news.maxUrlBytes),
  v.regex(/^https?:\/\/\S/i, 'must start with http:// or https://'),
);

/** news: 1–8 articles; title ≤128 bytes and url required, description ≤512 bytes, picurl optional. */
export const RobotNewsSchema = v.strictObject({
  articles: v.pipe(
    v.array(
      v.strictObject({
        title: requiredString(L.news.maxTitleBytes),
        description: optionalString(L.news.maxDescriptionBytes),
        url: httpUrl,
        picurl: v.optional(httpUrl),
      }),
    ),
    minItems(L.news.minArticles, 'articles'),
    maxItems(L.news.maxArticles, 'articles'),
  ),
});

/** The displayed name of an uploaded file: a name, not a path (no separators, quotes or control characters). */
const filename = v.pipe(
  v.string(),
  v.nonEmpty(EMPTY),
  maxBytes(L.maxFilenameBytes),
  documented(
    v.check(
      (name: string) =>
        ![...name].some((ch) => ch === '/' || ch === '\\' || ch === '"' || (ch.codePointAt(0) ?? 0) < 0x20),
      'must be a file name (no path, quotes or control characters)',
    ),
    { pattern: '^[^/\\\\"\\u0000-\\u001f]+$' },
  ),
);

/**
 * file: the bytes (`base64`) and the name the group sees (`filename`); the sender uploads them through the robot's
 * upload_media once and sends the media id. Or a `media_id` that robot's upload_media gave within 3 days.
 */
export const RobotFileSchema = v.union(
  [
    v.strictObject({ base64: base64Of(L.file.minBytes, L.file.maxBytes), filename }),
    v.strictObject({ media_id: requiredString() }),
  ],
  'give base64 and filename (the gateway uploads it), or a media_id of this robot',
);

/** voice: AMR only, ≤2 MB, ≤60 s; bytes (`base64`, optional `filename`) or a `media_id`, as for a file. */
export const RobotVoiceSchema = v.union(
  [
    v.strictObject({
      base64: v.pipe(
        base64Of(L.voice.minBytes, L.voice.maxBytes),
        documented(v.check(isAmr, 'must be an AMR recording'), { contentMediaType: 'audio/amr' }),
      ),
      filename: v.optional(filename),
    }),
    v.strictObject({ media_id: requiredString() }),
  ],
  'give base64 (an AMR recording; the gateway uploads it), or a media_id of this robot',
);

/** template_card: the two notice cards only; a robot's cards call nobody back, so they carry no task_id. */
export const RobotTemplateCardSchema = v.variant(
  'card_type',
  [TextNoticeCardSchema, NewsNoticeCardSchema],
  discriminatorMessage(ROBOT_CARD_TYPE_NAMES),
);

/** `msgtype` plus its object, discriminated on msgtype, as for an app (schemas/message.ts). */
export const RobotContentSchema = v.variant(
  'msgtype',
  [
    v.object({ msgtype: v.literal('text'), text: RobotTextSchema }),
    v.object({ msgtype: v.literal('markdown'), markdown: RobotMarkdownSchema }),
    v.object({ msgtype: v.literal('markdown_v2'), markdown_v2: RobotMarkdownV2Schema }),
    v.object({ msgtype: v.literal('image'), image: RobotImageSchema }),
    v.object({ msgtype: v.literal('news'), news: RobotNewsSchema }),
    v.object({ msgtype: v.literal('file'), file: RobotFileSchema }),
    v.object({ msgtype: v.literal('voice'), voice: RobotVoiceSchema }),
    v.object({ msgtype: v.literal('template_card'), template_card: RobotTemplateCardSchema }),
  ],
  discriminatorMessage(ROBOT_MSG_TYPE_NAMES),
);

import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { isPlainObject, parseOffsetTime } from '#lib/util/index.js';
import { robotOnlyIssues } from './channel-fields.js';
import { utf8Bytes } from './fit.js';
import { finalizeIssues, PARSE_CONFIG, toValidationIssues } from './issues.js';
import { LIMITS, MSG_TYPE_NAMES } from './limits.js';
import { convertMarkdown, type MarkdownFallback, markdownToText } from './markdown-fallback.js';
import { parseRecipients } from './recipients.js';
import { type RobotSettings, validateRobotRequest } from './robot-validate.js';
import { GatewayFieldsSchema, RESERVED_METADATA_KEYS } from './schemas/gateway.js';
import { MessageContentSchema } from './schemas/message.js';
import { DEFAULT_SPLIT_MAX_PARTS, type SplitFormat, type SplitSettings, splitContent } from './split.js';
import { expandTemplateRequest, type TemplateLookup } from './templates.js';
import type {
  AppMessageRequest,
  AppSegment,
  MsgType,
  SendOptions,
  ValidationIssue,
  ValidationResult,
} from './types.js';

export const MSG_TYPES: readonly MsgType[] = MSG_TYPE_NAMES;

const MSG_TYPE_SET: ReadonlySet<string> = new Set(MSG_TYPE_NAMES);

const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  ...Object.keys(GatewayFieldsSchema.entries),
  'touser',
  'toparty',
  'totag',
  'msgtype',
]);

const OPTION_KEYS = [
  'safe',
  'enable_id_trans',
  'enable_duplicate_check',
  'duplicate_check_interval',
] as const;

const snakeCase = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Unknown top-level keys are rejected so typos (`callbackUrl`, `toUser`) fail loudly instead of being dropped. */
function checkTopLevelKeys(body: Record<string, unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const msgtype = body.msgtype;
  for (const key of Object.keys(body)) {
    if (key === 'agentid') {
      issues.push({ field: key, message: 'not allowed: set by the gateway from app' });
    } else if (MSG_TYPE_SET.has(key)) {
      if (typeof msgtype === 'string' && MSG_TYPE_SET.has(msgtype) && key !== msgtype) {
        issues.push({
          field: key,
          message: `not allowed with msgtype ${msgtype}: send exactly one message object`,
        });
      }
    } else if (!KNOWN_FIELDS.has(key)) {
      const guess = [snakeCase(key), key.toLowerCase()].find((candidate) => KNOWN_FIELDS.has(candidate));
      const hint = guess ? ` (did you mean ${guess}?)` : '';
      issues.push({ field: key, message: `unknown field${hint}` });
    }
  }
  return issues;
}

function reservedMetadataKeys(metadata: unknown): ValidationIssue[] {
  if (!isPlainObject(metadata)) return [];
  return RESERVED_METADATA_KEYS.filter((key) => Object.hasOwn(metadata, key)).map((key) => ({
    field: `metadata.${key}`,
    message: 'reserved key',
  }));
}

/**
 * Validates a parsed `POST /v1/messages` body: the WeCom `message/send` body minus `agentid`, plus
 * the gateway fields. Collects every issue (up to 20), each naming its field.
 *
 * @example
 * const result = validateMessageRequest({ app: 'ops', touser: 'zhangsan|lisi', msgtype: 'text', text: { content: 'disk full' } });
 * if (!result.ok) return badRequest(result.issues); // [{ field: 'text.content', message: '2049 bytes, max 2048' }]
 */
export interface ValidateOptions {
  /** The app's configured markdownFallback, applied to markdown messages that set no markdown_fallback. */
  markdownFallback?: (app: string) => MarkdownFallback | undefined;
  /**
   * The app's templates, for a body that names one (`template`, `variables`): it is rendered first, and what it
   * renders is validated like a body built by hand. Absent: no app has templates.
   */
  templates?: TemplateLookup;
  /** The app's `split` settings: whether long content is split when the message does not say, and the cap. */
  split?: (app: string) => SplitSettings | undefined;
  /** A robot's settings (default mentions, split), for a body addressed to a robot (`robot`). */
  robot?: (name: string) => RobotSettings | undefined;
}

/** The msgtypes whose content can be split, with the format the splitter keeps intact. */
const SPLITTABLE: Readonly<Record<string, SplitFormat>> = { text: 'text', markdown: 'markdown' };

/** Long content the request asked to split: the msgtype and its content, when it is over WeCom's limit. */
interface LongContent {
  msgtype: 'text' | 'markdown';
  content: string;
}

function longContentOf(body: Record<string, unknown>): LongContent | undefined {
  const msgtype = body.msgtype;
  if (msgtype !== 'text' && msgtype !== 'markdown') return undefined;
  const object = body[msgtype];
  if (!isPlainObject(object) || typeof object.content !== 'string') return undefined;
  return utf8Bytes(object.content) > LIMITS[msgtype].maxContentBytes
    ? { msgtype, content: object.content }
    : undefined;
}

/** What split content becomes: the parts, in order, and the msgtype they are sent as. */
interface SplitPlan {
  long: LongContent;
  msgtype: 'text' | 'markdown';
  pieces: string[];
}

/** The markdown fallback a body asks for, before its fields are parsed: its own `markdown_fallback`, or the app's. */
function fallbackOf(body: Record<string, unknown>, opts: ValidateOptions): MarkdownFallback | undefined {
  const own = body.markdown_fallback;
  if (own === 'none') return undefined;
  if (own === 'text' || own === 'textcard') return own;
  return typeof body.app === 'string' ? opts.markdownFallback?.(body.app) : undefined;
}

/**
 * Splits a body's long content (undefined when it fits). Markdown that falls back is converted whole to text first,
 * then split as text: converted part by part, a part could grow past the limit (a link's `<a href>` is longer than
 * its markdown) and be cut by the fallback's own fitting, or shrink to a textcard's 512 bytes. The parts' markers
 * carry a digest of the content, so two messages that begin alike do not send the same first part (WeCom's duplicate
 * check would drop the second); two identical messages still send identical parts, as they would whole.
 */
function planSplit(
  body: Record<string, unknown>,
  opts: ValidateOptions,
  maxParts: number,
): SplitPlan | { issue: ValidationIssue } | undefined {
  const long = longContentOf(body);
  if (!long) return undefined;
  const converts = long.msgtype === 'markdown' && fallbackOf(body, opts) !== undefined;
  const source = converts ? markdownToText(long.content, {}, Number.POSITIVE_INFINITY) : long.content;
  const msgtype = converts ? 'text' : long.msgtype;
  const tag = createHash('sha256').update(source).digest('hex').slice(0, 4);
  const split = splitContent(source, {
    maxBytes: LIMITS[msgtype].maxContentBytes,
    maxParts,
    format: SPLITTABLE[msgtype] ?? 'text',
    tag,
  });
  if (split.kind === 'too-many-parts') {
    const message = `${utf8Bytes(long.content)} bytes would need ${split.needed} parts, more than the cap of ${maxParts}`;
    return { issue: { field: `${long.msgtype}.content`, message } };
  }
  const pieces = split.kind === 'parts' ? split.parts.map((p) => p.content) : [split.content];
  return { long, msgtype, pieces };
}

/** Over-long content without `split`: the 400 says how long it is (the schema's message) and that split exists. */
function withSplitHint(issues: ValidationIssue[], body: Record<string, unknown>): ValidationIssue[] {
  const long = longContentOf(body);
  if (!long) return issues;
  const field = `${long.msgtype}.content`;
  return issues.map((i) =>
    i.field === field
      ? { ...i, message: `${i.message}; send "split": true to have it delivered in parts` }
      : i,
  );
}

export function validateMessageRequest(input: unknown, opts: ValidateOptions = {}): ValidationResult {
  if (!isPlainObject(input)) {
    return { ok: false, issues: [{ field: '(body)', message: 'must be a JSON object' }] };
  }
  if (Object.hasOwn(input, 'robot')) {
    if (Object.hasOwn(input, 'app')) {
      const message = 'give app (a message to members) or robot (a post to its group chat), not both';
      return { ok: false, issues: [{ field: 'robot', message }] };
    }
    return validateRobotRequest(input, opts.robot);
  }
  const expanded = expandTemplateRequest(input, opts.templates);
  if (!expanded.ok) return { ok: false, issues: finalizeIssues(expanded.issues) };
  const settings = typeof expanded.body.app === 'string' ? opts.split?.(expanded.body.app) : undefined;
  const wantsSplit =
    typeof expanded.body.split === 'boolean' ? expanded.body.split : (settings?.byDefault ?? false);
  const plan = wantsSplit
    ? planSplit(expanded.body, opts, settings?.maxParts ?? DEFAULT_SPLIT_MAX_PARTS)
    : undefined;
  if (plan && 'issue' in plan) return { ok: false, issues: [plan.issue] };
  let body = expanded.body;
  if (plan) {
    // Every other check runs on the body as its first part will be sent; the parts differ only in content.
    const object = body[plan.long.msgtype] as Record<string, unknown>;
    body = { ...body, [plan.long.msgtype]: { ...object, content: plan.pieces[0] } };
  }

  const gateway = v.safeParse(GatewayFieldsSchema, body, PARSE_CONFIG);
  const content = v.safeParse(MessageContentSchema, body, PARSE_CONFIG);
  const { recipients, issues: recipientIssues } = parseRecipients(body);

  const issues: ValidationIssue[] = [
    // First: they name a field the schema would call unknown, and say which channel takes it.
    ...robotOnlyIssues(body),
    ...checkTopLevelKeys(body),
    ...(gateway.issues ? toValidationIssues(gateway.issues) : []),
    ...reservedMetadataKeys(body.metadata),
    ...recipientIssues,
    ...(content.issues ? toValidationIssues(content.issues) : []),
  ];

  // "仅mpnews类型的消息支持safe值为2,其他消息类型不支持".
  if (body.safe === 2 && typeof body.msgtype === 'string' && body.msgtype !== 'mpnews') {
    issues.push({ field: 'safe', message: '2 is only allowed for msgtype mpnews' });
  }

  // Opting out of the duplicate check and asking for it at once cannot both be honoured.
  if (body.duplicate_protection === false && body.enable_duplicate_check === 1) {
    issues.push({
      field: 'duplicate_protection',
      message: 'false contradicts enable_duplicate_check: 1; send one of them',
    });
  }

  if (issues.length > 0 || !gateway.success || !content.success) {
    return { ok: false, issues: finalizeIssues(wantsSplit ? issues : withSplitHint(issues, body)) };
  }

  const fields = gateway.output;
  const msgtype = content.output.msgtype;
  const options: SendOptions = {};
  for (const key of OPTION_KEYS) {
    if (fields[key] !== undefined) Object.assign(options, { [key]: fields[key] });
  }
  let sent: { msgtype: MsgType; content: Record<string, unknown> } = {
    msgtype,
    content: (content.output as Record<string, unknown>)[msgtype] as Record<string, unknown>,
  };
  // The fallback runs here, before the message is queued: what is stored and sent is what members will see.
  const fallback = fields.markdown_fallback ?? opts.markdownFallback?.(fields.app);
  const fallsBack = msgtype === 'markdown' && (fallback === 'text' || fallback === 'textcard');
  const withFallback = (markdown: { content: string }): AppSegment => {
    const converted = convertMarkdown(markdown, fallback === 'textcard' ? 'textcard' : 'text');
    return converted.msgtype === 'text'
      ? { msgtype: 'text', content: converted.text }
      : { msgtype: 'textcard', content: converted.textcard };
  };
  let segments: AppSegment[] | undefined;
  if (plan && plan.pieces.length === 1) {
    // Markdown whose text fallback fits one message: sent as that text, whole (a textcard would cut it to 512 bytes).
    sent = { msgtype: 'text', content: { content: plan.pieces[0] } };
  } else if (plan) {
    // The record keeps the whole content the client sent; the parts are what goes to WeCom.
    sent = { msgtype, content: { content: plan.long.content } };
    segments = plan.pieces.map((piece) => ({ msgtype: plan.msgtype, content: { content: piece } }));
  } else if (fallsBack && content.output.msgtype === 'markdown') {
    sent = withFallback(content.output.markdown);
  }
  const value: AppMessageRequest = {
    app: fields.app,
    priority: fields.priority,
    ...(fields.callback_url !== undefined && { callbackUrl: fields.callback_url }),
    ...(fields.metadata !== undefined && { metadata: fields.metadata }),
    recipients,
    ...sent,
    options,
    ...(fields.ttl_seconds !== undefined && { ttlSeconds: fields.ttl_seconds }),
    ...(fields.send_at !== undefined && {
      sendAt: new Date(parseOffsetTime(fields.send_at) as number).toISOString(),
    }),
    ...(fields.quiet_hours === false && { quietHours: false as const }),
    ...(fields.duplicate_protection === false && { duplicateProtection: false as const }),
    ...(segments && segments.length > 1 && { segments }),
  };
  return { ok: true, value };
}

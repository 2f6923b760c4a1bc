import * as v from 'valibot';
import { isPlainObject } from '#lib/util/index.js';
import { PARSE_CONFIG, toValidationIssues } from './issues.js';
import { GATEWAY_LIMITS, MSG_TYPE_NAMES } from './limits.js';
import { convertMarkdown, type MarkdownFallback } from './markdown-fallback.js';
import { parseRecipients } from './recipients.js';
import { GatewayFieldsSchema, RESERVED_METADATA_KEYS } from './schemas/gateway.js';
import { MessageContentSchema } from './schemas/message.js';
import { expandTemplateRequest, type TemplateLookup } from './templates.js';
import type { MessageRequest, MsgType, SendOptions, ValidationIssue, ValidationResult } from './types.js';

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

/** One issue per field (the first found), capped so a pathological body cannot produce a huge response. */
function finalizeIssues(issues: readonly ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  const out: ValidationIssue[] = [];
  for (const issue of issues) {
    if (seen.has(issue.field)) continue;
    seen.add(issue.field);
    out.push(issue);
    if (out.length === GATEWAY_LIMITS.maxIssues) break;
  }
  return out;
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
}

export function validateMessageRequest(input: unknown, opts: ValidateOptions = {}): ValidationResult {
  if (!isPlainObject(input)) {
    return { ok: false, issues: [{ field: '(body)', message: 'must be a JSON object' }] };
  }
  const expanded = expandTemplateRequest(input, opts.templates);
  if (!expanded.ok) return { ok: false, issues: finalizeIssues(expanded.issues) };
  const body = expanded.body;

  const gateway = v.safeParse(GatewayFieldsSchema, body, PARSE_CONFIG);
  const content = v.safeParse(MessageContentSchema, body, PARSE_CONFIG);
  const { recipients, issues: recipientIssues } = parseRecipients(body);

  const issues: ValidationIssue[] = [
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
    return { ok: false, issues: finalizeIssues(issues) };
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
  if (content.output.msgtype === 'markdown' && (fallback === 'text' || fallback === 'textcard')) {
    const converted = convertMarkdown(content.output.markdown, fallback);
    sent =
      converted.msgtype === 'text'
        ? { msgtype: 'text', content: converted.text }
        : { msgtype: 'textcard', content: converted.textcard };
  }
  const value: MessageRequest = {
    app: fields.app,
    priority: fields.priority,
    ...(fields.callback_url !== undefined && { callbackUrl: fields.callback_url }),
    ...(fields.metadata !== undefined && { metadata: fields.metadata }),
    recipients,
    ...sent,
    options,
    ...(fields.ttl_seconds !== undefined && { ttlSeconds: fields.ttl_seconds }),
    ...(fields.duplicate_protection === false && { duplicateProtection: false as const }),
  };
  return { ok: true, value };
}

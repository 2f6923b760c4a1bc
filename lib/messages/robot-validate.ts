import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { isPlainObject } from '#lib/util/index.js';
import { appOnlyIssues } from './channel-fields.js';
import { utf8Bytes } from './fit.js';
import { finalizeIssues, PARSE_CONFIG, toValidationIssues } from './issues.js';
import { GATEWAY_LIMITS as G, ROBOT_LIMITS, ROBOT_MSG_TYPE_NAMES } from './limits.js';
import { GatewayFieldsSchema, RESERVED_METADATA_KEYS } from './schemas/gateway.js';
import { md5OfBase64, RobotContentSchema } from './schemas/robot.js';
import { DEFAULT_SPLIT_MAX_PARTS, type SplitSettings, splitContent } from './split.js';
import type { RobotMessageRequest, RobotSegment, ValidationIssue, ValidationResult } from './types.js';

/** What the gateway's config says about a robot that shapes its messages. */
export interface RobotSettings {
  /** Who the robot's text and markdown messages mention when they name nobody (`robots.<name>.mentions`). */
  mentions?: { users?: readonly string[]; mobiles?: readonly string[] };
  split?: SplitSettings;
}

/** The gateway fields a robot's message takes: those of an app's that do not address members or WeCom's flags. */
export const RobotFieldsSchema = v.object({
  robot: v.pipe(
    v.string(),
    v.nonEmpty('must not be empty'),
    v.maxLength(G.maxAppChars, (issue) => `${issue.received} characters, max ${G.maxAppChars}`),
    v.regex(/^[A-Za-z0-9_-]*$/, 'may only contain letters, digits, _ and -'),
  ),
  ...v.pick(GatewayFieldsSchema, ['priority', 'callback_url', 'metadata', 'ttl_seconds', 'split']).entries,
});

const MSG_TYPES: ReadonlySet<string> = new Set(ROBOT_MSG_TYPE_NAMES);
const KNOWN: ReadonlySet<string> = new Set([...Object.keys(RobotFieldsSchema.entries), 'msgtype']);

/** The msgtypes whose long content can be split, their limit and the format the splitter keeps intact. */
const SPLITTABLE = {
  text: { maxBytes: ROBOT_LIMITS.text.maxContentBytes, format: 'text' },
  markdown: { maxBytes: ROBOT_LIMITS.markdown.maxContentBytes, format: 'markdown' },
  // The splitter keeps tables and fenced code whole or reopens them: exactly what markdown_v2 adds.
  markdown_v2: { maxBytes: ROBOT_LIMITS.markdown_v2.maxContentBytes, format: 'markdown' },
} as const;
type SplittableType = keyof typeof SPLITTABLE;

const isSplittable = (t: unknown): t is SplittableType =>
  typeof t === 'string' && Object.hasOwn(SPLITTABLE, t);

/** Unknown top-level keys, app-only fields (named as such) and a second message object. */
function topLevelIssues(body: Record<string, unknown>): ValidationIssue[] {
  const appOnly = appOnlyIssues(body);
  const named = new Set(appOnly.map((i) => i.field));
  const issues = [...appOnly];
  for (const key of Object.keys(body)) {
    if (named.has(key) || KNOWN.has(key)) continue;
    if (MSG_TYPES.has(key)) {
      if (typeof body.msgtype === 'string' && MSG_TYPES.has(body.msgtype) && key !== body.msgtype) {
        issues.push({
          field: key,
          message: `not allowed with msgtype ${body.msgtype}: send exactly one message object`,
        });
      }
      continue;
    }
    if (key === body.msgtype) continue;
    issues.push({ field: key, message: 'unknown field' });
  }
  if (body.metadata !== null && typeof body.metadata === 'object') {
    for (const key of RESERVED_METADATA_KEYS) {
      if (Object.hasOwn(body.metadata, key))
        issues.push({ field: `metadata.${key}`, message: 'reserved key' });
    }
  }
  return issues;
}

/**
 * The robot's default mentions on a message that names nobody: text gets `mentioned_list` and
 * `mentioned_mobile_list`, markdown `<@userid>` after its content (markdown has no mobile mentions, and markdown_v2
 * no mentions at all).
 */
function withDefaultMentions(
  body: Record<string, unknown>,
  settings: RobotSettings | undefined,
): Record<string, unknown> {
  const users = settings?.mentions?.users ?? [];
  const mobiles = settings?.mentions?.mobiles ?? [];
  const object = typeof body.msgtype === 'string' ? body[body.msgtype] : undefined;
  if (!isPlainObject(object) || typeof object.content !== 'string') return body;
  if (
    body.msgtype === 'text' &&
    object.mentioned_list === undefined &&
    object.mentioned_mobile_list === undefined
  ) {
    const mentions = {
      ...(users.length > 0 ? { mentioned_list: [...users] } : {}),
      ...(mobiles.length > 0 ? { mentioned_mobile_list: [...mobiles] } : {}),
    };
    return { ...body, text: { ...object, ...mentions } };
  }
  const named = users.filter((u) => u !== '@all');
  if (body.msgtype === 'markdown' && named.length > 0 && !/<@[^>\s]+>/.test(object.content)) {
    const tags = named.map((u) => `<@${u}>`).join('');
    return { ...body, markdown: { ...object, content: `${object.content}\n${tags}` } };
  }
  return body;
}

/** Long content to send in parts: its pieces, each within the robot's limit; or the issue when it needs too many. */
function planSplit(
  body: Record<string, unknown>,
  maxParts: number,
): { msgtype: SplittableType; content: string; pieces: string[] } | { issue: ValidationIssue } | undefined {
  const msgtype = body.msgtype;
  if (!isSplittable(msgtype)) return undefined;
  const object = body[msgtype];
  if (!isPlainObject(object) || typeof object.content !== 'string') return undefined;
  const { maxBytes, format } = SPLITTABLE[msgtype];
  if (utf8Bytes(object.content) <= maxBytes) return undefined;
  const tag = createHash('sha256').update(object.content).digest('hex').slice(0, 4);
  const split = splitContent(object.content, { maxBytes, maxParts, format, tag });
  if (split.kind === 'too-many-parts') {
    const message = `${utf8Bytes(object.content)} bytes would need ${split.needed} parts, more than the cap of ${maxParts}`;
    return { issue: { field: `${msgtype}.content`, message } };
  }
  const pieces = split.kind === 'parts' ? split.parts.map((p) => p.content) : [split.content];
  return { msgtype, content: object.content, pieces };
}

/**
 * Validates a `POST /v1/messages` body addressed to a group robot (`robot`): the robot's `webhook/send` body plus
 * the gateway fields an app's message takes too, checked against the robot's limits. An app's field or type is
 * named as such. Collects every issue (up to 20), each naming its field.
 *
 * @example
 * validateRobotRequest({ robot: 'oncall', msgtype: 'markdown_v2', markdown_v2: { content: '| a | b |\n|---|---|' } })
 * // { ok: true, value: { robot: 'oncall', msgtype: 'markdown_v2', content: { content: '…' }, priority: 'normal' } }
 */
export function validateRobotRequest(
  input: Record<string, unknown>,
  settingsOf?: (robot: string) => RobotSettings | undefined,
): ValidationResult {
  const settings = typeof input.robot === 'string' ? settingsOf?.(input.robot) : undefined;
  const withMentions = withDefaultMentions(input, settings);
  const wantsSplit = typeof input.split === 'boolean' ? input.split : (settings?.split?.byDefault ?? false);
  const plan = wantsSplit
    ? planSplit(withMentions, settings?.split?.maxParts ?? DEFAULT_SPLIT_MAX_PARTS)
    : undefined;
  if (plan && 'issue' in plan) return { ok: false, issues: [plan.issue] };
  // Every other check runs on the body as its first part will be sent; the parts differ only in content.
  const body = plan
    ? {
        ...withMentions,
        [plan.msgtype]: { ...(withMentions[plan.msgtype] as object), content: plan.pieces[0] },
      }
    : withMentions;

  const fields = v.safeParse(RobotFieldsSchema, body, PARSE_CONFIG);
  const content = v.safeParse(RobotContentSchema, body, PARSE_CONFIG);
  const issues = [
    ...topLevelIssues(body),
    ...(fields.issues ? toValidationIssues(fields.issues) : []),
    ...(content.issues ? toValidationIssues(content.issues) : []),
  ];
  if (content.success && content.output.msgtype === 'image') {
    const { base64, md5 } = content.output.image;
    if (md5 !== undefined && md5.toLowerCase() !== md5OfBase64(base64)) {
      issues.push({
        field: 'image.md5',
        message: 'does not match the image: the md5 of its raw bytes differs',
      });
    }
  }
  if (issues.length > 0 || !fields.success || !content.success) {
    const long = !wantsSplit && isSplittable(body.msgtype) ? `${body.msgtype}.content` : undefined;
    const hinted = issues.map((i) =>
      i.field === long && / bytes, max /.test(i.message)
        ? { ...i, message: `${i.message}; send "split": true to have it delivered in parts` }
        : i,
    );
    return { ok: false, issues: finalizeIssues(hinted) };
  }

  const f = fields.output;
  const msgtype = content.output.msgtype;
  let object = (content.output as Record<string, unknown>)[msgtype] as Record<string, unknown>;
  // WeCom needs the md5 beside an image; a client may leave it to the gateway.
  if (content.output.msgtype === 'image') {
    const { base64 } = content.output.image;
    object = { base64, md5: md5OfBase64(base64) };
  }
  // People are mentioned once, on the last part (where markdown's `<@userid>` tags end up too).
  const { mentioned_list: _users, mentioned_mobile_list: _mobiles, ...unmentioned } = object;
  const segments: RobotSegment[] | undefined =
    plan && plan.pieces.length > 1
      ? plan.pieces.map((piece, i, all) => ({
          msgtype: plan.msgtype,
          content: { ...(i === all.length - 1 ? object : unmentioned), content: piece },
        }))
      : undefined;
  const value: RobotMessageRequest = {
    robot: f.robot,
    priority: f.priority,
    ...(f.callback_url !== undefined && { callbackUrl: f.callback_url }),
    ...(f.metadata !== undefined && { metadata: f.metadata }),
    msgtype,
    // The record keeps the whole content the client sent; the parts are what goes to WeCom.
    content: plan ? { ...object, content: plan.content } : object,
    ...(f.ttl_seconds !== undefined && { ttlSeconds: f.ttl_seconds }),
    ...(segments && { segments }),
  };
  return { ok: true, value };
}

import * as v from 'valibot';
import { LANES } from '#lib/resources/index.js';
import { isPlainObject, parseOffsetTime } from '#lib/util/index.js';
import { EMPTY, maxChars, oneOf } from '../issues.js';
import { GATEWAY_LIMITS as G, LIMITS } from '../limits.js';

/** Gateway fields (SPEC §2) and WeCom's send flags, validated apart from the msgtype object. */

const maxKeyChars = (max: number) =>
  v.maxGraphemes<string, number, (issue: v.MaxGraphemesIssue<string, number>) => string>(
    max,
    (issue) => `key is ${issue.received} characters, max ${max}`,
  );

/** Syntax only here; lib/net checks the resolved addresses at ingest, and again when the webhook is sent. */
function isAbsoluteHttpsUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return url.protocol === 'https:' && url.hostname !== '';
}

/** An RFC 3339 time with its offset (the OpenAPI document names this check: a `date-time`). */
function isOffsetTime(value: string): boolean {
  return parseOffsetTime(value) !== undefined;
}

const MetadataSchema = v.pipe(
  v.custom<Record<string, unknown>>(isPlainObject, 'must be an object'),
  v.record(
    v.pipe(v.string(), v.nonEmpty('key must not be empty'), maxKeyChars(G.maxMetadataKeyChars)),
    v.pipe(v.string(), maxChars(G.maxMetadataValueChars)),
  ),
  v.maxEntries(G.maxMetadataPairs, (issue) => `${issue.received} pairs, max ${G.maxMetadataPairs}`),
);

export const GatewayFieldsSchema = v.object({
  app: v.pipe(
    v.string(),
    v.nonEmpty(EMPTY),
    maxChars(G.maxAppChars),
    v.regex(/^[A-Za-z0-9_-]*$/, 'may only contain letters, digits, _ and -'),
  ),
  priority: v.optional(oneOf(LANES), 'normal'),
  callback_url: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(
        G.maxCallbackUrlChars,
        (issue) => `${issue.received} characters, max ${G.maxCallbackUrlChars}`,
      ),
      v.check(isAbsoluteHttpsUrl, 'must be an absolute https: URL'),
    ),
  ),
  metadata: v.optional(MetadataSchema),
  /** Seconds after acceptance when an undelivered message is dropped (status `expired`): alerts worthless later. */
  ttl_seconds: v.optional(
    v.pipe(
      v.number(),
      v.integer('must be an integer number of seconds'),
      v.minValue(1, (issue) => `${issue.received} seconds, min 1`),
      v.maxValue(G.maxTtlSeconds, (issue) => `${issue.received} seconds, max ${G.maxTtlSeconds}`),
    ),
  ),
  /**
   * RFC 3339 with an offset (`2026-12-07T09:00:00+08:00`, `…Z`): deliver then, not before (docs/scheduling.md). A
   * time already past sends at once; more than 30 days ahead is refused by ingest, which knows the time.
   */
  send_at: v.optional(
    v.pipe(
      v.string('must be an RFC 3339 time with an offset, e.g. 2026-12-07T09:00:00+08:00'),
      v.check(
        isOffsetTime,
        'must be an RFC 3339 time with an offset, e.g. 2026-12-07T09:00:00+08:00 or 2026-12-07T01:00:00Z',
      ),
    ),
  ),
  /** `false`: send now even inside the app's quiet hours (a key needs the scope `quiet-hours:bypass`). */
  quiet_hours: v.optional(v.literal(false, 'may only be false (to send inside quiet hours)')),
  /**
   * `false`: send without WeCom's duplicate check. Identical content to the same recipients is then delivered
   * every time, and a resend after a lost answer may be delivered twice (docs/concepts/delivery.md, "Duplicates").
   */
  duplicate_protection: v.optional(v.boolean('must be true or false')),
  /**
   * markdown only: send it as text or a textcard instead (the WeChat plugin does not render markdown), overriding
   * the app's markdownFallback; `none` keeps markdown. Ignored for other msgtypes.
   */
  markdown_fallback: v.optional(oneOf(['text', 'textcard', 'none'])),
  /**
   * text and markdown only: content over WeCom's byte limit is sent as ordered parts instead of refused (overrides
   * the app's `split`). Ignored for content that fits and for other msgtypes.
   */
  split: v.optional(v.boolean('must be true or false')),
  /** safe: 0 shareable, 1 watermarked and not shareable, 2 shareable inside the corp (mpnews only). */
  safe: v.optional(oneOf([0, 1, 2])),
  enable_id_trans: v.optional(oneOf([0, 1])),
  enable_duplicate_check: v.optional(oneOf([0, 1])),
  /** "默认1800s,最大不超过4小时". */
  duplicate_check_interval: v.optional(
    v.pipe(
      v.number(),
      v.integer('must be an integer number of seconds'),
      v.minValue(1, (issue) => `${issue.received} seconds, min 1`),
      v.maxValue(
        LIMITS.options.maxDuplicateCheckIntervalSeconds,
        (issue) => `${issue.received} seconds, max ${LIMITS.options.maxDuplicateCheckIntervalSeconds}`,
      ),
    ),
  ),
});

export type GatewayFields = v.InferOutput<typeof GatewayFieldsSchema>;

/** Keys valibot's record() skips silently; rejected so metadata is echoed back exactly as sent. */
export const RESERVED_METADATA_KEYS: readonly string[] = ['__proto__', 'prototype', 'constructor'];

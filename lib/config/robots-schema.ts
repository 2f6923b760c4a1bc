import * as v from 'valibot';
import { DeliverySchema, WebhookSchema } from './delivery-schema.js';

/**
 * Config for group robots (`robots.<name>`, "消息推送", formerly 群机器人): a robot posts to the one group chat it was
 * added to, through `webhook/send?key=…` (https://developer.work.weixin.qq.com/document/path/91770). Its key is its
 * only credential, so it is a secret like an app's: never logged, never shown, never echoed in an error.
 */

/** WeCom: "每个机器人发送的消息不能超过20条/分钟" (path/91770, 消息发送频率限制). */
export const ROBOT_PER_MINUTE = 20;

export const ROBOT_QUOTA_DEFAULTS = {
  perMinute: ROBOT_PER_MINUTE,
  safetyMargin: 0.2,
  normalShare: 0.8,
} as const;

/** The query parameter a robot's webhook URL carries its key in. */
const KEY_PARAM = 'key';
/** A key as WeCom issues them (a UUID); a little wider, so a future format still reads. */
const KEY_SHAPE = /^[A-Za-z0-9_-]{8,128}$/;

/**
 * A robot's key from what a user pasted: the key itself, or the whole webhook URL (`…/cgi-bin/webhook/send?key=…`),
 * which tools want in different places — WeCom answers 93000 to the wrong one. Undefined when neither reads.
 *
 * @example robotKeyOf('https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=693a91f6-7xxx') // '693a91f6-7xxx'
 */
export function robotKeyOf(pasted: string): string | undefined {
  const text = pasted.trim();
  if (KEY_SHAPE.test(text)) return text;
  if (!URL.canParse(text)) return undefined;
  const url = new URL(text);
  if (!url.pathname.includes('/cgi-bin/webhook/')) return undefined;
  const key = url.searchParams.get(KEY_PARAM) ?? '';
  return KEY_SHAPE.test(key) ? key : undefined;
}

// The messages below never include the value: it is the robot's secret.
const RobotKeySchema = v.pipe(
  v.string('must be a string'),
  v.check(
    (s) => robotKeyOf(s) !== undefined,
    "must be the robot's key, or its whole webhook URL (https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=…)",
  ),
  v.transform((s) => robotKeyOf(s) as string),
);

const nonEmpty = v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'));

/**
 * Who a robot's text and markdown messages mention when the message names nobody itself: userids (`<@userid>` in
 * markdown, `mentioned_list` in text; `@all` for everyone) and, in text only, mobile numbers.
 */
const MentionsSchema = v.strictObject({
  users: v.optional(v.pipe(v.array(nonEmpty), v.maxLength(100, 'at most 100 users'))),
  mobiles: v.optional(
    v.pipe(
      v.array(
        v.pipe(
          v.string('must be a string'),
          v.regex(/^(@all|\+?[0-9-]{5,20})$/, 'must be a phone number or @all'),
        ),
      ),
      v.maxLength(100, 'at most 100 mobiles'),
    ),
  ),
});

const RobotQuotaSchema = v.strictObject({
  perMinute: v.optional(
    v.pipe(
      v.number('must be a number'),
      v.integer('must be an integer'),
      v.minValue(1, 'must be >= 1'),
      v.maxValue(ROBOT_PER_MINUTE, 'WeCom allows a robot at most 20 messages a minute'),
    ),
    ROBOT_QUOTA_DEFAULTS.perMinute,
  ),
  safetyMargin: v.optional(
    v.pipe(v.number('must be a number'), v.minValue(0, 'must be >= 0'), v.maxValue(0.9, 'must be <= 0.9')),
    ROBOT_QUOTA_DEFAULTS.safetyMargin,
  ),
  normalShare: v.optional(
    v.pipe(v.number('must be a number'), v.minValue(0.1, 'must be >= 0.1'), v.maxValue(1, 'must be <= 1')),
    ROBOT_QUOTA_DEFAULTS.normalShare,
  ),
});

export const RobotSchema = v.strictObject({
  /** The robot's key, or its whole webhook URL (read down to the key). Secret. */
  key: RobotKeySchema,
  /** Who its text and markdown messages mention by default. */
  mentions: v.optional(MentionsSchema),
  /** WeCom's 20 a minute, the margin kept and normal's share; optional as a whole. */
  quota: v.optional(RobotQuotaSchema, {}),
  /**
   * How long messages wait (budget) and how long they wait for a configuration fix. A robot has no duplicate check
   * (`webhook/send` takes no such flag), so there is no `duplicateCheckSeconds`.
   */
  delivery: v.optional(v.pick(DeliverySchema, ['budgetSeconds', 'configErrorHoldSeconds'])),
  /** Webhooks for this robot's messages: the default target, signing secrets, allowed ports, wanted events. */
  webhook: v.optional(WebhookSchema),
  /** Long text and markdown is split into ordered parts unless a message says `"split": false`. */
  split: v.optional(v.boolean('must be true or false')),
  /** The most parts one split message may become (default 10). */
  splitMaxParts: v.optional(
    v.pipe(
      v.number(),
      v.integer('must be a whole number'),
      v.minValue(2, 'must be at least 2'),
      v.maxValue(ROBOT_PER_MINUTE, 'must be at most 20: WeCom takes 20 messages a minute from a robot'),
    ),
  ),
});

const ROBOT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export const RobotsSchema = v.record(
  v.pipe(v.string(), v.regex(ROBOT_NAME, 'robot names are 1-64 of [A-Za-z0-9_-]')),
  RobotSchema,
);

export type RobotConfig = v.InferOutput<typeof RobotSchema>;
export type RobotQuotaConfig = RobotConfig['quota'];

import * as v from 'valibot';
// Deep imports: the schedule index is small, but the config must not pull anything that imports lib/config back.
import { minutesOf, WEEKDAYS } from '#lib/schedule/quiet-hours.js';
import { DEFAULT_SPREAD_SECONDS } from '#lib/schedule/spread.js';
import { isTimeZone } from '#lib/schedule/zoned.js';
import { DeliverySchema, WebhookSchema } from './delivery-schema.js';
import { HooksSchema, hooksCrossReferences, PushKeySchema } from './hooks-schema.js';
import { RobotsSchema } from './robots-schema.js';
import { TemplatesSchema } from './templates-schema.js';

/**
 * WeCom limits that the defaults below are derived from (https://developer.work.weixin.qq.com/document/path/90236
 * and the "频率限制" page): per app per member 30 messages/min and 1000/hour (excess silently dropped), per corp
 * per API 10,000 calls/min and 150,000/hour, per app per day seats × 200 person-times.
 */
export const QUOTA_DEFAULTS = {
  perMinute: 10_000,
  perHour: 150_000,
  perDay: 100_000,
  perMemberPerMinute: 30,
  perMemberPerHour: 1_000,
  safetyMargin: 0.2,
  /** Share of each quota that normal-priority messages may use; the rest is kept for `high`. */
  normalShare: 0.8,
} as const;

const nonEmpty = (what: string) =>
  v.pipe(v.string(`${what} must be a string`), v.minLength(1, `${what} must not be empty`));
const positiveInt = v.pipe(
  v.number('must be a number'),
  v.integer('must be an integer'),
  v.minValue(1, 'must be >= 1'),
);

const QuotaSchema = v.strictObject({
  perMinute: v.optional(positiveInt, QUOTA_DEFAULTS.perMinute),
  perHour: v.optional(positiveInt, QUOTA_DEFAULTS.perHour),
  perDay: v.optional(positiveInt, QUOTA_DEFAULTS.perDay),
  perMemberPerMinute: v.optional(
    v.pipe(positiveInt, v.maxValue(30, 'WeCom allows at most 30 messages per member per minute')),
    QUOTA_DEFAULTS.perMemberPerMinute,
  ),
  perMemberPerHour: v.optional(
    v.pipe(positiveInt, v.maxValue(1000, 'WeCom allows at most 1000 messages per member per hour')),
    QUOTA_DEFAULTS.perMemberPerHour,
  ),
  safetyMargin: v.optional(
    v.pipe(v.number('must be a number'), v.minValue(0, 'must be >= 0'), v.maxValue(0.9, 'must be <= 0.9')),
    QUOTA_DEFAULTS.safetyMargin,
  ),
  normalShare: v.optional(
    v.pipe(v.number('must be a number'), v.minValue(0.1, 'must be >= 0.1'), v.maxValue(1, 'must be <= 1')),
    QUOTA_DEFAULTS.normalShare,
  ),
});

const ID = v.pipe(v.string(), v.regex(/^\d{1,20}$/, 'must be a numeric id'));

/**
 * How many people a party, a tag or `@all` reaches when the app may not read WeCom's contacts (otherwise the gateway
 * resolves them itself). Count a party's sub-parties too. `memberShare`: the share of every member's per-minute and
 * per-hour allowance kept for these broadcasts (each broadcast uses one unit of it; direct messages get the rest).
 */
const BroadcastSchema = v.strictObject({
  allSize: v.optional(positiveInt),
  partySizes: v.optional(v.record(ID, positiveInt)),
  tagSizes: v.optional(v.record(ID, positiveInt)),
  defaultSize: v.optional(positiveInt),
  memberShare: v.optional(
    v.pipe(
      v.number('must be a number'),
      v.minValue(0.05, 'must be >= 0.05'),
      v.maxValue(0.9, 'must be <= 0.9'),
    ),
    0.25,
  ),
});

const wallClock = v.pipe(
  v.string('must be a string like "22:00"'),
  v.check((c) => minutesOf(c) !== undefined, 'must be a time of day HH:MM, 00:00-23:59'),
);

/**
 * One quiet-hours rule (lib/schedule `QuietHoursRule`): messages of a held priority that would go inside the window
 * are scheduled for its end (docs/scheduling.md).
 */
const QuietHoursRuleSchema = v.pipe(
  v.strictObject({
    timeZone: v.pipe(
      v.string('must be an IANA time zone such as "Asia/Shanghai"'),
      v.check(isTimeZone, 'must be an IANA time zone such as "Asia/Shanghai"'),
    ),
    start: wallClock,
    end: wallClock,
    days: v.optional(
      v.pipe(
        v.array(v.picklist(WEEKDAYS, `must be one of ${WEEKDAYS.join(', ')}`)),
        v.minLength(1, 'must list at least one day (leave it out for every day)'),
      ),
    ),
    priorities: v.optional(
      v.pipe(
        v.array(v.picklist(['high', 'normal'], 'must be high or normal')),
        v.minLength(1, 'must list at least one priority'),
      ),
    ),
    recipients: v.optional(
      v.strictObject({
        touser: v.optional(v.array(nonEmpty('userid'))),
        toparty: v.optional(v.array(nonEmpty('party id'))),
        totag: v.optional(v.array(nonEmpty('tag id'))),
      }),
    ),
  }),
  v.forward(
    v.check(
      (r) => r.start !== r.end || (r.days !== undefined && r.days.length < 7),
      'equals start: a 24-hour window on every day would hold messages for ever; name the days it covers',
    ),
    ['end'],
  ),
);

/** A rule, or several (e.g. one for the whole app and a longer one for some recipients). */
const QuietHoursSchema = v.union(
  [
    QuietHoursRuleSchema,
    v.pipe(v.array(QuietHoursRuleSchema), v.minLength(1, 'must hold at least one rule')),
  ],
  'must be a rule {"timeZone","start","end",…} or an array of rules',
);

/** How scheduled messages of the app are released (docs/scheduling.md, "Spread"). */
const ScheduleSchema = v.strictObject({
  /** Messages due at one instant are released over this many seconds after it (0: exactly at their time). */
  spreadSeconds: v.optional(
    v.pipe(
      v.number('must be a number'),
      v.integer('must be an integer'),
      v.minValue(0, 'must be >= 0'),
      v.maxValue(3_600, 'must be <= 3600'),
    ),
    DEFAULT_SPREAD_SECONDS,
  ),
});

const AppSchema = v.strictObject({
  corpId: nonEmpty('corpId'),
  agentId: v.pipe(
    v.number('agentId must be a number'),
    v.integer('agentId must be an integer'),
    v.minValue(1),
  ),
  secret: nonEmpty('secret'),
  callback: v.optional(
    v.strictObject({
      token: nonEmpty('token'),
      encodingAESKey: v.pipe(
        v.string(),
        v.regex(
          /^[A-Za-z0-9+/]{43}$/,
          'encodingAESKey must be exactly 43 base64 characters (as shown in WeCom)',
        ),
      ),
    }),
  ),
  quota: v.optional(QuotaSchema, {}),
  /** Optional as a whole (DELIVERY_DEFAULTS apply), so configs and literals written before it stay valid. */
  delivery: v.optional(DeliverySchema),
  /** Webhooks for this app's messages: the default target, signing secrets, allowed ports, wanted events. */
  webhook: v.optional(WebhookSchema),
  /**
   * Markdown is not rendered in the WeChat plugin: convert this app's markdown messages to text or a textcard
   * (lib/messages/markdown-fallback.ts). Absent: sent as markdown.
   */
  markdownFallback: v.optional(v.picklist(['text', 'textcard'], 'must be text or textcard')),
  /** Sizes of broadcasts the app may not resolve through WeCom's contacts API (see BroadcastSchema). */
  broadcast: v.optional(BroadcastSchema),
  /** Message templates by id, sent with `template` + `variables` (lib/config/templates-schema.ts). */
  templates: v.optional(TemplatesSchema),
  /**
   * Long text and markdown of this app is split into ordered parts unless a message says `"split": false`
   * (docs/guides/long-content.md). Absent: only messages that say `"split": true` are split.
   */
  split: v.optional(v.boolean('must be true or false')),
  /**
   * Quiet hours: a message of a held priority (default `normal`) that would go inside a window is scheduled for
   * its end instead (docs/scheduling.md). Absent: no quiet hours.
   */
  quietHours: v.optional(QuietHoursSchema),
  /** Scheduled sends: the spread of releases. Absent: `spreadSeconds` 180. */
  schedule: v.optional(ScheduleSchema),
  /** The most parts one split message may become (default 10): each part is a send to every recipient. */
  splitMaxParts: v.optional(
    v.pipe(
      v.number(),
      v.integer('must be a whole number'),
      v.minValue(2, 'must be at least 2'),
      v.maxValue(30, 'must be at most 30: WeCom takes 30 messages a minute from an app to one member'),
    ),
  ),
});

const APP_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** What an API key may do; each route names the one it needs (lib/resources `ROUTES`). */
export const API_KEY_SCOPES = [
  'messages:write',
  'messages:read',
  'messages:recall',
  'quiet-hours:bypass',
  'admin',
] as const;

const ApiKeySchema = v.strictObject({
  name: nonEmpty('name'),
  sha256: v.pipe(
    v.string(),
    v.regex(/^[0-9a-f]{64}$/, 'must be the lowercase hex SHA-256 of the key (echo -n KEY | sha256sum)'),
  ),
  // A key for robots only lists no app: `apps` or `robots` must name at least one (checked below).
  apps: v.optional(v.array(nonEmpty('app name')), []),
  // Optional without a default so keys built in code stay valid; read as `?? []`.
  /** The group robots (`robots`) the key may send through and read the messages of. */
  robots: v.optional(v.array(nonEmpty('robot name'))),
  // `admin` (the DLQ over HTTP) only when listed: the default is what a sending or reading client needs.
  // `messages:recall` also cancels (takes back a message not yet sent); `quiet-hours:bypass` lets a message opt out
  // of its app's quiet hours (`quiet_hours: false`), never granted by default.
  scopes: v.optional(v.array(v.picklist(API_KEY_SCOPES)), [
    'messages:write',
    'messages:read',
    'messages:recall',
  ]),
});

export const GatewayConfigSchema = v.pipe(
  v.strictObject({
    /**
     * Notes for the people who edit the file (JSON has no comments; `config init` writes its guidance here). The
     * gateway ignores it. Only at the top level, so a typo elsewhere is still reported as an unknown field.
     */
    $comment: v.optional(
      v.union([v.string(), v.array(v.string())], 'must be a string or an array of strings'),
    ),
    // May be empty: a freshly deployed stack's secret holds `{"apps":{},"apiKeys":[]}` until the operator stores
    // the real config; the gateway then starts and answers 401 instead of failing every cold start.
    apps: v.record(v.pipe(v.string(), v.regex(APP_NAME, 'app names are 1-64 of [A-Za-z0-9_-]')), AppSchema),
    apiKeys: v.array(ApiKeySchema),
    /** Days a message record (and its status) is kept. */
    retentionDays: v.optional(v.pipe(positiveInt, v.maxValue(3650)), 30),
    /** Hours an Idempotency-Key is remembered. */
    idempotencyHours: v.optional(v.pipe(positiveInt, v.maxValue(24 * 7)), 24),
    /** Local stack only: allow webhooks to loopback (never set this in AWS). */
    allowLoopbackWebhooks: v.optional(v.boolean(), false),
    // Optional without a default so configs built in code (tests, the local stack) stay valid; read as `?? {}`.
    /** Inbound webhooks from SaaS systems: POST /v1/hooks/{name}/{token} (lib/config/hooks-schema.ts). */
    hooks: v.optional(HooksSchema),
    /** One-URL push keys (ServerChan style sendkeys). */
    pushKeys: v.optional(v.array(PushKeySchema)),
    // Optional without a default, like hooks: read as `?? {}`.
    /** Group robots ("消息推送"): each posts to the group chat it was added to (lib/config/robots-schema.ts). */
    robots: v.optional(RobotsSchema),
  }),
  v.forward(
    v.check(
      (c) => c.apiKeys.every((k) => k.apps.every((a) => Object.hasOwn(c.apps, a))),
      'every app listed by an API key must be configured under apps',
    ),
    ['apiKeys'],
  ),
  v.forward(
    v.check(
      (c) => c.apiKeys.every((k) => (k.robots ?? []).every((r) => Object.hasOwn(c.robots ?? {}, r))),
      'every robot listed by an API key must be configured under robots',
    ),
    ['apiKeys'],
  ),
  v.forward(
    v.check(
      (c) => c.apiKeys.every((k) => k.apps.length + (k.robots?.length ?? 0) > 0),
      'every API key must list at least one app (apps) or robot (robots)',
    ),
    ['apiKeys'],
  ),
  hooksCrossReferences(),
);

export type GatewayConfig = v.InferOutput<typeof GatewayConfigSchema>;
export type AppConfig = GatewayConfig['apps'][string];
export type QuotaConfig = AppConfig['quota'];
export type DeliveryConfig = AppConfig['delivery'];
export type WebhookConfig = NonNullable<AppConfig['webhook']>;
export type BroadcastConfig = NonNullable<AppConfig['broadcast']>;
export type QuietHoursConfig = NonNullable<AppConfig['quietHours']>;
export type ApiKeyConfig = GatewayConfig['apiKeys'][number];
export type { HookConfig, HookRule, HookSource, PushKeyConfig, RecipientsConfig } from './hooks-schema.js';
export type { RobotConfig, RobotQuotaConfig } from './robots-schema.js';
export type { TemplateConfig } from './templates-schema.js';

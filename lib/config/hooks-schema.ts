import * as v from 'valibot';
import { parseRecipients, pathOf } from '#lib/messages/index.js';
import { templateProblem } from '#lib/util/index.js';

/**
 * Config for inbound webhooks (`hooks`, `POST /v1/hooks/{hook}/{token}`) and one-URL push keys (`pushKeys`,
 * ServerChan style `/v1/push/{sendkey}`). Cross-references to `apps` are checked in schema.ts.
 */

export const HOOK_SOURCES = ['alertmanager', 'grafana', 'github', 'gitlab', 'sentry', 'generic'] as const;
export const HOOK_MSGTYPES = ['markdown', 'text', 'textcard', 'template_card'] as const;
/** Sources whose deliveries can be authenticated beyond the URL token, and what `secret` means for each. */
export const SECRET_SOURCES: Readonly<Partial<Record<(typeof HOOK_SOURCES)[number], string>>> = {
  github: 'the webhook secret; X-Hub-Signature-256 is then required and verified',
  gitlab: 'the secret token; X-Gitlab-Token is then required and compared',
  sentry: "the integration's client secret; Sentry-Hook-Signature is then required and verified",
};

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const SHA256_HEX = v.pipe(
  v.string(),
  v.regex(/^[0-9a-f]{64}$/, 'must be the lowercase hex SHA-256 of the token (echo -n TOKEN | sha256sum)'),
);
const nonEmpty = v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'));
const priority = v.picklist(['high', 'normal'], 'must be high or normal');

const recipientList = v.union(
  [v.string(), v.array(v.union([v.string(), v.number()]))],
  'must be a string like "a|b" or an array',
);

/** Same rules as a message's touser/toparty/totag (lib/messages/recipients.ts), at least one of them. */
export const RecipientsSchema = v.pipe(
  v.strictObject({
    touser: v.optional(recipientList),
    toparty: v.optional(recipientList),
    totag: v.optional(recipientList),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    for (const issue of parseRecipients(dataset.value).issues) {
      addIssue({ message: `${issue.field}: ${issue.message}` });
    }
  }),
);

const compiles = (re: string) => {
  try {
    new RegExp(re);
    return true;
  } catch {
    return false;
  }
};

/** A payload value to match: exact string, any of several, or a regular expression matching the whole value. */
const MatchValueSchema = v.union(
  [
    v.string(),
    v.pipe(v.array(v.string()), v.minLength(1, 'must list at least one value')),
    v.strictObject({ regex: v.pipe(v.string(), v.check(compiles, 'must be a valid regular expression')) }),
  ],
  'must be a string, an array of strings or { "regex": "…" }',
);

/**
 * A routing rule: when every `match` entry holds (keys are dotted paths into the vendor's JSON payload, e.g.
 * `commonLabels.team`, or `$event`), the rule applies. All matching rules apply in order until one has `stop`.
 * See lib/hooks/routing.ts for how `to` and `priority` combine.
 */
export const HookRuleSchema = v.strictObject({
  match: v.pipe(
    v.record(nonEmpty, MatchValueSchema),
    v.check((m) => Object.keys(m).length > 0, 'must have at least one entry'),
  ),
  to: v.optional(RecipientsSchema),
  priority: v.optional(priority),
  /** Accept the delivery but send nothing (e.g. pushes to branches nobody watches). */
  ignore: v.optional(v.boolean()),
  /** Evaluate no later rules when this one matches. */
  stop: v.optional(v.boolean()),
});

const validTimeZone = (tz: string) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
};

export const HookSchema = v.pipe(
  v.strictObject({
    source: v.picklist(HOOK_SOURCES, `must be one of ${HOOK_SOURCES.join(', ')}`),
    app: nonEmpty,
    /** Default recipients; rules may replace them. */
    to: RecipientsSchema,
    /** Defaults per source: markdown for alerts and generic, template_card (link button) for GitHub/GitLab/Sentry. */
    msgtype: v.optional(v.picklist(HOOK_MSGTYPES, `must be one of ${HOOK_MSGTYPES.join(', ')}`)),
    /** A mustache template rendered against the payload instead of the built-in rendering (generic has a default). */
    template: v.optional(
      v.pipe(
        nonEmpty,
        v.rawCheck(({ dataset, addIssue }) => {
          const problem = dataset.typed ? templateProblem(dataset.value) : undefined;
          if (problem) addIssue({ message: `does not parse: ${problem}` });
        }),
      ),
    ),
    /**
     * Send one of the app's message templates (`apps.<app>.templates`) instead of the rendered notice: `id`, and
     * each variable as a mustache template over the payload (`{"service": "{{repository.name}}"}`). The app's
     * template then decides the message and checks the values (docs/templates.md).
     */
    appTemplate: v.optional(
      v.strictObject({
        id: nonEmpty,
        variables: v.optional(
          v.record(
            nonEmpty,
            v.pipe(
              v.string('must be a string'),
              v.rawCheck(({ dataset, addIssue }) => {
                const problem = dataset.typed ? templateProblem(dataset.value) : undefined;
                if (problem) addIssue({ message: `does not parse: ${problem}` });
              }),
            ),
          ),
        ),
      }),
    ),
    /** Fixed priority; without it the source decides (alert severity critical → high) and rules may raise it. */
    priority: v.optional(priority),
    /**
     * Deliveries are sent this many seconds after they arrive (`send_at`, docs/scheduling.md): a digest's quiet
     * minute, or time for a resolved alert to cancel its firing one. Absent: sent at once.
     */
    delaySeconds: v.optional(
      v.pipe(
        v.number('must be a number'),
        v.integer('must be an integer'),
        v.minValue(1, 'must be >= 1 (leave it out to send at once)'),
        v.maxValue(30 * 86_400, 'must be <= 2592000 (30 days, the furthest a message may be scheduled)'),
      ),
    ),
    secret: v.optional(nonEmpty),
    /** SHA-256 (hex) of the token in the hook URL, like API keys. */
    tokenSha256: SHA256_HEX,
    rules: v.optional(v.array(HookRuleSchema)),
    /** IANA time zone for times shown in messages. */
    timeZone: v.optional(
      v.pipe(v.string(), v.check(validTimeZone, 'must be an IANA time zone such as Asia/Shanghai')),
      'UTC',
    ),
    /**
     * Alertmanager and Grafana: notifications of one group with the same alerts and status within this many seconds
     * are one delivery (their retries); a later repeat (repeat_interval) is a new message. Default 300 s, the
     * default group_interval.
     */
    dedupSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(86_400)), 300),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const hook = dataset.value;
    if (hook.secret !== undefined && SECRET_SOURCES[hook.source] === undefined) {
      addIssue({
        message: `source ${hook.source} sends no signature or token header; use the URL token (secret is for ${Object.keys(SECRET_SOURCES).join(', ')})`,
        path: pathOf(hook, 'secret'),
      });
    }
    if (hook.appTemplate !== undefined && (hook.template !== undefined || hook.msgtype !== undefined)) {
      addIssue({
        message: 'appTemplate decides the message: give appTemplate, or template/msgtype, not both',
        path: pathOf(hook, 'appTemplate'),
      });
    }
    if (
      hook.appTemplate === undefined &&
      (hook.template !== undefined || hook.source === 'generic') &&
      hook.msgtype === 'template_card'
    ) {
      addIssue({
        message: 'templates (and the generic source) render markdown; use msgtype markdown, text or textcard',
        path: pathOf(hook, 'msgtype'),
      });
    }
  }),
);

/** ServerChan-style push: the sendkey in the URL picks the app and recipients. */
export const PushKeySchema = v.strictObject({
  name: nonEmpty,
  sha256: SHA256_HEX,
  app: nonEmpty,
  to: RecipientsSchema,
  /** markdown (default: title as heading, desp as body), text or textcard (via the Markdown fallback). */
  msgtype: v.optional(
    v.picklist(['markdown', 'text', 'textcard'], 'must be markdown, text or textcard'),
    'markdown',
  ),
  priority: v.optional(priority, 'normal'),
  /**
   * Send one of the app's message templates instead: the push's `title`, `desp` and `short` (those given) are its
   * variables, so the template must declare each one a push sends (docs/templates.md).
   */
  template: v.optional(nonEmpty),
});

export const HooksSchema = v.record(
  v.pipe(v.string(), v.regex(NAME, 'hook names are 1-64 of [A-Za-z0-9_-]')),
  HookSchema,
);

export type HookConfig = v.InferOutput<typeof HookSchema>;
export type HookRule = v.InferOutput<typeof HookRuleSchema>;
export type HookSource = (typeof HOOK_SOURCES)[number];
export type HookMsgType = (typeof HOOK_MSGTYPES)[number];
export type PushKeyConfig = v.InferOutput<typeof PushKeySchema>;
export type RecipientsConfig = v.InferOutput<typeof RecipientsSchema>;

interface CrossRefInput {
  apps: Record<string, { templates?: Record<string, unknown> }>;
  hooks?: Record<string, { app: string; appTemplate?: { id: string } }>;
  pushKeys?: readonly { app: string; sha256: string; name: string; template?: string }[];
}

/** Whether `app` has a template `id`; an unknown app is reported on its own. */
const hasTemplate = (config: CrossRefInput, app: string, id: string): boolean =>
  !Object.hasOwn(config.apps, app) || Object.hasOwn(config.apps[app]?.templates ?? {}, id);

/** hooks.*.app and pushKeys[*].app must name configured apps; push key digests must be unique. */
export const hooksCrossReferences = <T extends CrossRefInput>() =>
  v.rawCheck<T>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const config = dataset.value;
    for (const [name, hook] of Object.entries(config.hooks ?? {})) {
      if (!Object.hasOwn(config.apps, hook.app)) {
        addIssue({
          message: `app "${hook.app}" is not configured under apps`,
          path: pathOf(config, 'hooks', name, 'app'),
        });
      }
      if (hook.appTemplate !== undefined && !hasTemplate(config, hook.app, hook.appTemplate.id)) {
        addIssue({
          message: `app "${hook.app}" has no template "${hook.appTemplate.id}"`,
          path: pathOf(config, 'hooks', name, 'appTemplate', 'id'),
        });
      }
    }
    const seen = new Map<string, string>();
    (config.pushKeys ?? []).forEach((key, index) => {
      if (!Object.hasOwn(config.apps, key.app)) {
        addIssue({
          message: `app "${key.app}" is not configured under apps`,
          path: pathOf(config, 'pushKeys', index, 'app'),
        });
      }
      if (key.template !== undefined && !hasTemplate(config, key.app, key.template)) {
        addIssue({
          message: `app "${key.app}" has no template "${key.template}"`,
          path: pathOf(config, 'pushKeys', index, 'template'),
        });
      }
      const other = seen.get(key.sha256);
      if (other !== undefined) {
        addIssue({
          message: `same key as push key "${other}"`,
          path: pathOf(config, 'pushKeys', index, 'sha256'),
        });
      } else seen.set(key.sha256, key.name);
    });
  });

import * as v from 'valibot';
import { parseRecipients, pathOf } from '#lib/messages/index.js';
import { templateProblem } from '#lib/util/index.js';

/**
 * Config for inbound webhooks (`hooks`, `POST /v1/hooks/{hook}/{token}`) and one-URL push keys (`pushKeys`,
 * ServerChan style `/v1/push/{sendkey}`). Cross-references to `apps` are checked in schema.ts.
 */

export const HOOK_SOURCES = ['alertmanager', 'grafana', 'github', 'gitlab', 'sentry', 'generic'] as const;
export const HOOK_MSGTYPES = ['markdown', 'markdown_v2', 'text', 'textcard', 'template_card'] as const;
/** What a hook or push key to a group robot may send: no textcard (an app's type), markdown_v2 only there. */
export const ROBOT_HOOK_MSGTYPES: readonly HookMsgType[] = [
  'markdown',
  'markdown_v2',
  'text',
  'template_card',
];
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
    /** The app that sends the hook's messages to `to`; or `robot`, a group robot that posts them to its chat. */
    app: v.optional(nonEmpty),
    robot: v.optional(nonEmpty),
    /** Default recipients (an app's hook; a robot has none); rules may replace them. */
    to: v.optional(RecipientsSchema),
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
    for (const issue of channelIssues(hook))
      addIssue({ message: issue.message, path: pathOf(hook, issue.field) });
    if (hook.robot !== undefined && hook.appTemplate !== undefined) {
      addIssue({
        message: "appTemplate is an app's template: a robot's hook renders its own message",
        path: pathOf(hook, 'appTemplate'),
      });
    }
    hook.rules?.forEach((rule, i) => {
      if (hook.robot !== undefined && rule.to !== undefined) {
        addIssue({
          message: 'a robot posts to its group chat: a rule can change its priority, not recipients',
          path: pathOf(hook, 'rules', i, 'to'),
        });
      }
    });
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

/**
 * A hook's or push key's channel: an app with recipients, or a group robot without; and a msgtype the channel takes.
 */
function channelIssues(entry: {
  app?: string | undefined;
  robot?: string | undefined;
  to?: unknown;
  msgtype?: string | undefined;
}): { field: string; message: string }[] {
  if ((entry.app === undefined) === (entry.robot === undefined)) {
    return [{ field: 'app', message: 'give app (with to) or robot, one of them' }];
  }
  const issues: { field: string; message: string }[] = [];
  if (entry.app !== undefined && entry.to === undefined)
    issues.push({ field: 'to', message: 'required with app' });
  if (entry.robot !== undefined && entry.to !== undefined) {
    issues.push({ field: 'to', message: 'a robot posts to its group chat: it takes no recipients' });
  }
  if (entry.robot !== undefined && entry.msgtype === 'textcard') {
    issues.push({
      field: 'msgtype',
      message: `textcard is for apps; a robot takes ${ROBOT_HOOK_MSGTYPES.join(', ')}`,
    });
  }
  if (entry.app !== undefined && entry.msgtype === 'markdown_v2') {
    issues.push({ field: 'msgtype', message: 'markdown_v2 is for robots; an app takes markdown' });
  }
  return issues;
}

/** ServerChan-style push: the sendkey in the URL picks the app and recipients, or a group robot. */
export const PushKeySchema = v.pipe(
  v.strictObject({
    name: nonEmpty,
    sha256: SHA256_HEX,
    app: v.optional(nonEmpty),
    robot: v.optional(nonEmpty),
    to: v.optional(RecipientsSchema),
    /** markdown (default: title as heading, desp as body), text or textcard (via the Markdown fallback); markdown_v2 for a robot. */
    msgtype: v.optional(
      v.picklist(
        ['markdown', 'markdown_v2', 'text', 'textcard'],
        'must be markdown, markdown_v2, text or textcard',
      ),
      'markdown',
    ),
    priority: v.optional(priority, 'normal'),
    /**
     * Send one of the app's message templates instead: the push's `title`, `desp` and `short` (those given) are its
     * variables, so the template must declare each one a push sends (docs/templates.md).
     */
    template: v.optional(nonEmpty),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const key = dataset.value;
    for (const issue of channelIssues(key))
      addIssue({ message: issue.message, path: pathOf(key, issue.field) });
    if (key.robot !== undefined && key.template !== undefined) {
      addIssue({
        message: "template is an app's: a robot's push renders title and desp itself",
        path: pathOf(key, 'template'),
      });
    }
  }),
);

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
  robots?: Record<string, unknown>;
  hooks?: Record<
    string,
    { app?: string | undefined; robot?: string | undefined; appTemplate?: { id: string } | undefined }
  >;
  pushKeys?: readonly {
    app?: string | undefined;
    robot?: string | undefined;
    sha256: string;
    name: string;
    template?: string | undefined;
  }[];
}

/** Whether `app` has a template `id`; an unknown app is reported on its own. */
const hasTemplate = (config: CrossRefInput, app: string, id: string): boolean =>
  !Object.hasOwn(config.apps, app) || Object.hasOwn(config.apps[app]?.templates ?? {}, id);

/** hooks.*.app (robot) and pushKeys[*].app (robot) must name configured apps (robots); push key digests must be unique. */
export const hooksCrossReferences = <T extends CrossRefInput>() =>
  v.rawCheck<T>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const config = dataset.value;
    const robots = config.robots ?? {};
    for (const [name, hook] of Object.entries(config.hooks ?? {})) {
      if (hook.robot !== undefined && !Object.hasOwn(robots, hook.robot)) {
        addIssue({
          message: `robot "${hook.robot}" is not configured under robots`,
          path: pathOf(config, 'hooks', name, 'robot'),
        });
      }
      if (hook.app === undefined) continue;
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
      if (key.robot !== undefined && !Object.hasOwn(robots, key.robot)) {
        addIssue({
          message: `robot "${key.robot}" is not configured under robots`,
          path: pathOf(config, 'pushKeys', index, 'robot'),
        });
      }
      if (key.app !== undefined && !Object.hasOwn(config.apps, key.app)) {
        addIssue({
          message: `app "${key.app}" is not configured under apps`,
          path: pathOf(config, 'pushKeys', index, 'app'),
        });
      }
      if (
        key.app !== undefined &&
        key.template !== undefined &&
        !hasTemplate(config, key.app, key.template)
      ) {
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

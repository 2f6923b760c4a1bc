import * as v from 'valibot';
import { line, link, text } from '#lib/messages/index.js';
import { secretsEqual } from '#lib/security/index.js';
import { HookSignatureError } from '../errors.js';
import { firstLine, plural, refName, shortSha } from '../format.js';
import { noticeFrom, type Tone } from '../notice.js';
import { optStr, readPayload, str } from '../payload.js';
import type { HookInput, HookSourceAdapter, SourceResult } from '../types.js';

/**
 * GitLab project/group webhooks (https://docs.gitlab.com/user/project/integrations/webhook_events/): push, merge
 * request and pipeline events, told apart by `object_kind` in the body (the `X-Gitlab-Event` header says the same
 * as "Push Hook"). GitLab does not sign bodies: the secret token comes back verbatim in `X-Gitlab-Token`.
 * Idempotency: `Idempotency-Key`, "unique ID consistent across webhook retries" (GitLab 17.4+), else
 * `X-Gitlab-Event-UUID` (14.8+) (https://docs.gitlab.com/user/project/integrations/webhooks/#delivery-headers).
 * GitLab disables a webhook that keeps answering 4xx, so events this source does not render are answered 2xx.
 */

function verify(input: HookInput, secret: string | undefined): void {
  if (secret === undefined) return;
  const token = input.headers['x-gitlab-token'];
  if (!token) throw new HookSignatureError('X-Gitlab-Token', true);
  if (!secretsEqual(token, secret)) throw new HookSignatureError('X-Gitlab-Token', false);
}

const Project = v.looseObject({ path_with_namespace: str, web_url: str });
const User = v.looseObject({ name: str, username: optStr });
const ZERO_SHA = /^0+$/;

const PushSchema = v.looseObject({
  object_kind: v.literal('push'),
  ref: str,
  before: str,
  after: str,
  user_name: str,
  user_username: optStr,
  project: Project,
  commits: v.array(v.looseObject({ id: str, message: str, url: str, author: v.looseObject({ name: str }) })),
  total_commits_count: v.number(),
});

const MergeRequestSchema = v.looseObject({
  object_kind: v.literal('merge_request'),
  user: User,
  project: Project,
  object_attributes: v.looseObject({
    iid: v.number(),
    title: str,
    url: str,
    action: v.optional(v.string()),
    state: str,
    source_branch: str,
    target_branch: str,
    description: optStr,
  }),
});

const PipelineSchema = v.looseObject({
  object_kind: v.literal('pipeline'),
  user: v.optional(User),
  project: Project,
  object_attributes: v.looseObject({
    id: v.number(),
    ref: str,
    tag: v.optional(v.boolean()),
    sha: str,
    status: str,
    source: optStr,
    duration: v.optional(v.nullable(v.number())),
    url: v.optional(v.string()),
  }),
  commit: v.optional(v.nullable(v.looseObject({ message: optStr }))),
  builds: v.optional(
    v.array(
      v.looseObject({
        name: str,
        stage: str,
        status: str,
        failure_reason: optStr,
        allow_failure: v.optional(v.boolean()),
      }),
    ),
    [],
  ),
});

const KindSchema = v.looseObject({ object_kind: v.string() });

const notice = noticeFrom('GitLab');

function push(payload: unknown): SourceResult {
  const p = readPayload(PushSchema, payload, 'a GitLab push event');
  const branch = refName(p.ref);
  const repo = p.project.path_with_namespace;
  const deleted = ZERO_SHA.test(p.after);
  const created = ZERO_SHA.test(p.before);
  const compare = `${p.project.web_url}/-/compare/${p.before}...${p.after}`;
  const title = deleted
    ? `branch ${branch} deleted`
    : `${plural(p.total_commits_count, 'new commit')} to ${branch}`;
  return {
    event: 'push',
    notice: notice({
      tone: deleted ? 'warning' : 'info',
      badge: deleted ? 'deleted' : created ? 'created' : 'push',
      title,
      fields: [
        { key: 'Project', value: repo },
        { key: 'Branch', value: branch },
        { key: 'Pusher', value: p.user_username ?? p.user_name },
      ],
      items: p.commits.map((c) => [
        line('paragraph', [
          link(shortSha(c.id), c.url),
          text(` ${firstLine(c.message)} `),
          text(`— ${c.author.name}`, { color: 'comment' }),
        ]),
      ]),
      // "commits contains information about the newest 20 commits only"; total_commits_count has the real number.
      hiddenItems: Math.max(0, p.total_commits_count - p.commits.length),
      itemNoun: 'commits',
      links: [
        deleted || created
          ? { text: 'Branch', url: `${p.project.web_url}/-/commits/${encodeURIComponent(branch)}` }
          : { text: 'Compare', url: compare },
        { text: 'Project', url: p.project.web_url },
      ],
    }),
  };
}

/** open, reopen, close, merge are news; update, approval and the rest are answered without a message. */
const MR_ACTIONS: Record<string, { badge: string; tone: Tone }> = {
  open: { badge: 'opened', tone: 'info' },
  reopen: { badge: 'reopened', tone: 'info' },
  close: { badge: 'closed', tone: 'info' },
  merge: { badge: 'merged', tone: 'ok' },
};

function mergeRequest(payload: unknown): SourceResult {
  const p = readPayload(MergeRequestSchema, payload, 'a GitLab merge request event');
  const mr = p.object_attributes;
  const action = mr.action ?? 'update';
  const event = `merge_request.${action}`;
  const shown = MR_ACTIONS[action];
  if (!shown) return { event, ignoredReason: `merge request action ${action} is not notified` };
  const summary = firstLine(mr.description);
  return {
    event,
    notice: notice({
      tone: shown.tone,
      badge: shown.badge,
      title: `!${mr.iid} ${mr.title}`,
      ...(summary ? { summary } : {}),
      fields: [
        { key: 'Project', value: p.project.path_with_namespace },
        { key: 'Branch', value: `${mr.source_branch} → ${mr.target_branch}` },
        { key: 'By', value: p.user.username ?? p.user.name },
      ],
      links: [{ text: 'Merge request', url: mr.url }],
    }),
  };
}

/** Final states only: GitLab sends a pipeline event on every status change (created, pending, running, …). */
const PIPELINE_TONE: Record<string, Tone> = { success: 'ok', failed: 'alert', canceled: 'info' };

function pipeline(payload: unknown): SourceResult {
  const p = readPayload(PipelineSchema, payload, 'a GitLab pipeline event');
  const run = p.object_attributes;
  const event = `pipeline.${run.status}`;
  const tone = PIPELINE_TONE[run.status];
  if (!tone) return { event, ignoredReason: `pipeline status ${run.status} is not notified` };
  const failed = p.builds.filter((b) => b.status === 'failed');
  const url = run.url ?? `${p.project.web_url}/-/pipelines/${run.id}`;
  return {
    event,
    notice: notice({
      tone,
      badge: run.status,
      title: `pipeline #${run.id} on ${run.ref}`,
      ...(firstLine(p.commit?.message) ? { summary: firstLine(p.commit?.message) } : {}),
      fields: [
        { key: 'Project', value: p.project.path_with_namespace },
        { key: run.tag ? 'Tag' : 'Branch', value: run.ref },
        { key: 'Commit', value: shortSha(run.sha) },
        ...(typeof run.duration === 'number'
          ? [{ key: 'Duration', value: `${Math.round(run.duration)} s` }]
          : []),
        ...(p.user ? [{ key: 'By', value: p.user.username ?? p.user.name }] : []),
      ],
      items: failed.map((b) => [
        line('paragraph', [
          text(`${b.stage}/${b.name}`, { bold: true }),
          text(
            ` failed${b.failure_reason ? ` (${b.failure_reason})` : ''}${b.allow_failure ? ', allowed to fail' : ''}`,
          ),
        ]),
      ]),
      itemNoun: 'failed jobs',
      links: [{ text: 'Pipeline', url }],
    }),
  };
}

const HANDLERS: Record<string, (payload: unknown) => SourceResult> = {
  push,
  merge_request: mergeRequest,
  pipeline,
};

export const gitlab: HookSourceAdapter = {
  source: 'gitlab',
  defaultMsgtype: 'template_card',
  verify: (input, hook) => verify(input, hook.secret),
  translate(payload, input) {
    const { object_kind: kind } = readPayload(KindSchema, payload, 'a GitLab webhook payload (object_kind)');
    const handler = HANDLERS[kind];
    const result: SourceResult = handler
      ? handler(payload)
      : {
          event: kind,
          ignoredReason: `GitLab ${kind} events are not rendered; turn the trigger off in the webhook settings`,
        };
    const delivery = input.headers['idempotency-key']?.trim() || input.headers['x-gitlab-event-uuid']?.trim();
    return delivery ? { ...result, deliveryKey: delivery } : result;
  },
};

import * as v from 'valibot';
import { line, link, text } from '#lib/messages/index.js';
import { verifyHmacSha256Hex } from '#lib/security/index.js';
import { HookSignatureError } from '../errors.js';
import { firstLine, oneLine, plural, refName, shortSha } from '../format.js';
import { type NoticeField, noticeFrom, type Tone } from '../notice.js';
import { optStr, readPayload, requireHeader, str } from '../payload.js';
import type { HookInput, HookSourceAdapter, SourceResult } from '../types.js';

/**
 * GitHub repository/organization webhooks (https://docs.github.com/en/webhooks/webhook-events-and-payloads):
 * `push`, `pull_request`, `issues`, `release`, `workflow_run`; `ping` (sent when the hook is created) is answered
 * without a message. The event name is the `X-GitHub-Event` header; `X-GitHub-Delivery` is a GUID that a
 * redelivery keeps, so it is the idempotency key. With a secret, `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of
 * the body>` is required (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries).
 */

const SIGNATURE = 'x-hub-signature-256';

function verify(input: HookInput, secret: string | undefined): void {
  if (secret === undefined) return;
  const header = input.headers[SIGNATURE]?.trim();
  if (!header) throw new HookSignatureError('X-Hub-Signature-256', true);
  const hex = header.startsWith('sha256=') ? header.slice('sha256='.length) : '';
  if (!verifyHmacSha256Hex(secret, input.rawBody, hex))
    throw new HookSignatureError('X-Hub-Signature-256', false);
}

const User = v.looseObject({ login: str, html_url: optStr });
const Repository = v.looseObject({ full_name: str, html_url: str });

const PushSchema = v.looseObject({
  ref: str,
  before: str,
  after: str,
  created: v.boolean(),
  deleted: v.boolean(),
  forced: v.boolean(),
  compare: str,
  commits: v.array(
    v.looseObject({
      id: str,
      message: str,
      url: str,
      author: v.looseObject({ name: str, username: optStr }),
    }),
  ),
  pusher: v.looseObject({ name: str }),
  repository: Repository,
});

const PullRequestSchema = v.looseObject({
  action: str,
  number: v.number(),
  pull_request: v.looseObject({
    title: str,
    html_url: str,
    body: optStr,
    merged: v.optional(v.nullable(v.boolean())),
    draft: v.optional(v.boolean()),
    user: User,
    head: v.looseObject({ ref: str }),
    base: v.looseObject({ ref: str }),
  }),
  repository: Repository,
  sender: User,
});

const IssuesSchema = v.looseObject({
  action: str,
  issue: v.looseObject({
    number: v.number(),
    title: str,
    html_url: str,
    body: optStr,
    user: User,
    labels: v.optional(v.array(v.looseObject({ name: str })), []),
  }),
  repository: Repository,
  sender: User,
});

const ReleaseSchema = v.looseObject({
  action: str,
  release: v.looseObject({
    tag_name: str,
    name: optStr,
    html_url: str,
    body: optStr,
    prerelease: v.boolean(),
    author: User,
  }),
  repository: Repository,
});

const WorkflowRunSchema = v.looseObject({
  action: str,
  workflow_run: v.looseObject({
    name: optStr,
    display_title: optStr,
    head_branch: optStr,
    head_sha: str,
    event: str,
    status: optStr,
    conclusion: optStr,
    html_url: str,
    run_number: v.number(),
    actor: v.optional(User),
  }),
  repository: Repository,
});

const PingSchema = v.looseObject({ zen: v.optional(v.string()), hook_id: v.optional(v.number()) });

const EXPECTED = (event: string) => `a GitHub "${event}" webhook payload`;

const excerpt = (body: string | null | undefined): string | undefined => {
  const s = oneLine(body);
  return s ? (s.length > 200 ? `${s.slice(0, 199)}…` : s) : undefined;
};

const notice = noticeFrom('GitHub');

function push(payload: unknown): SourceResult {
  const p = readPayload(PushSchema, payload, EXPECTED('push'));
  const repo = p.repository.full_name;
  const ref = refName(p.ref);
  const isTag = p.ref.startsWith('refs/tags/');
  const fields: NoticeField[] = [
    { key: 'Repository', value: repo },
    { key: isTag ? 'Tag' : 'Branch', value: ref },
    { key: 'Pusher', value: p.pusher.name },
  ];
  let title: string;
  let badge = 'push';
  if (p.deleted) {
    title = `${isTag ? 'tag' : 'branch'} ${ref} deleted`;
    badge = 'deleted';
  } else if (p.created && p.commits.length === 0) {
    title = `${isTag ? 'tag' : 'branch'} ${ref} created`;
    badge = 'created';
  } else {
    title = `${plural(p.commits.length, 'new commit')} to ${ref}${p.forced ? ' (forced)' : ''}`;
  }
  return {
    event: 'push',
    notice: notice({
      tone: p.forced || p.deleted ? 'warning' : 'info',
      badge,
      title,
      fields,
      items: p.commits.map((c) => [
        line('paragraph', [
          link(shortSha(c.id), c.url),
          text(` ${firstLine(c.message)} `),
          text(`— ${c.author.username ?? c.author.name}`, { color: 'comment' }),
        ]),
      ]),
      itemNoun: 'commits',
      links: [
        { text: p.deleted ? 'Repository' : 'Compare', url: p.deleted ? p.repository.html_url : p.compare },
        { text: 'Repository', url: p.repository.html_url },
      ].filter((l, i, all) => all.findIndex((x) => x.url === l.url) === i),
    }),
  };
}

/** Actions worth a message; the rest (labeled, synchronize, edited, …) are answered without one. */
const PR_ACTIONS = new Set(['opened', 'reopened', 'closed', 'ready_for_review']);

function pullRequest(payload: unknown): SourceResult {
  const p = readPayload(PullRequestSchema, payload, EXPECTED('pull_request'));
  const pr = p.pull_request;
  const action = p.action === 'closed' && pr.merged ? 'merged' : p.action;
  const event = `pull_request.${action}`;
  if (!PR_ACTIONS.has(p.action))
    return { event, ignoredReason: `pull_request action ${p.action} is not notified` };
  const tones: Record<string, Tone> = { merged: 'ok', closed: 'info' };
  return {
    event,
    notice: notice({
      tone: tones[action] ?? 'info',
      badge: action === 'ready_for_review' ? 'ready for review' : action,
      title: `#${p.number} ${pr.title}`,
      ...(excerpt(pr.body) ? { summary: excerpt(pr.body) } : {}),
      fields: [
        { key: 'Repository', value: p.repository.full_name },
        { key: 'Author', value: pr.user.login },
        { key: 'Branch', value: `${pr.head.ref} → ${pr.base.ref}` },
        ...(action === 'merged' || action === 'closed' ? [{ key: 'By', value: p.sender.login }] : []),
      ],
      links: [{ text: 'Pull request', url: pr.html_url }],
    }),
  };
}

const ISSUE_ACTIONS = new Set(['opened', 'reopened', 'closed']);

function issues(payload: unknown): SourceResult {
  const p = readPayload(IssuesSchema, payload, EXPECTED('issues'));
  const event = `issues.${p.action}`;
  if (!ISSUE_ACTIONS.has(p.action))
    return { event, ignoredReason: `issues action ${p.action} is not notified` };
  const labels = p.issue.labels.map((l) => l.name).join(', ');
  return {
    event,
    notice: notice({
      tone: p.action === 'closed' ? 'ok' : 'info',
      badge: `issue ${p.action}`,
      title: `#${p.issue.number} ${p.issue.title}`,
      ...(excerpt(p.issue.body) ? { summary: excerpt(p.issue.body) } : {}),
      fields: [
        { key: 'Repository', value: p.repository.full_name },
        { key: 'Author', value: p.issue.user.login },
        ...(labels ? [{ key: 'Labels', value: labels }] : []),
        ...(p.action !== 'opened' ? [{ key: 'By', value: p.sender.login }] : []),
      ],
      links: [{ text: 'Issue', url: p.issue.html_url }],
    }),
  };
}

function release(payload: unknown): SourceResult {
  const p = readPayload(ReleaseSchema, payload, EXPECTED('release'));
  const event = `release.${p.action}`;
  // A published release also fires created and released (or prereleased): one message, for `published`.
  if (p.action !== 'published') return { event, ignoredReason: `release action ${p.action} is not notified` };
  const r = p.release;
  return {
    event,
    notice: notice({
      tone: 'ok',
      badge: r.prerelease ? 'pre-release' : 'release',
      title: r.name || r.tag_name,
      ...(excerpt(r.body) ? { summary: excerpt(r.body) } : {}),
      fields: [
        { key: 'Repository', value: p.repository.full_name },
        { key: 'Tag', value: r.tag_name },
        { key: 'Author', value: r.author.login },
      ],
      links: [{ text: 'Release', url: r.html_url }],
    }),
  };
}

const CONCLUSION_TONE: Record<string, Tone> = {
  success: 'ok',
  failure: 'alert',
  timed_out: 'alert',
  startup_failure: 'alert',
  action_required: 'warning',
};

function workflowRun(payload: unknown): SourceResult {
  const p = readPayload(WorkflowRunSchema, payload, EXPECTED('workflow_run'));
  const run = p.workflow_run;
  const event = `workflow_run.${p.action}`;
  // requested and in_progress announce work, not results.
  if (p.action !== 'completed')
    return { event, ignoredReason: `workflow_run action ${p.action} is not notified` };
  const conclusion = run.conclusion ?? 'completed';
  return {
    event,
    notice: notice({
      tone: CONCLUSION_TONE[conclusion] ?? 'info',
      badge: conclusion,
      title: `${run.name ?? 'workflow'} #${run.run_number}`,
      ...(run.display_title ? { summary: oneLine(run.display_title) } : {}),
      fields: [
        { key: 'Repository', value: p.repository.full_name },
        ...(run.head_branch ? [{ key: 'Branch', value: run.head_branch }] : []),
        { key: 'Commit', value: shortSha(run.head_sha) },
        { key: 'Trigger', value: run.event },
        ...(run.actor ? [{ key: 'Actor', value: run.actor.login }] : []),
      ],
      links: [{ text: 'Run', url: run.html_url }],
    }),
  };
}

const HANDLERS: Record<string, (payload: unknown) => SourceResult> = {
  push,
  pull_request: pullRequest,
  issues,
  release,
  workflow_run: workflowRun,
};

export const github: HookSourceAdapter = {
  source: 'github',
  defaultMsgtype: 'template_card',
  verify: (input, hook) => verify(input, hook.secret),
  translate(payload, input) {
    const event = requireHeader(input, 'x-github-event', 'GitHub names the event in X-GitHub-Event');
    const delivery = input.headers['x-github-delivery']?.trim();
    const handler = HANDLERS[event];
    let result: SourceResult;
    if (event === 'ping') {
      const ping = readPayload(PingSchema, payload, EXPECTED('ping'));
      result = {
        event,
        ignoredReason: `ping${ping.hook_id === undefined ? '' : ` from hook ${ping.hook_id}`}`,
      };
    } else if (handler) result = handler(payload);
    else {
      result = {
        event,
        ignoredReason: `GitHub event ${event} is not rendered; deselect it in the webhook settings`,
      };
    }
    return delivery ? { ...result, deliveryKey: delivery } : result;
  },
};

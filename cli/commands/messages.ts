import { type Command, InvalidArgumentError } from 'commander';
import { GatewayApi, type MessagePage, type MessageSummary, type WebhookDeliveries } from '../api.js';
import { action, type CliContext, list, type Run } from '../command.js';
import { UsageError } from '../errors.js';
import type { Colors, Output } from '../output.js';
import { resolveTarget } from '../target.js';
import { addTargetOptions, paint } from './status.js';

/** The gateway's page size limit (GET /v1/messages `limit`). */
const MAX_PAGE = 100;
/** `--all` stops here: a list longer than this is a query to narrow, not to print. */
const MAX_ALL = 10_000;

const UNITS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * `--since 2h` → two hours ago as RFC 3339; anything else is passed on as written (the gateway checks it and names
 * the parameter in its 400).
 */
export function timeOption(now: () => number = Date.now): (value: string) => string {
  return (value) => {
    const m = /^(\d{1,6})([smhd])$/.exec(value.trim());
    return m ? new Date(now() - Number(m[1]) * UNITS[m[2] as keyof typeof UNITS]).toISOString() : value;
  };
}

const pageSize = (value: string): number => {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > MAX_PAGE) {
    throw new InvalidArgumentError(`Expected an integer from 1 to ${MAX_PAGE}.`);
  }
  return n;
};

/** `alice, bob, party 2 +3`: whom a list entry names. */
function recipients(m: MessageSummary): string {
  const named = [
    ...(m.touser ?? []),
    ...(m.toparty ?? []).map((p) => `party ${p}`),
    ...(m.totag ?? []).map((t) => `tag ${t}`),
  ];
  const shown = named.slice(0, 3);
  const more = named.length - shown.length + (m.recipients_omitted ?? 0);
  return `${shown.join(', ')}${more > 0 ? ` +${more}` : ''}`;
}

const time = (iso: string | undefined) => (iso ? iso.replace('T', ' ').replace(/Z$/, ' UTC') : '—');

function printMessages(out: Output, messages: MessageSummary[]): void {
  const { c } = out;
  for (const m of messages) {
    const facts = [
      m.robot !== undefined ? `robot ${m.robot}` : `app ${m.app}`,
      m.msgtype,
      m.robot === undefined && `to ${recipients(m)}`,
      m.attempts !== undefined && `${m.attempts} attempt${m.attempts === 1 ? '' : 's'}`,
      `accepted ${time(m.created_at)}`,
    ].filter(Boolean);
    out.line(`${c.bold(m.id)}  ${paint(c, m.status)}  ${c.dim(facts.join(' · '))}`);
  }
}

interface MessagesListOpts {
  url?: string;
  key?: string;
  app?: string;
  robot?: string;
  status?: string[];
  to?: string;
  msgtype?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
  all?: boolean;
}

async function messagesList(run: Run, opts: MessagesListOpts): Promise<void> {
  const { out, ctx } = run;
  const api = new GatewayApi(await resolveTarget(opts, ctx.env, ctx.cwd));
  const query: Record<string, string> = {
    ...(opts.app ? { app: opts.app } : {}),
    ...(opts.robot ? { robot: opts.robot } : {}),
    ...(opts.status?.length ? { status: opts.status.join(',') } : {}),
    ...(opts.to ? { touser: opts.to } : {}),
    ...(opts.msgtype ? { msgtype: opts.msgtype } : {}),
    ...(opts.since ? { since: opts.since } : {}),
    ...(opts.until ? { until: opts.until } : {}),
    ...(opts.limit ? { limit: String(opts.limit) } : {}),
  };
  const messages: MessageSummary[] = [];
  let page: MessagePage | undefined;
  let cursor = opts.cursor;
  do {
    page = await api.messages({ ...query, ...(cursor ? { cursor } : {}) });
    messages.push(...page.messages);
    cursor = page.next_cursor ?? undefined;
    if (opts.all && cursor) out.progress(`${messages.length} messages so far…`);
  } while (opts.all && cursor && messages.length < MAX_ALL);
  out.clearProgress();
  out.data({ messages, next_cursor: page.next_cursor });
  printMessages(out, messages);
  if (messages.length === 0 && !page.next_cursor) out.line('no messages');
  if (page.next_cursor) {
    out.note(out.ce.dim(`more: add --cursor ${page.next_cursor} (or --all) with the same filters`));
  }
}

type Delivery = WebhookDeliveries['deliveries'][number];

function paintDelivery(c: Colors, status: string): string {
  if (status === 'delivered') return c.green(status);
  if (status === 'retrying') return c.yellow(status);
  return c.red(status);
}

/** `HTTP 500 · 120 ms · HTTP 500`: what one attempt got back. */
function attemptLine(a: Delivery['attempts'][number]): string {
  return [
    a.status_code !== undefined ? `HTTP ${a.status_code}` : 'no answer',
    a.latency_ms !== undefined && `${Math.round(a.latency_ms)} ms`,
    a.error !== undefined && a.error !== `HTTP ${a.status_code}` && a.error,
  ]
    .filter(Boolean)
    .join(' · ');
}

export function printDeliveries(out: Output, body: WebhookDeliveries): void {
  const { c } = out;
  for (const d of body.deliveries) {
    out.line(
      `${c.bold(d.event)}  ${paintDelivery(c, d.status)}  ${c.dim(`${d.target} · webhook-id ${d.id}`)}`,
    );
    for (const a of d.attempts) out.line(`  ${a.attempt ?? '·'}. ${time(a.at)}  ${attemptLine(a)}`);
    if (d.next_attempt_at) out.line(`  ${c.yellow(`next attempt about ${time(d.next_attempt_at)}`)}`);
  }
  if (body.deliveries.length === 0) out.line('no webhooks sent for this message');
  if (body.truncated) out.note(out.ce.dim('older attempts left out'));
}

interface TargetOpts {
  url?: string;
  key?: string;
}

async function messagesWebhooks(run: Run, id: string, opts: TargetOpts): Promise<void> {
  const { out, ctx } = run;
  if (!/^msg_[0-9A-Za-z]+$/.test(id)) throw new UsageError(`not a message id (msg_…): ${id}`);
  const api = new GatewayApi(await resolveTarget(opts, ctx.env, ctx.cwd));
  const body = await api.webhooks(id);
  out.data(body);
  printDeliveries(out, body);
}

export function registerMessages(program: Command, ctx: CliContext): void {
  const messages = program
    .command('messages')
    .description('find messages: by app, status, recipient, type, time');
  const cmd = messages
    .command('list')
    .description(
      "an app's (or a group robot's) messages, newest first (GET /v1/messages, scope messages:read)",
    )
    .option('-a, --app <name>', 'the app (needed when the key may read several)')
    .option('-r, --robot <name>', "a group robot's messages instead of an app's")
    .option('-s, --status <list>', 'statuses, comma-separated: queued, deferred, sent, failed, dead, …', list)
    .option('-t, --to <userid>', 'messages that list this user in touser (any case)')
    .option('--msgtype <type>', 'text, markdown, template_card, …')
    .option('--since <time>', 'accepted at or after: RFC 3339, or 30m, 2h, 1d ago', timeOption())
    .option('--until <time>', 'accepted before: RFC 3339, or 30m, 2h, 1d ago', timeOption())
    .option('-n, --limit <n>', `messages per page, 1-${MAX_PAGE} (default 50)`, pageSize)
    .option('--cursor <cursor>', 'continue where a listing stopped (its "more:" hint)')
    .option('--all', `follow every page (up to ${MAX_ALL} messages)`);
  addTargetOptions(cmd);
  cmd
    .addHelpText(
      'after',
      `
A filtered page may hold fewer messages than --limit while there are more: follow the hint, or use --all.
Examples:
  $ wecom-gateway messages list --to zhangsan --since 1d
  $ wecom-gateway messages list --app ops --status failed,dead --all --json
  $ wecom-gateway messages list --robot oncall --since 1h`,
    )
    .action(action(ctx, messagesList));

  const webhooks = messages
    .command('webhooks')
    .description(
      'the webhooks sent for a message and every attempt: status code, latency, next try (GET /v1/messages/{id}/webhooks, scope messages:read)',
    )
    .argument('<id>', 'the message id (msg_…)');
  addTargetOptions(webhooks);
  webhooks
    .addHelpText(
      'after',
      `
Examples:
  $ wecom-gateway messages webhooks msg_01JD2W6Q3K8N4X7TB9YB1R2S3T
  $ wecom-gateway messages webhooks msg_01JD2W6Q3K8N4X7TB9YB1R2S3T --json`,
    )
    .action(action(ctx, messagesWebhooks));
}

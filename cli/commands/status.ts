import { setTimeout as sleep } from 'node:timers/promises';
import { type Command, InvalidArgumentError } from 'commander';
import { GatewayApi, type MessageStatus } from '../api.js';
import { action, type CliContext, type Run } from '../command.js';
import { TERMINAL_STATUSES } from '../domain.js';
import { ApiError, CliError, UnreachableError, UsageError } from '../errors.js';
import type { Colors, Output } from '../output.js';
import { resolveTarget } from '../target.js';

/** Terminal statuses that mean the message reached WeCom. */
const DELIVERED = new Set(['sent', 'recalled']);

export const isTerminal = (status: string): boolean => TERMINAL_STATUSES.has(status as never);

/** A status in its colour: delivered green, undelivered red, waiting yellow, the rest cyan. */
export const paint = (c: Colors, status: string): string =>
  DELIVERED.has(status)
    ? c.green(status)
    : status === 'failed' || status === 'dead' || status === 'expired'
      ? c.red(status)
      : status === 'deferred' || status === 'scheduled'
        ? c.yellow(status)
        : c.cyan(status);

const time = (iso: string | null | undefined): string =>
  iso ? iso.replace('T', ' ').replace(/Z$/, ' UTC') : '—';

function eventLine(c: Colors, e: { at: string; type: string; detail?: string }): string {
  return `  ${c.dim(time(e.at))}  ${e.detail ? `${paint(c, e.type.padEnd(9))} ${e.detail}` : paint(c, e.type)}`;
}

/** The status as human lines: summary, WeCom's answer or the error, then the event timeline. */
export function printStatus(out: Output, s: MessageStatus): void {
  const { c } = out;
  out.line(`${c.bold(s.id)}  ${paint(c, s.status)}`);
  const facts = [
    s.app && `app ${s.app}`,
    s.priority && `priority ${s.priority}`,
    s.attempts !== undefined && `${s.attempts} attempt${s.attempts === 1 ? '' : 's'}`,
  ].filter(Boolean);
  if (facts.length) out.line(`  ${facts.join(' · ')}`);
  out.line(`  created  ${time(s.created_at)}`);
  if (s.send_at) {
    const by = s.scheduled_by === 'quiet_hours' ? ' (held by quiet hours)' : '';
    out.line(`  send at  ${time(s.send_at)}${by}, released ${time(s.release_at ?? s.send_at)}`);
  }
  if (s.sent_at) out.line(`  sent     ${time(s.sent_at)}`);
  if (s.wecom) {
    const unreached = (['invaliduser', 'invalidparty', 'invalidtag', 'unlicenseduser'] as const)
      .filter((f) => s.wecom?.[f])
      .map((f) => `${f}: ${s.wecom?.[f]}`);
    out.line(
      `  wecom    msgid ${s.wecom.msgid ?? '—'}${unreached.length ? c.yellow(`  (${unreached.join('; ')})`) : ''}`,
    );
  }
  if (s.error) {
    const errcode = s.error.wecom_errcode !== undefined ? ` (WeCom errcode ${s.error.wecom_errcode})` : '';
    out.line(`  error    ${c.red(`${s.error.code ?? 'error'}: ${s.error.message ?? ''}`)}${errcode}`);
  }
  const meta = Object.entries(s.metadata ?? {});
  if (meta.length) out.line(`  metadata ${meta.map(([k, v]) => `${k}=${v}`).join(' ')}`);
  if (s.events?.length) {
    out.line('  events');
    for (const e of s.events) out.line(`  ${eventLine(c, e)}`);
  }
}

export interface WatchOptions {
  intervalMs: number;
  timeoutMs: number;
}

/**
 * Polls the status until it is terminal; progress (status, attempts, the latest event) goes to stderr. A gateway
 * that is briefly unreachable or busy (5xx) is polled again until the deadline. Returns the final status.
 */
export async function watchStatus(
  api: GatewayApi,
  id: string,
  out: Output,
  opts: WatchOptions,
): Promise<MessageStatus> {
  const deadline = Date.now() + opts.timeoutMs;
  let last: MessageStatus | undefined;
  for (;;) {
    try {
      last = await api.status(id);
      if (isTerminal(last.status)) {
        out.clearProgress();
        return last;
      }
      const latest = last.events?.at(-1);
      const attempts = last.attempts ? `, ${last.attempts} attempt${last.attempts === 1 ? '' : 's'}` : '';
      const event = latest ? ` — last event: ${latest.type}${latest.detail ? ` ${latest.detail}` : ''}` : '';
      out.progress(`${id}: ${last.status}${attempts}${event}`);
    } catch (err) {
      const transient = err instanceof UnreachableError || (err instanceof ApiError && err.status >= 500);
      if (!transient) throw err;
      out.progress(`${id}: ${err.message} — retrying`);
    }
    if (Date.now() >= deadline) {
      throw new CliError(
        'watch_timeout',
        `${id} is still ${last?.status ?? 'unknown'} after ${Math.round(opts.timeoutMs / 1000)} s (it may still be delivered; run status again)`,
      );
    }
    await sleep(Math.min(opts.intervalMs, Math.max(0, deadline - Date.now())));
  }
}

/** Exit code of a watched message: delivered → 0, failed/dead → 1. */
export const exitCodeFor = (s: MessageStatus): number => (DELIVERED.has(s.status) ? 0 : 1);

/** Exit code of a status looked at once: 1 for a message that ended undelivered, else 0 (it may still go). */
export const exitCodeOfLook = (s: MessageStatus): number => (isTerminal(s.status) ? exitCodeFor(s) : 0);

/** Commander option parser; its error becomes commander's "option … argument … is invalid" usage error. */
export const positiveNumber = (value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('Expected a positive number.');
  return n;
};

interface StatusOpts {
  url?: string;
  key?: string;
  watch?: boolean;
  interval: number;
  timeout: number;
}

async function status(run: Run, id: string, opts: StatusOpts): Promise<void> {
  const { out, ctx } = run;
  if (!/^msg_[0-9A-Za-z]+$/.test(id))
    throw new UsageError(`${JSON.stringify(id)} is not a message id (msg_…)`);
  const api = new GatewayApi(await resolveTarget(opts, ctx.env, ctx.cwd));
  const s = opts.watch
    ? await watchStatus(api, id, out, { intervalMs: opts.interval * 1000, timeoutMs: opts.timeout * 1000 })
    : await api.status(id);
  out.data(s);
  printStatus(out, s);
  ctx.exitCode = opts.watch ? exitCodeFor(s) : exitCodeOfLook(s);
}

/** `--url`/`--key` as every API command takes them. */
export function addTargetOptions(cmd: Command): Command {
  return cmd
    .option(
      '--url <url>',
      'gateway API URL (default: $WECOM_GATEWAY_URL, else the `npm start` in this directory)',
    )
    .option(
      '--key <key>',
      'API key (default: $WECOM_GATEWAY_KEY, else .local/dev-api-key for a local gateway)',
    );
}

/** `--interval`/`--timeout` of a watch; errors from their parsers are usage errors. */
export function addWatchOptions(cmd: Command, defaultTimeout: number): Command {
  return cmd
    .option('--interval <seconds>', 'seconds between polls', positiveNumber, 1)
    .option(
      '--timeout <seconds>',
      'give up after this many seconds (exit 1)',
      positiveNumber,
      defaultTimeout,
    );
}

export function registerStatus(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('status')
    .description("show a message's status, WeCom's answer and its event timeline")
    .argument('<id>', 'message id (msg_…) as returned by send')
    .option(
      '-w, --watch',
      'poll until a terminal status (sent, failed, dead, recalled); exit 1 unless delivered',
    );
  addTargetOptions(cmd);
  addWatchOptions(cmd, 300);
  cmd.action(action(ctx, status));
}

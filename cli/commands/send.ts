import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { GatewayApi } from '../api.js';
import { action, type CliContext, type Run, readStdin } from '../command.js';
import { UsageError } from '../errors.js';
import { resolveTarget } from '../target.js';
import { addTargetOptions, addWatchOptions, exitCodeFor, printStatus, watchStatus } from './status.js';

interface SendOpts {
  app?: string;
  robot?: string;
  markdownV2?: string;
  to?: string[];
  party?: string[];
  tag?: string[];
  text?: string;
  markdown?: string;
  file?: string;
  template?: string;
  var?: Record<string, string>;
  priority?: 'high' | 'normal';
  split?: boolean;
  at?: string;
  quietHours?: boolean;
  idempotencyKey?: string;
  url?: string;
  key?: string;
  wait?: boolean;
  interval: number;
  timeout: number;
}

/** `--var k=v`, repeatable; the value may itself hold `=`. Values stay strings: the gateway checks them. */
const variable = (value: string, previous: Record<string, string> = {}): Record<string, string> => {
  const at = value.indexOf('=');
  if (at <= 0) throw new UsageError(`--var ${value}: write it as name=value`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
};

const AHEAD = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * `--at`: an RFC 3339 time with its offset, passed on as written (the gateway checks it and names `send_at` in its
 * 400), or `+15m` / `+2h` / `+1d` from now.
 */
export function atOption(now: () => number = Date.now): (value: string) => string {
  return (value) => {
    const m = /^\+(\d{1,6})([smhd])$/.exec(value.trim());
    return m ? new Date(now() + Number(m[1]) * AHEAD[m[2] as keyof typeof AHEAD]).toISOString() : value;
  };
}

/** `--to a,b --to c` and WeCom's own `a|b` syntax both collect into one list. */
const recipients = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(/[,|]/)
    .map((s) => s.trim())
    .filter(Boolean),
];

async function readPayload(ctx: CliContext, file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = file === '-' ? await readStdin(ctx.stdin) : await readFile(resolve(ctx.cwd, file), 'utf8');
  } catch (err) {
    throw new UsageError(`--file: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--file: ${file} is not JSON: ${(err as Error).message}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new UsageError(`--file: ${file} must hold one message object (the POST /v1/messages body)`);
  }
  return json as Record<string, unknown>;
}

/**
 * The POST /v1/messages body from the flags: `--file` gives a whole body (WeCom's `message/send` body plus `app`),
 * and flags given next to it override its fields. The gateway validates the result; the CLI only checks that the
 * command line itself makes sense.
 */
export async function buildMessage(ctx: CliContext, opts: SendOpts): Promise<Record<string, unknown>> {
  const sources = [
    opts.text !== undefined,
    opts.markdown !== undefined,
    opts.markdownV2 !== undefined,
    opts.file !== undefined,
    opts.template !== undefined,
  ].filter(Boolean);
  if (sources.length !== 1) {
    throw new UsageError('give exactly one of --text, --markdown, --markdown-v2, --file or --template');
  }
  if (opts.app !== undefined && opts.robot !== undefined) {
    throw new UsageError('give --app (a message to members) or --robot (a post to its group chat), not both');
  }
  if (opts.var !== undefined && opts.template === undefined) {
    throw new UsageError('--var fills the variables of a --template');
  }

  const body: Record<string, unknown> = opts.file ? await readPayload(ctx, opts.file) : {};
  const content = async (v: string) => (v === '-' ? (await readStdin(ctx.stdin)).replace(/\r?\n$/, '') : v);
  if (opts.text !== undefined)
    Object.assign(body, { msgtype: 'text', text: { content: await content(opts.text) } });
  if (opts.markdown !== undefined) {
    Object.assign(body, { msgtype: 'markdown', markdown: { content: await content(opts.markdown) } });
  }
  if (opts.markdownV2 !== undefined) {
    Object.assign(body, { msgtype: 'markdown_v2', markdown_v2: { content: await content(opts.markdownV2) } });
  }
  if (opts.template !== undefined)
    Object.assign(body, { template: opts.template, variables: opts.var ?? {} });
  if (opts.app) body.app = opts.app;
  if (opts.robot) {
    body.robot = opts.robot;
    delete body.app;
  }
  if (opts.to) body.touser = opts.to;
  if (opts.party) body.toparty = opts.party;
  if (opts.tag) body.totag = opts.tag;
  if (opts.priority) body.priority = opts.priority;
  if (opts.split !== undefined) body.split = opts.split;
  if (opts.at !== undefined) body.send_at = opts.at;
  if (opts.quietHours === false) body.quiet_hours = false;

  if (typeof body.robot === 'string') {
    // A robot posts to its own group chat: recipients are for apps, and the gateway would name them in a 400.
    if (opts.to || opts.party || opts.tag) {
      throw new UsageError('--to, --party and --tag are for apps: a robot posts to its group chat');
    }
    return body;
  }
  if (typeof body.app !== 'string')
    throw new UsageError('--app: which app sends it? (or --robot, or "app" in --file)');
  if (!['touser', 'toparty', 'totag'].some((f) => body[f] !== undefined)) {
    throw new UsageError('no recipient: give --to, --party or --tag (or touser/toparty/totag in --file)');
  }
  return body;
}

async function send(run: Run, opts: SendOpts): Promise<void> {
  const { out, ctx } = run;
  const body = await buildMessage(ctx, opts);
  const api = new GatewayApi(await resolveTarget(opts, ctx.env, ctx.cwd));
  const accepted = await api.send(body, opts.idempotencyKey);
  if (!opts.wait) {
    if (out.json) out.data(accepted);
    else out.raw(accepted.id);
    const parts = accepted.parts ? ` in ${accepted.parts} parts` : '';
    const when = accepted.release_at ? ` for ${accepted.release_at}` : '';
    const cancel =
      accepted.status === 'scheduled' ? ` · take it back with: wecom-gateway cancel ${accepted.id}` : '';
    out.note(
      out.ce.dim(
        `${accepted.status}${when}${parts} · follow it with: wecom-gateway status ${accepted.id} --watch${cancel}`,
      ),
    );
    return;
  }
  out.note(out.ce.dim(`${accepted.id} ${accepted.status}`));
  const final = await watchStatus(api, accepted.id, out, {
    intervalMs: opts.interval * 1000,
    timeoutMs: opts.timeout * 1000,
  });
  out.data(final);
  printStatus(out, final);
  ctx.exitCode = exitCodeFor(final);
}

export function registerSend(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('send')
    .description('send a test message through the gateway and print its id')
    .option('-a, --app <app>', 'configured app name (required unless --robot, or --file has "app")')
    .option('-r, --robot <robot>', 'a configured group robot: post to its group chat instead (no --to)')
    .option('--to <users>', 'WeCom userids; repeat, comma- or |-separate; @all for everyone', recipients)
    .option('--party <ids>', 'department ids (toparty)', recipients)
    .option('--tag <ids>', 'tag ids (totag)', recipients)
    .option('--text <content>', 'a text message (- reads stdin)')
    .option('--markdown <content>', 'a markdown message (- reads stdin)')
    .option('--markdown-v2 <content>', "a robot's markdown_v2 message: tables, lists, code (- reads stdin)")
    .option(
      '--file <payload.json>',
      'the whole POST /v1/messages body, any msgtype (- reads stdin); flags override it',
    )
    .option(
      '--template <id>',
      "one of the app's templates (config apps.<app>.templates; see GET /v1/templates)",
    )
    .option('--var <name=value>', 'a variable of --template; repeat for each', variable)
    .addOption(new Option('--priority <priority>', 'delivery lane').choices(['high', 'normal']))
    .option('--split', 'text or markdown over 2,048 bytes goes out as ordered parts (1/n) instead of a 400')
    .option('--no-split', "refuse over-long content even where the app's config splits it")
    .option(
      '--at <time>',
      'send at this time: RFC 3339 with an offset (2026-12-07T09:00:00+08:00) or +15m, +2h, +1d (up to 30 days)',
      atOption(),
    )
    .option(
      '--no-quiet-hours',
      "send now even inside the app's quiet hours (the key needs quiet-hours:bypass)",
    )
    .option(
      '--idempotency-key <key>',
      'Idempotency-Key header: a retried send with the same key is not sent twice',
    )
    .option('-w, --wait', 'wait for a terminal status and show it (exit 1 unless delivered)');
  addTargetOptions(cmd);
  addWatchOptions(cmd, 120);
  cmd
    .addHelpText(
      'after',
      `
Examples:
  $ wecom-gateway send --app ops --to zhangsan --text "deploy 4711 done"
  $ wecom-gateway send --app ops --to zhangsan,lisi --markdown "**disk** 91%" --priority high --wait
  $ wecom-gateway send --file card.json --to zhangsan
  $ wecom-gateway send --app ops --to zhangsan --template deploy_done --var service=api --var env=prod
  $ wecom-gateway send --robot oncall --markdown '**db-1** disk <font color="warning">91%</font>'
  $ wecom-gateway send --app ops --party 2 --text "stand-up in 15 minutes" --at 2026-12-07T09:45:00+08:00
  $ wecom-gateway send --app ops --to zhangsan --text "reminder" --at +2h`,
    )
    .action(action(ctx, send));
}

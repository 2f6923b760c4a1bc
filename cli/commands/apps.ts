import type { Command } from 'commander';
import { type AppStatus, GatewayApi, type RobotStatus } from '../api.js';
import { action, type CliContext, type Run } from '../command.js';
import { ApiError, CliError, UsageError } from '../errors.js';
import type { Colors, Output } from '../output.js';
import {
  type LaneDepth,
  locateStack,
  openClients,
  readLaneDepths,
  type StackFlags,
  type StackLocation,
} from '../stack.js';
import { ENV_URL, resolveTarget } from '../target.js';
import { addTargetOptions } from './status.js';

interface AppsStatusOpts extends StackFlags {
  url?: string;
  key?: string;
}

/** `1h 02m`, `4m 10s`, `12s`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

const paintState = (c: Colors, state: string): string =>
  state === 'active' ? c.green(state) : state === 'probing' ? c.yellow(state) : c.red(state);

/** The pause or circuit and the quota windows: what an app and a group robot both have. */
function printPauseAndQuota(out: Output, a: Pick<AppStatus, 'pause' | 'quota'>): void {
  if (a.pause) {
    const p = a.pause;
    out.line(`  ${p.kind === 'rate_limited' ? 'paused' : 'circuit'}  ${p.reason}`);
    out.line(`    since ${p.since} until ${p.until} (level ${p.level})`);
    if (p.hint && p.hint !== p.reason) out.line(`    hint: ${p.hint}`);
    if (p.fails_messages_at) out.line(`    waiting messages fail at ${p.fails_messages_at}`);
  }
  for (const q of a.quota) {
    const share = q.allowed > 0 ? Math.round((q.used / q.allowed) * 100) : 0;
    const used = `${q.used}/${q.allowed}`;
    out.line(
      `  quota  ${q.window.padEnd(11)} ${(share >= 90 ? out.c.red : share >= 70 ? out.c.yellow : (s: string) => s)(used.padEnd(15))} (WeCom limit ${q.limit}, resets ${q.resets_at})`,
    );
  }
}

function printApp(out: Output, a: AppStatus): void {
  const { c } = out;
  out.line(`${c.bold(a.app)}  ${paintState(c, a.state)}`);
  printPauseAndQuota(out, a);
  const t = a.token;
  const token =
    t.age_seconds === null
      ? 'none cached'
      : `fetched ${duration(t.age_seconds)} ago${t.expires_in_seconds !== null ? `, expires in ${duration(t.expires_in_seconds)}` : ''}`;
  out.line(`  token  ${token}`);
  if (t.last_error) {
    const e = t.last_error;
    out.line(
      `  ${c.red('gettoken failed')} ${e.failures}× (${e.class}${e.errcode !== null ? `, errcode ${e.errcode}` : ''}); next try ${e.retry_at}`,
    );
  }
}

function printQueues(out: Output, where: string, lanes: LaneDepth[]): void {
  const { c } = out;
  out.line(c.bold(`queues (${where}, approximate)`));
  out.line(
    `  ${'lane'.padEnd(8)} ${'waiting'.padStart(8)} ${'in flight'.padStart(10)} ${'delayed'.padStart(8)} ${'DLQ'.padStart(6)}`,
  );
  for (const l of lanes) {
    const dead = String(l.dead).padStart(6);
    out.line(
      `  ${l.lane.padEnd(8)} ${String(l.waiting).padStart(8)} ${String(l.inFlight).padStart(10)} ${String(l.delayed).padStart(8)} ${l.dead > 0 ? c.red(dead) : dead}`,
    );
  }
  if (lanes.some((l) => l.dead > 0))
    out.line(c.dim('  dead messages: wecom-gateway dlq list (then dlq redrive)'));
}

/** Queue depths, or why there are none: without --stage and without a local stack they are simply left out. */
async function queueDepths(
  run: Run,
  opts: AppsStatusOpts,
  loc: StackLocation | undefined,
): Promise<LaneDepth[] | undefined> {
  if (!loc) return undefined;
  const clients = await openClients(loc);
  try {
    return await readLaneDepths(clients.sqs, loc);
  } catch (err) {
    if (opts.stage !== undefined)
      throw new CliError(
        'queues_unreadable',
        `reading the queues of ${loc.where}: ${(err as Error).message}`,
      );
    run.out.warn(`queue depths unavailable (${loc.where}): ${(err as Error).message}`);
    return undefined;
  } finally {
    clients.close();
  }
}

/** A group robot: its state, pause or circuit and rolling minute (it has no token: its key is in its URL). */
function printRobot(out: Output, r: RobotStatus): void {
  const { c } = out;
  out.line(`${c.bold(`robot ${r.robot}`)}  ${paintState(c, r.state)}`);
  printPauseAndQuota(out, r);
}

/** The key's group robots with their states; none from a gateway without robots (404: it predates them). */
async function robotStates(api: GatewayApi): Promise<RobotStatus[]> {
  try {
    const { robots } = await api.robots();
    return await Promise.all(robots.map((r) => api.robot(r.robot)));
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return [];
    throw err;
  }
}

async function appsStatus(run: Run, app: string | undefined, opts: AppsStatusOpts): Promise<void> {
  const { out, ctx } = run;
  if (app !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(app))
    throw new UsageError(`${JSON.stringify(app)} is not an app name (1-64 of [A-Za-z0-9_-])`);
  let loc: StackLocation | undefined;
  try {
    loc = await locateStack(opts, ctx.cwd);
  } catch (err) {
    // Without --stage the queues are optional: a gateway elsewhere (--url) still has an API to ask.
    if (opts.stage !== undefined || !(err instanceof UsageError) || opts.region || opts.profile) throw err;
    out.note(out.ce.dim(`queue depths: ${err.message}`));
  }
  const url = opts.url ?? (opts.stage !== undefined && !ctx.env[ENV_URL] ? loc?.apiUrl : undefined);
  const api = new GatewayApi(await resolveTarget({ ...opts, ...(url ? { url } : {}) }, ctx.env, ctx.cwd));
  const names = app !== undefined ? [app] : (await api.apps()).apps.map((a) => a.app);
  const [apps, robots, lanes] = await Promise.all([
    Promise.all(names.map((name) => api.app(name))),
    app !== undefined ? Promise.resolve([]) : robotStates(api),
    queueDepths(run, opts, loc),
  ]);
  out.data({ apps, robots, queues: lanes ? { where: loc?.where, lanes } : null });
  if (apps.length === 0 && robots.length === 0) out.line('this key may use no app');
  apps.forEach((a, i) => {
    if (i > 0) out.line();
    printApp(out, a);
  });
  robots.forEach((r, i) => {
    if (i > 0 || apps.length > 0) out.line();
    printRobot(out, r);
  });
  if (lanes && loc) {
    out.line();
    printQueues(out, loc.where, lanes);
  }
  if ([...apps, ...robots].some((a) => a.state !== 'active')) ctx.exitCode = 1;
}

/** `--stage/--region/--profile`: which deployed stack's queues (and table) to use. */
export function addStackOptions(cmd: Command): Command {
  return cmd
    .option(
      '--stage <stage>',
      'a deployed stack (wecom-gateway-<stage>, found through its outputs); default: the `npm start` in this directory',
    )
    .option('--region <region>', 'AWS region of the stack (default: AWS_REGION / your AWS profile)')
    .option('--profile <profile>', 'AWS profile (default: AWS_PROFILE / default)');
}

export function registerApps(program: Command, ctx: CliContext): void {
  const apps = program
    .command('apps')
    .description("the apps' and robots' health: pauses, circuits, quota, tokens, queues");
  const status = apps
    .command('status')
    .description(
      "pause or circuit state, quota use and token age of an app (or of every app and group robot the key may use), and the lanes' queue depths; exit 1 unless every one is active",
    )
    .argument('[app]', 'app name (default: every app the key may use)');
  addTargetOptions(status);
  addStackOptions(status);
  status
    .addHelpText(
      'after',
      `
The app's state comes from GET /v1/apps/{app} (scope messages:read), a robot's from GET /v1/robots/{robot}; queue depths from SQS (local: the emulator of
the running \`npm start\`; --stage: the deployed stack's queues, with your AWS credentials).
Examples:
  $ wecom-gateway apps status
  $ wecom-gateway apps status ops --stage prod --key "$WECOM_GATEWAY_KEY" --json`,
    )
    .action(action(ctx, appsStatus));
}

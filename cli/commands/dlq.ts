import { type Command, InvalidArgumentError, Option } from 'commander';
import type { DeadLetterView, RedriveResult } from '#lib/ops/dlq.js';
import { LANES, type LaneName, QUEUES } from '#lib/resources/index.js';
import { action, type CliContext, list, type Run } from '../command.js';
import { CliError, UsageError } from '../errors.js';
import type { Colors, Output } from '../output.js';
import { locateStack, openClients, type StackFlags } from '../stack.js';
import { addStackOptions, duration } from './apps.js';

/** Lanes with a dead-letter queue (lib/resources QUEUES): the values `--lane` takes. */
const DLQ_LANES: readonly LaneName[] = LANES.filter((lane) => 'deadLetter' in QUEUES[lane]);

interface DlqOpts extends StackFlags {
  lane?: LaneName;
  max: number;
}

interface RedriveOpts extends DlqOpts {
  ids?: string[];
  force?: boolean;
}

const positiveInteger = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10_000)
    throw new InvalidArgumentError('Expected an integer from 1 to 10000.');
  return n;
};

/**
 * The DLQ tools wired to the stack's SQS queues and DynamoDB table (lib/ops/dlq.ts holds the logic). Loaded only by
 * the dlq commands: the SDK clients and lib/ops cost start-up time no other command should pay.
 */
async function openDlq(opts: StackFlags, cwd: string) {
  const loc = await locateStack(opts, cwd);
  const [ops, { SqsDeadLetterQueue, SqsMessageQueue }, { DynamoMessageStore }, clients] = await Promise.all([
    import('#lib/ops/dlq.js'),
    import('#lib/queue/index.js'),
    import('#lib/store/index.js'),
    openClients(loc),
  ]);
  const urls = (pick: (lane: LaneName) => string) =>
    Object.fromEntries(LANES.map((lane) => [lane, pick(lane)])) as Record<LaneName, string>;
  const deps = {
    deadLetters: new SqsDeadLetterQueue(
      clients.sqs,
      urls((lane) => loc.queueUrls[QUEUES[lane].deadLetter.queueId]),
    ),
    lanes: new SqsMessageQueue(
      clients.sqs,
      urls((lane) => loc.queueUrls[lane]),
    ),
    messages: new DynamoMessageStore(clients.doc, loc.tableName),
  };
  return { ops, deps, loc, close: clients.close };
}

/** An SDK or port error of the stack's services, as one line an operator can act on. */
function unreachable(err: unknown, where: string): CliError {
  const name = (err as { name?: string }).name ?? '';
  const cause = (err as { cause?: { message?: string } }).cause?.message;
  const message = `${err instanceof Error ? err.message : String(err)}${cause ? ` (${cause})` : ''}`;
  const local = where.startsWith('local');
  return new CliError(
    'stack_unavailable',
    `${where}: ${name && !message.startsWith(name) ? `${name}: ` : ''}${message}${local ? ' — is `npm start` still running?' : ''}`,
    [],
    { cause: err },
  );
}

const lanesOf = (opts: DlqOpts): readonly LaneName[] => (opts.lane ? [opts.lane] : DLQ_LANES);

const paint = (c: Colors, v: DeadLetterView): string =>
  v.state === 'dead'
    ? c.red(v.status ?? 'dead')
    : v.state === 'handled'
      ? c.green(v.status ?? '')
      : c.yellow(v.state);

function printViews(out: Output, views: DeadLetterView[]): void {
  const { c } = out;
  for (const v of views) {
    const head = `${c.bold(v.id ?? v.sqsMessageId)}  ${paint(c, v)}`;
    const facts = [
      v.app && `app ${v.app}`,
      `lane ${v.lane}`,
      v.attempts !== undefined && `${v.attempts} attempt${v.attempts === 1 ? '' : 's'}`,
      v.receives !== undefined && `${v.receives} receive${v.receives === 1 ? '' : 's'}`,
      v.ageSeconds !== undefined && `age ${duration(v.ageSeconds)}`,
      v.reconciled && c.yellow('status set to dead now'),
    ].filter(Boolean);
    out.line(`${head}  ${c.dim(facts.join(' · '))}`);
    if (v.lastError) out.line(`  last error: ${v.lastError}`);
    if (v.note) out.line(`  ${c.dim(v.note)}`);
  }
}

async function dlqList(run: Run, opts: DlqOpts): Promise<void> {
  const { out } = run;
  const dlq = await openDlq(opts, run.ctx.cwd);
  const views: DeadLetterView[] = [];
  try {
    for (const lane of lanesOf(opts)) {
      out.progress(`reading the ${lane} lane's DLQ (${dlq.loc.where})…`);
      views.push(
        ...(await dlq.ops.listDeadLetters(dlq.deps, {
          lane,
          max: opts.max,
          progress: (done, total) => out.progress(`${lane} DLQ: ${done}/${total} checked`),
        })),
      );
    }
  } catch (err) {
    throw err instanceof CliError ? err : unreachable(err, dlq.loc.where);
  } finally {
    out.clearProgress();
    dlq.close();
  }
  const reconciled = views.filter((v) => v.reconciled).length;
  out.data({ where: dlq.loc.where, messages: views, reconciled });
  printViews(out, views);
  const lanes = lanesOf(opts).join(', ');
  out.line(
    views.length === 0
      ? `no messages in the dead-letter queue of ${lanes} (${dlq.loc.where})`
      : `${views.length} message${views.length === 1 ? '' : 's'} in the dead-letter queue of ${lanes}${reconciled ? `; ${reconciled} now marked dead` : ''}${views.length >= opts.max ? ` (first ${opts.max} per lane: --max for more)` : ''}`,
  );
  if (views.some((v) => v.state === 'dead' || v.state === 'redrive_interrupted'))
    out.note(out.ce.dim('bring them back with: wecom-gateway dlq redrive'));
}

const OUTCOME_ORDER = ['redriven', 'already_handled', 'refused', 'skipped', 'failed'] as const;

function paintOutcome(c: Colors, r: RedriveResult): string {
  const word = r.outcome.replace('_', ' ');
  return r.outcome === 'redriven'
    ? c.green(word)
    : r.outcome === 'already_handled'
      ? c.dim(word)
      : r.outcome === 'refused'
        ? c.yellow(word)
        : c.red(word);
}

async function dlqRedrive(run: Run, opts: RedriveOpts): Promise<void> {
  const { out, ctx } = run;
  const bad = (opts.ids ?? []).filter((id) => !/^msg_[0-9A-Za-z]+$/.test(id));
  if (bad.length > 0) throw new UsageError(`--ids: not message ids (msg_…): ${bad.join(', ')}`);
  const dlq = await openDlq(opts, ctx.cwd);
  const results: RedriveResult[] = [];
  try {
    for (const lane of lanesOf(opts)) {
      out.progress(`reading the ${lane} lane's DLQ (${dlq.loc.where})…`);
      results.push(
        ...(await dlq.ops.redriveDeadLetters(dlq.deps, {
          lane,
          max: opts.max,
          ...(opts.ids ? { ids: opts.ids } : {}),
          force: opts.force === true,
          progress: (done, total, last) =>
            out.progress(`${lane} DLQ: ${done}/${total} — ${last.id ?? last.sqsMessageId} ${last.outcome}`),
        })),
      );
    }
  } catch (err) {
    throw err instanceof CliError ? err : unreachable(err, dlq.loc.where);
  } finally {
    out.clearProgress();
    dlq.close();
  }
  const missing = (opts.ids ?? []).filter((id) => !results.some((r) => r.id === id));
  const counts = Object.fromEntries(
    OUTCOME_ORDER.map((o) => [o, results.filter((r) => r.outcome === o).length]),
  );
  out.data({ where: dlq.loc.where, results, summary: counts, notFound: missing });
  for (const r of results)
    out.line(`${out.c.bold(r.id ?? r.sqsMessageId)}  ${paintOutcome(out.c, r)}  ${out.c.dim(r.detail)}`);
  for (const id of missing)
    out.line(
      `${out.c.bold(id)}  ${out.c.red('not found')}  ${out.c.dim('not in the dead-letter queue (or past --max)')}`,
    );
  const summary = OUTCOME_ORDER.filter((o) => (counts[o] ?? 0) > 0).map(
    (o) => `${counts[o]} ${o.replace('_', ' ')}`,
  );
  out.line(
    results.length === 0 && missing.length === 0
      ? 'nothing to redrive'
      : `summary: ${summary.join(', ') || 'nothing redriven'}${missing.length ? `, ${missing.length} not found` : ''}`,
  );
  if (counts.redriven) out.note(out.ce.dim('follow them with: wecom-gateway status <id> --watch'));
  if (missing.length > 0 || results.some((r) => !['redriven', 'already_handled'].includes(r.outcome)))
    ctx.exitCode = 1;
}

export function registerDlq(program: Command, ctx: CliContext): void {
  const dlq = program
    .command('dlq')
    .description("dead messages: list them and bring them back through the gateway's own path");
  const laneOption = () =>
    new Option('--lane <lane>', 'only this lane (default: every lane)').choices(DLQ_LANES);

  const listCmd = dlq
    .command('list')
    .description(
      "show the messages in the lanes' dead-letter queues and mark their records dead (nothing is removed)",
    )
    .addOption(laneOption())
    .option('--max <n>', 'at most this many messages per lane', positiveInteger, 100);
  addStackOptions(listCmd);
  listCmd
    .addHelpText(
      'after',
      `
Reading a message hides it from other readers for at most a minute; every one is shown again when the listing ends.
Examples:
  $ wecom-gateway dlq list
  $ wecom-gateway dlq list --lane high --stage prod --json`,
    )
    .action(action(ctx, dlqList));

  const redriveCmd = dlq
    .command('redrive')
    .description(
      'send dead messages again as the sender sends its own retries, with WeCom’s duplicate check; exit 1 unless all went back or were already handled',
    )
    .addOption(laneOption())
    .option('--ids <ids>', 'only these message ids (msg_…); repeat or comma-separate', list)
    .option('--max <n>', 'at most this many messages per lane', positiveInteger, 100)
    .option(
      '--force',
      'also send a message whose earlier attempt may have reached WeCom longer ago than its duplicate-check interval (it may arrive twice)',
    );
  addStackOptions(redriveCmd);
  redriveCmd
    .addHelpText(
      'after',
      `
A message that was sent, recalled, failed or expired meanwhile only loses its leftover DLQ copy. The others go back
to their lane as a fresh copy; an earlier attempt may have reached WeCom, so WeCom's duplicate check drops a
repeat within the interval fixed when the message was accepted. Past that interval a message is refused (it stays
in the DLQ) unless --force.
Examples:
  $ wecom-gateway dlq redrive
  $ wecom-gateway dlq redrive --lane high --ids msg_01JD2W6Q3K8N4X7TB9YB1R2S3T --stage prod`,
    )
    .action(action(ctx, dlqRedrive));
}

/**
 * `npm run load [-- --target URL --scenario NAME --duration S]`: artillery against the gateway, then reconciliation.
 *
 * Without --target it starts the local stack (emulators, WeCom simulator at 20 ms, API, sender) in this process,
 * runs load/gateway.yml against it with artillery in a process of its own, and reconciles: every accepted id must
 * reach a terminal status and the simulator must have received each exactly once. With --target it runs the same
 * scenarios against that URL (a deployed stack) and reports what the API shows (statuses, accepted → sent_at); add
 * --sim URL when that gateway sends to a WeCom simulator whose inboxes can be read.
 *
 * Prints artillery's own summary, the reconciliation and end-to-end latency percentiles; writes a JSON report and an
 * SVG latency chart (load/results/latest.*). Exits 1 on any lost, duplicated or unexpected delivery, a replay that
 * got another id, or a failed artillery run; 0 otherwise. `--skip-if-unavailable`: exit 0 with a notice when
 * artillery cannot be installed (no registry) — what `npm test` uses. `--install-only`: install artillery into
 * load/node_modules (when it is not there yet) and stop, so that `npm test` can do it while its other steps run.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { latencyOverTimeChart } from '../bench/lib/svg.js';
import { type ArtilleryRun, profilePhases, runArtillery, scalePhases } from './load/artillery.js';
import { ensureLoadDeps, LOAD_DIR, LoadDepsUnavailableError } from './load/deps.js';
import {
  latencySummary,
  type Reconciliation,
  readInboxes,
  readRecords,
  reconcile,
  settleStatuses,
} from './load/reconcile.js';

// fauxqs uses node:sqlite (ExperimentalWarning on Node 22); other warnings still print.
process.removeAllListeners('warning');
process.on('warning', (w) => {
  if (w.name !== 'ExperimentalWarning') process.stderr.write(`${w.name}: ${w.message}\n`);
});

const SIM_LATENCY_MS = 20;
const LOCAL_MEMBERS = 1000;
/** Everything, install included, must end in bounded time whatever happens. */
const WATCHDOG_MS = 12 * 60_000;

const { values: args } = parseArgs({
  options: {
    target: { type: 'string' },
    sim: { type: 'string' },
    scenario: { type: 'string', default: 'full' },
    duration: { type: 'string' },
    settle: { type: 'string', default: '60' },
    out: { type: 'string' },
    'skip-if-unavailable': { type: 'boolean', default: false },
    'install-only': { type: 'boolean', default: false },
  },
});

/** A mistake in how the runner was called: printed as one line, without a stack. */
class UsageError extends Error {
  override readonly name = 'UsageError';
}

const t0 = Date.now();
const say = (line: string) => process.stdout.write(`${line}\n`);
const watchdog = setTimeout(() => {
  say(`load: still running after ${WATCHDOG_MS / 60_000} min, giving up`);
  process.exit(2);
}, WATCHDOG_MS);
watchdog.unref();

async function main(): Promise<number> {
  const profile = args.scenario ?? 'full';
  const basePhases = await profilePhases(profile);
  const phases = args.duration ? scalePhases(basePhases, Number(args.duration)) : basePhases;
  if (args.duration && !(Number(args.duration) > 0))
    throw new UsageError('--duration must be a number of seconds');
  const loadSeconds = phases.reduce((a, p) => a + p.duration, 0);

  let deps: Awaited<ReturnType<typeof ensureLoadDeps>>;
  try {
    deps = await ensureLoadDeps(say);
  } catch (err) {
    if (err instanceof LoadDepsUnavailableError && args['skip-if-unavailable']) {
      say(`\nNOTICE: artillery load run SKIPPED — ${err.message}`);
      say(
        'NOTICE: the npm registry is needed once to install load/ (see docs/development/load-testing.md).\n',
      );
      return 0;
    }
    throw err;
  }
  if (args['install-only']) return 0;

  const outDir = resolve(args.out ?? join(LOAD_DIR, 'results'));
  await mkdir(outDir, { recursive: true });
  const work = await mkdtemp(join(tmpdir(), 'wgw-load-'));
  const runId = Date.now().toString(36).slice(-6);
  const remote = args.target !== undefined;
  let local: Awaited<ReturnType<typeof startLocal>> | undefined;
  try {
    const stackStarted = Date.now();
    if (!remote) local = await startLocal();
    const target = remote ? (args.target as string).replace(/\/$/, '') : (local?.apiUrl as string);
    const apiKey = remote ? process.env.WGW_API_KEY : local?.apiKey;
    if (!apiKey) throw new UsageError('set WGW_API_KEY to an API key of the target gateway');
    if (remote && !args.sim && !process.env.WGW_TOUSER) {
      throw new UsageError(
        'a deployed gateway sends to real WeCom: set WGW_TOUSER to the member ids that may receive the test messages (a|b|c), or pass --sim URL if it sends to a WeCom simulator',
      );
    }
    const fixedMembers = process.env.WGW_TOUSER?.split('|').filter(Boolean);
    const simUrl = remote ? args.sim : local?.simUrl;
    const stackMs = Date.now() - stackStarted;
    say(
      `\nload: ${profile} profile, ${phases.map((p) => `${p.name} ${p.duration} s @ ${p.arrivalRate}${p.rampTo ? `→${p.rampTo}` : ''}/s`).join(', ')} against ${remote ? target : `the local stack ${target} (simulator ${SIM_LATENCY_MS} ms)`}`,
    );

    const cpu0 = process.cpuUsage();
    const load0 = loadavg()[0] ?? 0;
    const artillery = await runArtillery({
      target,
      apiKey,
      profile,
      ...(args.duration ? { phases } : {}),
      recordDir: join(work, 'records'),
      outputFile: join(work, 'artillery.json'),
      runId,
      env: fixedMembers ? {} : { WGW_USERS: String(LOCAL_MEMBERS) },
      say,
      timeoutMs: (loadSeconds + 120) * 1000,
    });
    const cpu = process.cpuUsage(cpu0);

    say('\nload: reconciling accepted messages…');
    const reconcileStarted = Date.now();
    const records = await readRecords(join(work, 'records'));
    const { accepted } = records;
    const { statuses, waitedMs } = await settleStatuses(
      { origin: target, apiKey },
      accepted.map((r) => r.id),
      Number(args.settle) * 1000,
      say,
    );
    // Every member a message of this run may have reached, so a delivery nobody accepted is found too.
    const members =
      fixedMembers ?? Array.from({ length: LOCAL_MEMBERS }, (_, i) => `lt${String(i + 1).padStart(4, '0')}`);
    const inboxes = simUrl ? await readInboxes(simUrl, members, runId) : undefined;
    const rec = reconcile(records, statuses, inboxes, waitedMs);
    const simStats = simUrl ? await fetch(`${simUrl}/__sim/stats`).then((r) => r.json()) : undefined;
    const reconcileMs = Date.now() - reconcileStarted;

    const report = {
      runId,
      startedAt: new Date(t0).toISOString(),
      mode: remote ? 'deployed' : 'local',
      target: remote ? target : 'local stack (in-process emulators, WeCom simulator)',
      profile,
      phases,
      machine: {
        node: process.version,
        cpus: cpus().length,
        loadAverageAtStart: round(load0),
        loadAverageAtEnd: round(loadavg()[0] ?? 0),
      },
      timingsMs: {
        install: deps.ms,
        stackStart: stackMs,
        artillery: artillery.ms,
        settleAndReconcile: reconcileMs,
        total: Date.now() - t0,
      },
      install: deps,
      gatewayProcessCpuCores: remote ? undefined : round((cpu.user + cpu.system) / 1000 / artillery.ms),
      artillery: summarizeArtillery(artillery),
      reconciliation: {
        ...rec,
        notTerminal: rec.notTerminal.slice(0, 20),
        unread: rec.unread.slice(0, 20),
        missing: rec.missing.slice(0, 20),
        duplicates: rec.duplicates.slice(0, 20),
        unexpectedTokens: rec.unexpectedTokens.slice(0, 20),
        deliveryMs: undefined,
        sentMs: undefined,
        samples: undefined,
        inboxesRead: inboxes ? inboxes.members : 0,
      },
      latency: {
        acceptedToSimulatorReceived: inboxes ? latencySummary(rec.deliveryMs) : undefined,
        acceptedToSentAt: latencySummary(rec.sentMs),
      },
      simulator: simStats,
    };
    const reportFile = join(outDir, 'latest.json');
    await writeFile(reportFile, `${JSON.stringify(report, null, 2)}\n`);
    let chartFile: string | undefined;
    if (inboxes && rec.samples.length > 0) {
      chartFile = join(outDir, 'latest-latency.svg');
      await writeFile(
        chartFile,
        latencyOverTimeChart({
          title: `End-to-end latency over a ${profile} load run`,
          subtitle: `created_at → simulator received (${SIM_LATENCY_MS} ms); ${rec.deliveryMs.length} deliveries; ${cpus().length} vCPU, stack in one process`,
          samples: rec.samples,
          bucketMs: Math.max(2_000, Math.round((loadSeconds * 1000) / 40 / 1000) * 1000),
        }),
      );
    }
    printReconciliation(rec, report, Boolean(inboxes), artillery);
    say(`\nreport: ${reportFile}${chartFile ? `\nchart:  ${chartFile}` : ''}`);
    say(`load: done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    const problems = verdict(rec, report.artillery);
    for (const p of problems) say(`load: FAIL: ${p}`);
    if (problems.length === 0)
      say('load: PASS — nothing lost, nothing twice, nothing unexpected, every answer as expected');
    return problems.length > 0 ? 1 : 0;
  } finally {
    await local?.stop();
    await rm(work, { recursive: true, force: true });
  }
}

async function startLocal() {
  // Imported here: the stack's modules (emulators, undici 8) are only needed without --target.
  const { startLocalStack } = await import('#local/stack.js');
  const { devConfig, newDevKey } = await import('#local/dev-config.js');
  const key = newDevKey();
  const errors: string[] = [];
  const stack = await startLocalStack({
    port: 0,
    config: devConfig(key),
    simulator: { latencyMs: SIM_LATENCY_MS },
    logWrite: (line) => {
      if (errors.length < 20 && line.includes('"level":"error"')) errors.push(line);
    },
  });
  say(`load: local stack up at ${stack.apiUrl} (simulator ${stack.simulator?.url})`);
  return {
    apiUrl: stack.apiUrl,
    apiKey: key.key,
    simUrl: stack.simulator?.url,
    errors,
    stop: async () => {
      if (errors.length > 0)
        say(`load: the gateway logged ${errors.length} error line(s), first: ${errors[0]}`);
      await stack.stop();
    },
  };
}

/**
 * What fails a run: the reconciliation, and any answer the gateway should not have given (a wrong status for a
 * valid or an invalid request, a replay with another id) or a transport error other than a client timeout.
 * Client timeouts alone do not fail it: they are timing (a loaded machine), reported beside the figures.
 */
function verdict(rec: Reconciliation, a: ReturnType<typeof summarizeArtillery>): string[] {
  const problems: string[] = [];
  if (rec.lost > 0) {
    const waiting = (rec.byStatus.deferred ?? 0) + (rec.byStatus.queued ?? 0);
    problems.push(
      `${rec.lost} accepted message(s) not delivered${waiting > 0 ? ` (${waiting} still queued or deferred for WeCom quota when the settle time ended: a longer --settle, or more recipients, tells those apart from lost ones)` : ''}`,
    );
  }
  if (rec.duplicates.length > 0) problems.push(`${rec.duplicates.length} message(s) delivered twice`);
  if (rec.unexpectedTokens.length > 0)
    problems.push(`${rec.unexpectedTokens.length} delivery(ies) of messages that were refused or never sent`);
  if (rec.replays.mismatched > 0)
    problems.push(`${rec.replays.mismatched} replay(s) answered with another id`);
  const wrong = Object.entries(a.gateway).filter(
    ([k]) => k.startsWith('wgw.unexpected_answer.') || k === 'wgw.rejected_wrongly',
  );
  for (const [k, n] of wrong) problems.push(`${n} × ${k}`);
  // A timed-out request is never checked, so every failed expectation is an answer that came and was wrong.
  const failedExpectations = a.expect['plugins.expect.failed'] ?? 0;
  if (failedExpectations > 0)
    problems.push(`${failedExpectations} failed expectation(s) (see plugins.expect.*)`);
  for (const [k, n] of Object.entries(a.errors)) {
    if (TIMEOUT_ERRORS.has(k.slice('errors.'.length)) || k.startsWith('errors.Failed expectations')) continue;
    problems.push(`${n} × ${k}`);
  }
  return problems;
}

/** Transport errors that only say the answer was slower than the client's timeout. */
const TIMEOUT_ERRORS = new Set(['ERR_SOCKET_TIMEOUT', 'ETIMEDOUT', 'ESOCKETTIMEDOUT']);

function summarizeArtillery(run: ArtilleryRun) {
  const { counters, summaries } = run.aggregate;
  const pick = (prefix: string) =>
    Object.fromEntries(Object.entries(counters).filter(([k]) => k.startsWith(prefix)));
  const rt = (name: string) => {
    const s = summaries[name];
    return s ? { p50: s.p50, p95: s.p95, p99: s.p99, max: s.max } : undefined;
  };
  return {
    exitCode: run.exitCode,
    vusers: pick('vusers.'),
    http: pick('http.'),
    expect: pick('plugins.expect.'),
    gateway: pick('wgw.'),
    errors: pick('errors.'),
    responseTimeMs: rt('http.response_time'),
    byEndpoint: Object.fromEntries(
      Object.keys(summaries)
        .filter((k) => k.startsWith('plugins.metrics-by-endpoint.response_time.'))
        .map((k) => [k.slice('plugins.metrics-by-endpoint.response_time.'.length), rt(k)]),
    ),
  };
}

function printReconciliation(
  rec: Reconciliation,
  report: {
    latency: Record<string, ReturnType<typeof latencySummary> | undefined>;
    artillery: ReturnType<typeof summarizeArtillery>;
  },
  sawInboxes: boolean,
  artillery: ArtilleryRun,
) {
  const lat = (s: ReturnType<typeof latencySummary> | undefined) =>
    s && s.n > 0
      ? `p50 ${s.p50}  p90 ${s.p90}  p95 ${s.p95}  p99 ${s.p99}  max ${s.max} ms  (n=${s.n})`
      : 'no samples';
  const g = report.artillery.gateway;
  say('\n── reconciliation ─────────────────────────────────────────────');
  say(
    `accepted ids            ${rec.accepted}   statuses: ${Object.entries(rec.byStatus)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  say(
    `lost                    ${rec.lost}   (not terminal after ${(rec.settleWaitMs / 1000).toFixed(0)} s: ${rec.notTerminal.length}; sent but in no inbox: ${sawInboxes ? rec.missing.length : 'n/a'}; status never readable: ${rec.unread.length}${sawInboxes ? ', judged by the inboxes' : ''})`,
  );
  say(`duplicates              ${sawInboxes ? rec.duplicates.length : 'n/a (WeCom inboxes cannot be read)'}`);
  say(
    `unexpected deliveries   ${sawInboxes ? rec.unexpectedTokens.length : 'n/a'}   (messages no accepted id owns: rejected requests must change nothing)`,
  );
  say(`Idempotency-Key replays ${rec.replays.sameId} of ${rec.replays.total} answered with the first id`);
  say(
    `unanswered (client timeout) ${rec.unanswered.total}${sawInboxes ? `, of which delivered ${rec.unanswered.delivered} (at most once each: ${rec.unanswered.duplicated} twice)` : ''}`,
  );
  say(
    `invalid requests        ${g['wgw.rejected_as_expected'] ?? 0} rejected with the expected status and code, ${g['wgw.rejected_wrongly'] ?? 0} otherwise`,
  );
  if (sawInboxes) say(`accepted → WeCom received ${lat(report.latency.acceptedToSimulatorReceived)}`);
  say(`accepted → sent_at       ${lat(report.latency.acceptedToSentAt)}`);
  say(
    `artillery exit code     ${artillery.exitCode}${artillery.exitCode !== 0 ? "  (its ensure check also fails on client timeouts; this run's verdict is below)" : ''}`,
  );
}

const round = (n: number) => Math.round(n * 100) / 100;

main()
  .then((code) => process.exit(code))
  .catch((err: unknown) => {
    const usage = err instanceof UsageError || (err instanceof Error && /no load profile/.test(err.message));
    say(
      `load: failed: ${err instanceof Error ? (usage ? err.message : (err.stack ?? err.message)) : String(err)}`,
    );
    process.exit(1);
  });

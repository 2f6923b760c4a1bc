/**
 * Issue 25: where each function's CPU goes under load. Every bundled function (as CDK bundles it) runs in a process
 * of its own with `--cpu-prof` on the isolated stack (DynamoDB, SQS and the WeCom simulator at 20 ms in processes of
 * their own), one after the other:
 * - ingest: single POSTs, closed loop (16 clients, 5 s), then a backlog of batch POSTs (100 per POST) whose
 *   messages carry a `callback_url`, so the sender has status webhooks to queue;
 * - sender: drains that backlog (one process, the stack's lanes and concurrency, as metric `sender-isolated`);
 * - notify: delivers the backlog's `message.sent` webhooks to a local receiver (one process, the notify event source);
 * - callback: 100 WeCom callbacks at 50/s, then two bursts of 200 in one second (as metric `callback-isolated`).
 * Each process exits normally, writing its profile; the profile's call frames are mapped back to source files
 * through the bundle's source map (bench/lib/cpu-profile.ts), and the top self-time entries are printed.
 *
 * Profiles, the bundles they were taken of (with their maps) and `summary.json` go to bench/results/profiles/
 * (git-ignored); a `.cpuprofile` opens in Chrome DevTools (Performance › Load profile) or VS Code.
 * `BENCH_PROFILE_QUOTA=unbound` profiles the sender with the app quota of metric `sender-isolated`'s unbound drain.
 */
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from '../../infra/constructs/esbuild-options.js';
import { callbackAppOf, callbackLoad, prepareBurst } from '../lib/callbacks.js';
import { LINGERING_POLL_MS, startConsumerFleet } from '../lib/consumers.js';
import { type ProfileSummary, summarizeProfile } from '../lib/cpu-profile.js';
import { drain, loadBacklog } from '../lib/drain.js';
import {
  type ProcessOptions,
  startCallbackProcess,
  startIngestProcess,
  startNotifyProcess,
} from '../lib/functions.js';
import { SIM_LATENCY_MS } from '../lib/gateway.js';
import type { BenchContext, Metric, Row } from '../lib/harness.js';
import { fmt, sleep, waitUntil } from '../lib/harness.js';
import { ALERT_CONTENT, textMessage } from '../lib/http.js';
import { type IsolatedStack, purgeLanes, startIsolatedStack, writeConfigWithQuota } from '../lib/isolated.js';
import { runLoad } from '../lib/load.js';
import { startWebhookReceiver, WEBHOOK_TRUST_ENV, type WebhookReceiver } from '../lib/webhooks.js';
import { UNBOUND_QUOTA, UNBOUND_SIM_LIMITS } from './sender-isolated.js';

type Profiled = 'ingest' | 'sender' | 'notify' | 'callback';
const BACKLOG = 1_200;
const TOP = 15;
/** A process under `--cpu-prof` writes its profile at exit: give it time to. */
const PROFILE_EXIT_GRACE_MS = 10_000;
const OUT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'results', 'profiles');

export const profile: Metric = {
  id: 'profile',
  title: 'CPU profiles of each bundled function under load (top self time)',
  optIn: true,
  async run(ctx) {
    const unbound = process.env.BENCH_PROFILE_QUOTA === 'unbound';
    const iso = await startIsolatedStack({
      simLatencyMs: SIM_LATENCY_MS,
      ...(unbound ? { simLimits: UNBOUND_SIM_LIMITS } : {}),
    });
    const dir = await mkdtemp(join(tmpdir(), 'wgw-bench-profile-'));
    // Only this run's profiles: each function's folder must hold exactly one.
    await rm(OUT_DIR, { recursive: true, force: true });
    await mkdir(OUT_DIR, { recursive: true });
    const hooks = await startWebhookReceiver();
    try {
      const prof = (fn: Profiled): ProcessOptions => ({
        execArgv: ['--cpu-prof', `--cpu-prof-dir=${join(OUT_DIR, fn)}`],
        graceMs: PROFILE_EXIT_GRACE_MS,
      });
      const load: Record<Profiled, string> = {
        ingest: await profileIngest(ctx, iso, dir, prof('ingest'), hooks.url),
        sender: await profileSender(ctx, iso, dir, {
          ...prof('sender'),
          ...(unbound
            ? { env: { GATEWAY_CONFIG: await writeConfigWithQuota(iso, dir, 'unbound', UNBOUND_QUOTA) } }
            : {}),
        }),
        notify: await profileNotify(ctx, iso, dir, { ...prof('notify'), env: WEBHOOK_TRUST_ENV }, hooks),
        callback: await profileCallback(ctx, iso, dir, prof('callback')),
      };
      const summaries: Partial<Record<Profiled, ProfileSummary>> = {};
      for (const fn of Object.keys(load) as Profiled[]) {
        const bundle = join(OUT_DIR, fn, 'index.mjs');
        // The bundle the profile was taken of, with its map: what DevTools needs to show original sources.
        await copyFile(join(dir, fn, 'index.mjs'), bundle);
        await copyFile(join(dir, fn, 'index.mjs.map'), `${bundle}.map`);
        const file = (await readdir(join(OUT_DIR, fn))).find((f) => f.endsWith('.cpuprofile'));
        if (!file) throw new Error(`the ${fn} process wrote no profile`);
        // Mapped through the bundle the process ran (the profile's call frames name its path).
        summaries[fn] = await summarizeProfile(join(OUT_DIR, fn, file), {
          bundle: join(dir, fn, 'index.mjs'),
          top: TOP,
        });
      }
      await writeFile(join(OUT_DIR, 'summary.json'), `${JSON.stringify({ load, summaries }, null, 2)}\n`);
      const rows: Row[] = (Object.keys(load) as Profiled[]).map((fn) => {
        const s = summaries[fn] as ProfileSummary;
        return {
          metric: `CPU profile, ${fn}: top self time`,
          measured: s.top
            .slice(0, 3)
            .map((e) => `${e.name} ${fmt(e.pct, 1)}%`)
            .join(', '),
          target: 'printed',
          pass: null,
          value: s.busyMs,
        };
      });
      return {
        rows,
        details: {
          out: relative(REPO_ROOT, OUT_DIR),
          quota: unbound ? 'unbound' : 'default',
          load,
          summaries,
        },
        notes: (Object.keys(load) as Profiled[]).map((fn) =>
          describeProfile(fn, load[fn], summaries[fn] as ProfileSummary),
        ),
      };
    } finally {
      await hooks.stop();
      await iso.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};

async function profileIngest(
  ctx: BenchContext,
  iso: IsolatedStack,
  dir: string,
  opts: ProcessOptions,
  hookUrl: string,
): Promise<string> {
  const ingest = await startIngestProcess(iso, dir, opts);
  try {
    const single = await runLoad({
      origin: ingest.origin,
      path: '/v1/messages',
      headers: { authorization: `Bearer ${iso.key}` },
      bodyTemplate: JSON.stringify(textMessage(`${ALERT_CONTENT} profile ${ctx.runId} #{{i}}`, 'pu{{m}}')),
      members: 100,
      mode: 'closed',
      connections: 16,
      concurrency: 16,
      durationMs: 5_000,
    });
    // The single POSTs' messages are not the sender's load: only the backlog below is.
    await purgeLanes(iso);
    const backlog = await loadBacklog({
      origin: ingest.origin,
      key: iso.key,
      prefix: 'prof-',
      count: BACKLOG,
      runId: ctx.runId,
      extra: (i) => ({ callback_url: `${hookUrl}/${i}` }),
    });
    const load = `${single.requests} single POSTs (16 in flight, ${fmt(single.throughput, 0)}/s), then ${BACKLOG / 100} batch POSTs of 100 with a callback_url (${fmt(backlog.ms / 1000, 1)} s); ${fmt(ingest.stdoutBytes() / (single.issued + BACKLOG), 0)} log bytes per message`;
    ctx.log(`ingest: ${load}`);
    return load;
  } finally {
    await ingest.stop();
  }
}

async function profileSender(
  ctx: BenchContext,
  iso: IsolatedStack,
  dir: string,
  opts: ProcessOptions,
): Promise<string> {
  const fleet = await startConsumerFleet(iso, dir, { kind: 'sender', layout: 'one-process', ...opts });
  try {
    const d = await drain({
      simUrl: iso.simUrl,
      fleet,
      prefix: 'prof-',
      count: BACKLOG,
      timeoutMs: 120_000,
      otherCpu: {},
    });
    const logBytes = fleet.processes.reduce((n, p) => n + p.stdoutBytes(), 0);
    const load = `drained ${d.delivered} of ${BACKLOG} in ${fmt(d.timeToLastMs / 1000, 1)} s (${fmt(d.steadyPerSec, 0)} msg/s, ${fmt(d.cpuMsPerMessage, 2)} ms CPU and ${fmt(logBytes / Math.max(1, d.delivered), 0)} log bytes per message)`;
    ctx.log(`sender: ${load}`);
    return load;
  } finally {
    await fleet.stop();
    await sleep(LINGERING_POLL_MS);
  }
}

async function profileNotify(
  ctx: BenchContext,
  iso: IsolatedStack,
  dir: string,
  opts: ProcessOptions,
  hooks: WebhookReceiver,
): Promise<string> {
  const notify = await startNotifyProcess(iso, dir, opts);
  try {
    const t0 = Date.now();
    notify.startPolling();
    await waitUntil(() => hooks.received() >= BACKLOG, 120_000, 100);
    const load = `${hooks.received()} webhooks delivered in ${fmt((Date.now() - t0) / 1000, 1)} s; ${fmt(notify.stdoutBytes() / Math.max(1, hooks.received()), 0)} log bytes per webhook`;
    ctx.log(`notify: ${load}`);
    return load;
  } finally {
    await notify.stop();
  }
}

async function profileCallback(
  ctx: BenchContext,
  iso: IsolatedStack,
  dir: string,
  opts: ProcessOptions,
): Promise<string> {
  const callback = await startCallbackProcess(iso, dir, opts);
  try {
    const app = callbackAppOf(iso.config);
    const now = Math.floor(Date.now() / 1000);
    const batch = (from: number, count: number) =>
      prepareBurst(app, { runId: ctx.runId, from, count, retryEvery: 10, now });
    await runLoad(callbackLoad(callback.origin, batch(0, 100).requests, 50));
    let answered = 0;
    for (const from of [1_000, 2_000]) {
      const r = await runLoad(callbackLoad(callback.origin, batch(from, 200).requests));
      answered += r.statuses['200'] ?? 0;
    }
    const load = `100 callbacks at 50/s, then 2 bursts of 200 in 1 s (${answered} of 400 answered 200); ${fmt(callback.stdoutBytes() / 500, 0)} log bytes per callback`;
    ctx.log(`callback: ${load}`);
    return load;
  } finally {
    await callback.stop();
  }
}

function describeProfile(fn: Profiled, load: string, s: ProfileSummary): string {
  const origins = s.byOrigin
    .slice(0, 6)
    .map((o) => `${o.origin} ${fmt(o.pct, 0)}%`)
    .join(', ');
  const top = s.top
    .map((e) => `${e.name} (${e.file}${e.line ? `:${e.line}` : ''}) ${fmt(e.selfMs, 0)} ms ${fmt(e.pct, 1)}%`)
    .join('; ');
  const own = s.gatewayFiles
    .slice(0, 5)
    .map((f) => `${f.file} ${fmt(f.pct, 1)}%`)
    .join(', ');
  return `profile ${fn}: ${load}; ${fmt(s.busyMs, 0)} ms busy of ${fmt(s.wallMs, 0)} ms sampled. By origin: ${origins}. The gateway's own files: ${own || 'none'}. Top ${s.top.length} by self time: ${top}.`;
}

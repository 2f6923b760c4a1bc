/**
 * SPEC §7: peak RSS of each function's process under load → ≤ 128 MB.
 *
 * Each function runs bundled (as CDK bundles it) in its own `node` process against the stack's emulators and
 * simulator (bench/lib/functions.ts), and the figure is the kernel's high-water mark of that process's resident set
 * (VmHWM in /proc/<pid>/status) — the peak, not a sample:
 * - ingest: the bundle behind a minimal HTTP front door built on the local stack's API Gateway v2 event builder,
 *   driven by the closed-loop generator with single POSTs for 3 s, then batch POSTs of 100 for 2 s;
 * - sender: the bundle invoked over IPC by the stack's event source mapping emulation (local/poller.ts) in this
 *   process, draining a preloaded backlog of 1,000 messages in full batches.
 * Lambda gives a container one invocation at a time, so the row is measured that way (1 request / 1 batch in
 * flight). Then the same process takes 8 requests (2 batch POSTs) or 6 batches at once — several containers' worth
 * in one process — reported as an upper bound.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FunctionProcess, startIngestProcess, startSenderProcess } from '../lib/functions.js';
import { startBenchGateway } from '../lib/gateway.js';
import type { BenchContext, Metric, Row } from '../lib/harness.js';
import { fmt, mapLimit, round, waitUntil } from '../lib/harness.js';
import { ALERT_CONTENT, textMessage } from '../lib/http.js';
import { runLoad } from '../lib/load.js';

const LIMIT_BYTES = 128 * 1024 * 1024;
const MB = 1024 * 1024;
const SENDER_BACKLOG = 1_000;

interface Phase {
  peakBytes: number;
  load: Record<string, unknown>;
}

interface Figures {
  idleRssBytes: number;
  lambdaLike: Phase;
  concurrent: Phase;
  logBytes: number;
}

export const peakRss: Metric = {
  id: 'rss',
  title: 'peak RSS of each function process under load',
  async run(ctx) {
    const dir = await mkdtemp(join(tmpdir(), 'wgw-bench-rss-'));
    try {
      const ingest = await measureIngest(ctx, dir);
      const sender = await measureSender(ctx, dir);
      const rows: Row[] = [];
      for (const [name, f] of [
        ['ingest', ingest],
        ['sender', sender],
      ] as const) {
        rows.push({
          metric: `peak RSS under load, ${name} (1 invocation at a time)`,
          measured: `${fmt(f.lambdaLike.peakBytes / MB, 1)} MB (idle ${fmt(f.idleRssBytes / MB, 1)} MB)`,
          target: '≤ 128 MB',
          pass: f.lambdaLike.peakBytes <= LIMIT_BYTES,
          value: round(f.lambdaLike.peakBytes / MB, 1),
        });
      }
      for (const [name, f, how] of [
        ['ingest', ingest, '8 requests'],
        ['sender', sender, '6 batches'],
      ] as const) {
        rows.push({
          metric: `peak RSS, ${name}, ${how} at once (upper bound)`,
          measured: `${fmt(f.concurrent.peakBytes / MB, 1)} MB`,
          target: '≤ 128 MB',
          pass: null,
          value: round(f.concurrent.peakBytes / MB, 1),
        });
      }
      return {
        rows,
        details: { ingest, sender },
        notes: [
          `rss ingest (own process, HTTP shim): one at a time ${JSON.stringify(ingest.lambdaLike.load)} → ${fmt(ingest.lambdaLike.peakBytes / MB, 1)} MB; then ${JSON.stringify(ingest.concurrent.load)} → ${fmt(ingest.concurrent.peakBytes / MB, 1)} MB (VmHWM).`,
          `rss sender (own process, IPC from the pollers): one batch at a time ${JSON.stringify(sender.lambdaLike.load)} → ${fmt(sender.lambdaLike.peakBytes / MB, 1)} MB; then ${JSON.stringify(sender.concurrent.load)} → ${fmt(sender.concurrent.peakBytes / MB, 1)} MB (VmHWM).`,
        ],
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};

async function ingestLoad(origin: string, key: string, inFlight: number, batchInFlight: number) {
  const headers = { authorization: `Bearer ${key}` };
  const single = await runLoad({
    origin,
    path: '/v1/messages',
    headers,
    bodyTemplate: JSON.stringify(textMessage(`${ALERT_CONTENT} rss #{{i}}`, 'r{{m}}')),
    members: 100,
    mode: 'closed',
    connections: inFlight,
    concurrency: inFlight,
    durationMs: 3_000,
  });
  const batch = await runLoad({
    origin,
    path: '/v1/messages/batch',
    headers,
    bodyTemplate: JSON.stringify({
      messages: Array.from({ length: 100 }, (_, k) =>
        textMessage(`${ALERT_CONTENT} rss batch {{i}}.${k}`, `r${k}`),
      ),
    }),
    mode: 'closed',
    connections: batchInFlight,
    concurrency: batchInFlight,
    durationMs: 2_000,
  });
  return {
    inFlight,
    singlePosts: single.requests,
    singleOk: single.statuses['202'] ?? 0,
    batchInFlight,
    batchPosts: batch.requests,
    batchOk: batch.statuses['207'] ?? 0,
  };
}

async function measureIngest(ctx: BenchContext, dir: string): Promise<Figures> {
  const gw = await startBenchGateway({ startSender: false });
  let proc: (FunctionProcess & { origin: string }) | undefined;
  try {
    proc = await startIngestProcess(gw, dir);
    ctx.log('ingest process: one request at a time (single, then batch POSTs)');
    const one = await ingestLoad(proc.origin, gw.key, 1, 1);
    const afterOne = await proc.memory();
    ctx.log('ingest process: 8 requests / 2 batch POSTs at once');
    const many = await ingestLoad(proc.origin, gw.key, 8, 2);
    const afterMany = await proc.memory();
    return {
      idleRssBytes: proc.idleRssBytes,
      lambdaLike: { peakBytes: afterOne?.peakBytes ?? Number.NaN, load: one },
      concurrent: { peakBytes: afterMany?.peakBytes ?? Number.NaN, load: many },
      logBytes: proc.stdoutBytes(),
    };
  } finally {
    await proc?.stop();
    await gw.stop();
  }
}

async function drain(
  ctx: BenchContext,
  dir: string,
  serial: boolean,
): Promise<{ idle: number; phase: Phase; logBytes: number }> {
  const gw = await startBenchGateway({ startSender: false });
  let proc: Awaited<ReturnType<typeof startSenderProcess>> | undefined;
  try {
    const sim = gw.stack.simulator;
    if (!sim) throw new Error('no simulator');
    proc = await startSenderProcess(gw, dir, { serial });
    const starts = Array.from({ length: SENDER_BACKLOG / 100 }, (_, k) => k * 100);
    await mapLimit(starts, 1, async (from) => {
      const res = await gw.api.post('/v1/messages/batch', {
        messages: Array.from({ length: 100 }, (_, k) =>
          textMessage(`${ALERT_CONTENT} rss sender ${from + k}`, `rs${(from + k) % 500}`, {
            priority: (from + k) % 3 === 0 ? 'high' : 'normal',
          }),
        ),
      });
      if (res.status !== 207) throw new Error(`batch answered ${res.status}`);
    });
    ctx.log(
      `sender process: draining ${SENDER_BACKLOG} messages, ${serial ? 'one batch' : '6 batches'} at a time`,
    );
    const t0 = Date.now();
    proc.startPolling();
    const drained = await waitUntil(() => sim.stats().delivered >= SENDER_BACKLOG, 40_000, 50);
    const elapsed = Date.now() - t0;
    const mem = await proc.memory();
    return {
      idle: proc.idleRssBytes,
      logBytes: proc.stdoutBytes(),
      phase: {
        peakBytes: mem?.peakBytes ?? Number.NaN,
        load: {
          backlog: SENDER_BACKLOG,
          delivered: sim.stats().delivered,
          drained,
          // The sender with a core of its own, as in Lambda (compare metric `sender`, where it shares one).
          deliveredPerSec: round((sim.stats().delivered / elapsed) * 1000, 1),
        },
      },
    };
  } finally {
    await proc?.stop();
    await gw.stop();
  }
}

async function measureSender(ctx: BenchContext, dir: string): Promise<Figures> {
  const one = await drain(ctx, dir, true);
  const many = await drain(ctx, dir, false);
  return { idleRssBytes: one.idle, lambdaLike: one.phase, concurrent: many.phase, logBytes: one.logBytes };
}

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
 * - callback: the bundle behind the same shim, signed WeCom callbacks (bench/lib/callbacks.ts) one at a time for
 *   3 s, then a burst of 200 in one second;
 * - notify: the bundle fed by the notify queue's event source emulation, delivering 300 `message.sent` webhooks
 *   (queued by the stack's own sender) to an https receiver on loopback.
 * Lambda gives a container one invocation at a time, so the row is measured that way (1 request / 1 batch in
 * flight). Then the same process takes 8 requests (2 batch POSTs), 6 batches or a callback burst at once — several
 * containers' worth in one process — reported as an upper bound.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NOTIFY_EVENT_SOURCE } from '#lib/resources/index.js';
import { BURST, callbackAppOf, callbackLoad, prepareBurst } from '../lib/callbacks.js';
import {
  type FunctionProcess,
  startCallbackProcess,
  startIngestProcess,
  startNotifyProcess,
  startSenderProcess,
} from '../lib/functions.js';
import { startBenchGateway } from '../lib/gateway.js';
import type { BenchContext, Metric, Row } from '../lib/harness.js';
import { fmt, mapLimit, round, waitUntil } from '../lib/harness.js';
import { ALERT_CONTENT, textMessage } from '../lib/http.js';
import { runLoad } from '../lib/load.js';
import { startWebhookReceiver, WEBHOOK_TRUST_ENV } from '../lib/webhooks.js';

const LIMIT_BYTES = 128 * 1024 * 1024;
const MB = 1024 * 1024;
const SENDER_BACKLOG = 1_000;
const CALLBACKS = 600;
const WEBHOOKS = 300;

interface Phase {
  peakBytes: number;
  load: Record<string, unknown>;
}

interface Figures {
  idleRssBytes: number;
  lambdaLike: Phase;
  /** Several containers' worth in one process (an upper bound); not measured for notify. */
  concurrent?: Phase;
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
      const callback = await measureCallback(ctx, dir);
      const notify = await measureNotify(ctx, dir);
      const all = { ingest, sender, callback, notify } as const;
      const rows: Row[] = [];
      for (const [name, f] of Object.entries(all)) {
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
        ['callback', callback, `a burst of ${BURST.count} in 1 s`],
      ] as const) {
        if (!f.concurrent) continue;
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
        details: all,
        notes: [
          ...(['ingest', 'sender', 'callback', 'notify'] as const).map((name) => {
            const f = all[name];
            const more = f.concurrent
              ? `; then ${JSON.stringify(f.concurrent.load)} → ${fmt(f.concurrent.peakBytes / MB, 1)} MB`
              : '';
            return `rss ${name} (own process): one at a time ${JSON.stringify(f.lambdaLike.load)} → ${fmt(f.lambdaLike.peakBytes / MB, 1)} MB${more} (VmHWM).`;
          }),
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

/**
 * The bundled callback handler behind the API Gateway shim: signed WeCom callbacks one at a time (closed loop, 1 in
 * flight, every request distinct), then a burst of 200 in one second in the same process (upper bound).
 */
async function measureCallback(ctx: BenchContext, dir: string): Promise<Figures> {
  const gw = await startBenchGateway({ startSender: false });
  let proc: (FunctionProcess & { origin: string }) | undefined;
  try {
    proc = await startCallbackProcess(gw, dir);
    const app = callbackAppOf(gw.stack.config);
    const batch = (from: number, count: number) =>
      prepareBurst(app, { runId: `rss${Date.now()}`, from, count, retryEvery: BURST.retryEvery });
    ctx.log('callback process: one callback at a time, then a burst');
    const oneAtATime = batch(0, CALLBACKS).requests;
    const one = await runLoad({
      ...callbackLoad(proc.origin, oneAtATime),
      mode: 'closed',
      concurrency: 1,
      connections: 1,
      durationMs: 3_000,
      maxRequests: oneAtATime.length,
    });
    const afterOne = await proc.memory();
    const burst = await runLoad(callbackLoad(proc.origin, batch(10_000, BURST.count).requests));
    const afterBurst = await proc.memory();
    return {
      idleRssBytes: proc.idleRssBytes,
      lambdaLike: {
        peakBytes: afterOne?.peakBytes ?? Number.NaN,
        load: { callbacks: one.requests, answered200: one.statuses['200'] ?? 0 },
      },
      concurrent: {
        peakBytes: afterBurst?.peakBytes ?? Number.NaN,
        load: { burst: burst.requests, answered200: burst.statuses['200'] ?? 0 },
      },
      logBytes: proc.stdoutBytes(),
    };
  } finally {
    await proc?.stop();
    await gw.stop();
  }
}

/**
 * The bundled notify handler, fed by the notify event source emulation one invocation at a time: the stack's own
 * sender delivers messages with a `callback_url` and queues their `message.sent` webhooks, which the notify process
 * delivers to an https receiver on loopback.
 */
async function measureNotify(ctx: BenchContext, dir: string): Promise<Figures> {
  const hooks = await startWebhookReceiver();
  const gw = await startBenchGateway({ startSender: true, startNotify: false });
  let proc: Awaited<ReturnType<typeof startNotifyProcess>> | undefined;
  try {
    proc = await startNotifyProcess(gw, dir, { serial: true, env: WEBHOOK_TRUST_ENV });
    const starts = Array.from({ length: WEBHOOKS / 100 }, (_, k) => k * 100);
    await mapLimit(starts, 1, async (from) => {
      const res = await gw.api.post('/v1/messages/batch', {
        messages: Array.from({ length: 100 }, (_, k) =>
          textMessage(`${ALERT_CONTENT} rss notify ${from + k}`, `rn${from + k}`, {
            callback_url: `${hooks.url}/${from + k}`,
          }),
        ),
      });
      if (res.status !== 207) throw new Error(`batch answered ${res.status}`);
    });
    ctx.log(
      `notify process: delivering ${WEBHOOKS} webhooks, one batch of ${NOTIFY_EVENT_SOURCE.batchSize} at a time`,
    );
    const t0 = Date.now();
    proc.startPolling();
    const done = await waitUntil(() => hooks.received() >= WEBHOOKS, 60_000, 50);
    const mem = await proc.memory();
    return {
      idleRssBytes: proc.idleRssBytes,
      lambdaLike: {
        peakBytes: mem?.peakBytes ?? Number.NaN,
        load: { webhooks: hooks.received(), done, seconds: round((Date.now() - t0) / 1000, 1) },
      },
      logBytes: proc.stdoutBytes(),
    };
  } finally {
    await proc?.stop();
    await gw.stop();
    await hooks.stop();
  }
}

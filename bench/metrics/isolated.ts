/**
 * SPEC §7 ingest and sender ratios with every part in a process of its own (bench/lib/isolated.ts): DynamoDB, SQS
 * and the WeCom simulator (20 ms) each in one, the bundled ingest and sender handlers each in one, the baselines
 * each in one, the load generator in a worker thread of the bench process. So a ratio is no longer one shared
 * event loop's; each process's CPU is read from /proc and the row says what saturated.
 *
 * Ingest: closed loop (16 clients, 1 s warm-up + 3 s, rounds S, R, G, O twice) against
 *   S = bare node:http + SendMessage (SPEC's "bare + SendMessage only"),
 *   R = bare node:http + conditional PutItem + SendMessage, sequential: the fair baseline for record-then-enqueue,
 *   O = the same with PutItem and SendMessage overlapped (Promise.all),
 *   G = the bundled ingest handler behind the API Gateway event shim;
 * then an open loop at a rate none of them saturates, where latency is the sum of the calls' round trips: R vs O
 * is the latency a gateway that overlaps its record write and its enqueue would gain.
 *
 * Sender: a backlog loaded through the ingest process, then the bundled sender (one process, invoked by the bench's
 * event source mapping emulation with the stack's concurrency) drains it; delivered/s from the simulator inboxes'
 * `receivedAt` (10th–90th percentile of arrivals) ÷ ideal (6 × 10 ÷ 20 ms). The sender process's CPU per
 * delivered message gives a per-container ceiling: a container handles one batch at a time, so it cannot exceed
 * batch ÷ (WeCom latency + batch × CPU per message ÷ the container's CPU share).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PurgeQueueCommand } from '@aws-sdk/client-sqs';
import { DEFAULT_SENDER_CONCURRENCY, FUNCTIONS, senderEventSources } from '#lib/resources/index.js';
import {
  type FunctionProcess,
  startBaselineProcess,
  startIngestProcess,
  startRecordBaselineProcess,
  startSenderProcess,
} from '../lib/functions.js';
import { SIM_LATENCY_MS } from '../lib/gateway.js';
import type { BenchContext, Metric, Row } from '../lib/harness.js';
import {
  fmt,
  mapLimit,
  msToWindowEnd,
  percentile,
  round,
  sleep,
  summarize,
  waitUntil,
} from '../lib/harness.js';
import { ALERT_CONTENT, textMessage } from '../lib/http.js';
import {
  cpuMark,
  fmtCores,
  type IsolatedStack,
  lambdaVcpu,
  limiter,
  startIsolatedStack,
} from '../lib/isolated.js';
import { type LoadResult, runLoad } from '../lib/load.js';

const CONCURRENCY = 16;
const WARMUP_MS = 1_000;
const MEASURE_MS = 3_000;
const OPEN_RATE = 25;
const OPEN_MS = 4_000;
const SENDER_MESSAGES = 1_200;
const MINUTE_MS = 60_000;

type Name = 'send-only' | 'record-sequential' | 'record-overlapped' | 'gateway';

export const isolated: Metric = {
  id: 'isolated',
  title: 'ingest and sender ratios, every part in its own process',
  async run(ctx) {
    const iso = await startIsolatedStack({ simLatencyMs: SIM_LATENCY_MS });
    const dir = await mkdtemp(join(tmpdir(), 'wgw-bench-isolated-fn-'));
    const procs: FunctionProcess[] = [];
    try {
      const gateway = await startIngestProcess(iso, dir);
      procs.push(gateway);
      const ingest = await measureIngest(ctx, iso, dir, gateway, procs);
      const sender = await measureSender(ctx, iso, dir, gateway, procs);
      return {
        rows: [...ingest.rows, ...sender.rows],
        details: { ingest: ingest.details, sender: sender.details, cpus: cpus().length },
        notes: [...ingest.notes, ...sender.notes],
        shared: { senderCpuMsPerMessage: sender.details.cpuMsPerMessage },
      };
    } finally {
      for (const p of procs) await p.stop().catch(() => undefined);
      await iso.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};

async function measureIngest(
  ctx: BenchContext,
  iso: IsolatedStack,
  dir: string,
  gateway: FunctionProcess & { origin: string },
  procs: FunctionProcess[],
) {
  const servers: Record<Name, FunctionProcess & { origin: string }> = {
    'send-only': await startBaselineProcess(iso, dir),
    'record-sequential': await startRecordBaselineProcess(iso, dir, 'sequential'),
    'record-overlapped': await startRecordBaselineProcess(iso, dir, 'overlapped'),
    gateway,
  };
  procs.push(servers['send-only'], servers['record-sequential'], servers['record-overlapped']);
  const order: Name[] = ['send-only', 'record-sequential', 'gateway', 'record-overlapped'];
  const closed: { name: Name; result: LoadResult; fnCpuMs: number; cores: Record<string, number> }[] = [];
  for (const name of [...order, ...order]) {
    await purge(iso);
    const proc = servers[name];
    const mark = await cpuMark(cpuSources(iso, proc));
    const cpu0 = await proc.cpuMs();
    const result = await load(iso, proc.origin, ctx.runId, { mode: 'closed' });
    const fnCpuMs = ((await proc.cpuMs()) - cpu0) / Math.max(1, result.issued);
    const cores = await mark.since();
    ctx.log(
      `${name.padEnd(17)} ${fmt(result.throughput, 0)} req/s, p50 ${fmt(percentile(result.latencies, 50), 1)} p99 ${fmt(percentile(result.latencies, 99), 1)} ms, function CPU ${fmt(fnCpuMs)} ms/req, cores ${fmtCores(cores)}`,
    );
    closed.push({ name, result, fnCpuMs, cores });
  }
  const open: Partial<Record<Name, ReturnType<typeof summarize>>> = {};
  for (const name of ['record-sequential', 'record-overlapped', 'gateway', 'send-only'] as const) {
    await purge(iso);
    const result = await load(iso, servers[name].origin, ctx.runId, { mode: 'open' });
    open[name] = summarize(result.latencies);
    ctx.log(
      `open loop ${OPEN_RATE}/s ${name.padEnd(17)} p50 ${fmt(open[name].p50, 1)} p90 ${fmt(open[name].p90, 1)} p99 ${fmt(open[name].p99, 1)} ms`,
    );
  }
  for (const name of ['send-only', 'record-sequential', 'record-overlapped'] as const) {
    await servers[name].stop();
  }

  const agg = (name: Name) => {
    const picked = closed.filter((c) => c.name === name);
    const latencies = picked.flatMap((p) => p.result.latencies);
    return {
      throughput: round(picked.reduce((a, p) => a + p.result.throughput, 0) / picked.length, 1),
      p99: round(percentile(latencies, 99), 2),
      latency: summarize(latencies),
      functionCpuMsPerRequest: round(picked.reduce((a, p) => a + p.fnCpuMs, 0) / picked.length, 3),
      cores: picked.at(-1)?.cores ?? {},
      rounds: picked.map((p) => round(p.result.throughput, 1)),
    };
  };
  const s = agg('send-only');
  const r = agg('record-sequential');
  const o = agg('record-overlapped');
  const g = agg('gateway');
  const fair = g.throughput / r.throughput;
  const fairP99 = g.p99 / r.p99;
  const vsSend = g.throughput / s.throughput;
  const seq = open['record-sequential'] as ReturnType<typeof summarize>;
  const ovl = open['record-overlapped'] as ReturnType<typeof summarize>;
  const limit = limiter(g.cores);
  const rows: Row[] = [
    {
      metric: 'ingest ÷ fair baseline (bare + PutItem + SendMessage), own processes',
      measured: `${fmt(fair)} throughput (${fmt(g.throughput, 0)} vs ${fmt(r.throughput, 0)} req/s), p99 ${fmt(fairP99)}× (${fmt(g.p99, 1)} vs ${fmt(r.p99, 1)} ms)`,
      target: '≥ 0.9, p99 ≤ 1.5×',
      pass: fair >= 0.9 && fairP99 <= 1.5,
      value: round(fair),
    },
    {
      metric: 'ingest ÷ bare + SendMessage only, own processes',
      measured: `${fmt(vsSend)} throughput (${fmt(s.throughput, 0)} req/s), p99 ${fmt(g.p99 / s.p99)}×; function CPU ${fmt(g.functionCpuMsPerRequest)} vs ${fmt(r.functionCpuMsPerRequest)} (fair) vs ${fmt(s.functionCpuMsPerRequest)} ms/req`,
      target: 'printed',
      pass: null,
      value: round(vsSend),
    },
    {
      metric: `overlapping PutItem and SendMessage: latency at ${OPEN_RATE} req/s`,
      measured: `p50 ${fmt(seq.p50, 1)} → ${fmt(ovl.p50, 1)} ms, p99 ${fmt(seq.p99, 1)} → ${fmt(ovl.p99, 1)} ms (closed-loop throughput ${fmt(o.throughput / r.throughput)}×)`,
      target: 'measured (not applied)',
      pass: null,
      value: round(seq.p50 - ovl.p50, 2),
    },
  ];
  return {
    rows,
    details: {
      closedLoop: {
        concurrency: CONCURRENCY,
        warmupMs: WARMUP_MS,
        measureMs: MEASURE_MS,
        sendOnly: s,
        recordSequential: r,
        recordOverlapped: o,
        gateway: g,
      },
      openLoop: { ratePerSec: OPEN_RATE, durationMs: OPEN_MS, ...open },
      gatewayLimitedBy: limit,
    },
    notes: [
      `isolated ingest: closed loop ${CONCURRENCY} clients; req/s S ${fmt(s.throughput, 0)}, R ${fmt(r.throughput, 0)}, O ${fmt(o.throughput, 0)}, G ${fmt(g.throughput, 0)}; function CPU ms/req S ${fmt(s.functionCpuMsPerRequest)}, R ${fmt(r.functionCpuMsPerRequest)}, O ${fmt(o.functionCpuMsPerRequest)}, G ${fmt(g.functionCpuMsPerRequest)}. During the gateway rounds: ${fmtCores(g.cores)} → limited by ${limit}.`,
      `isolated ingest, open loop ${OPEN_RATE}/s (nothing saturated): p50/p99 ms S ${fmt(open['send-only']?.p50 ?? Number.NaN, 1)}/${fmt(open['send-only']?.p99 ?? Number.NaN, 1)}, R ${fmt(seq.p50, 1)}/${fmt(seq.p99, 1)}, O ${fmt(ovl.p50, 1)}/${fmt(ovl.p99, 1)}, G ${fmt(open.gateway?.p50 ?? Number.NaN, 1)}/${fmt(open.gateway?.p99 ?? Number.NaN, 1)}. Overlapping saves at most the shorter of the two round trips.`,
    ],
  };
}

async function measureSender(
  ctx: BenchContext,
  iso: IsolatedStack,
  dir: string,
  gateway: FunctionProcess & { origin: string },
  procs: FunctionProcess[],
) {
  const sources = senderEventSources(DEFAULT_SENDER_CONCURRENCY);
  const totalConcurrency = sources.reduce((n, s) => n + s.maxConcurrency, 0);
  const batchSize = sources[0]?.batchSize ?? 10;
  const ideal = (totalConcurrency * batchSize) / (SIM_LATENCY_MS / 1000);
  const members = Math.ceil(SENDER_MESSAGES / 3);
  const high = sources.find((s) => s.queueId === 'high')?.maxConcurrency ?? 2;
  const highCount = Math.round((SENDER_MESSAGES * high) / totalConcurrency);
  await purge(iso);
  const chunks = Array.from({ length: Math.ceil(SENDER_MESSAGES / 100) }, (_, c) => c * 100);
  await mapLimit(chunks, 2, async (from) => {
    const res = await fetch(`${gateway.origin}/v1/messages/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${iso.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        messages: Array.from({ length: Math.min(100, SENDER_MESSAGES - from) }, (_, k) => {
          const i = from + k;
          return textMessage(`iso-sender ${ctx.runId} ${i}`, `is${i % members}`, {
            priority: i < highCount ? 'high' : 'normal',
          });
        }),
      }),
    });
    if (res.status !== 207) throw new Error(`batch answered ${res.status}`);
    await res.body?.cancel();
  });
  await gateway.stop();
  const sender = await startSenderProcess(iso, dir);
  procs.push(sender);
  ctx.log(`sender: ${SENDER_MESSAGES} messages preloaded (${highCount} high); ideal ${fmt(ideal, 0)} msg/s`);
  // Inside one quota minute, so the gateway's end-of-window guard band does not stall the drain.
  const expectedMs = (SENDER_MESSAGES / 150) * 1000 + 2_000;
  if (msToWindowEnd(MINUTE_MS) < expectedMs) {
    ctx.log(`waiting ${msToWindowEnd(MINUTE_MS)} ms for the next quota minute`);
    await sleep(msToWindowEnd(MINUTE_MS) + 50);
  }
  const delivered = async () =>
    ((await fetch(`${iso.simUrl}/__sim/stats`).then((r) => r.json())) as { delivered: number }).delivered;
  const mark = await cpuMark(cpuSources(iso, sender));
  const cpu0 = await sender.cpuMs();
  const t0 = Date.now();
  sender.startPolling();
  const done = await waitUntil(async () => (await delivered()) >= SENDER_MESSAGES, 90_000, 100);
  const elapsed = Date.now() - t0;
  const cpuMs = (await sender.cpuMs()) - cpu0;
  const cores = await mark.since();
  const total = await delivered();
  if (!done) ctx.log(`only ${total}/${SENDER_MESSAGES} delivered within 90 s`);
  const arrivals = (
    await mapLimit(
      Array.from({ length: members }, (_, m) => `is${m}`),
      16,
      async (m) =>
        (await fetch(`${iso.simUrl}/__sim/inbox/${m}`).then((r) => r.json())) as { receivedAt: number }[],
    )
  )
    .flat()
    .map((m) => m.receivedAt);
  const p10 = percentile(arrivals, 10);
  const p90 = percentile(arrivals, 90);
  const inWindow = arrivals.filter((t) => t >= p10 && t <= p90).length;
  const throughput = p90 > p10 ? ((inWindow - 1) / (p90 - p10)) * 1000 : Number.NaN;
  const ratio = throughput / ideal;
  const cpuMsPerMessage = cpuMs / Math.max(1, total);
  const ceiling = (share: number) =>
    batchSize / (SIM_LATENCY_MS / 1000 + (batchSize * cpuMsPerMessage) / 1000 / share);
  const lambdaShare = lambdaVcpu(FUNCTIONS.sender.memoryMb);
  const perContainer1 = ceiling(1);
  const perContainerLambda = ceiling(lambdaShare);
  const limit = limiter(cores);
  ctx.log(
    `sender: ${fmt(throughput, 0)} msg/s (ratio ${fmt(ratio)}), sender CPU ${fmt(cpuMsPerMessage, 2)} ms/msg, cores ${fmtCores(cores)}`,
  );
  const rows: Row[] = [
    {
      metric: `sender throughput ÷ ideal (${SIM_LATENCY_MS} ms), every part in its own process`,
      measured: `${fmt(ratio)} (${fmt(throughput, 0)} of ${fmt(ideal, 0)} msg/s; limited by ${limit})`,
      target: '≥ 0.8',
      pass: ratio >= 0.8,
      value: round(ratio),
    },
    {
      metric: 'sender CPU per message, own process → per-container ceiling',
      measured: `${fmt(cpuMsPerMessage, 2)} ms → ${fmt(perContainer1, 0)} msg/s per container at 1 vCPU, ${fmt(perContainerLambda, 0)} at ${FUNCTIONS.sender.memoryMb} MB (${fmt(lambdaShare, 2)} vCPU); ×${totalConcurrency} = ${fmt(perContainerLambda * totalConcurrency, 0)} msg/s (${fmt((perContainerLambda * totalConcurrency) / ideal)} of ideal)`,
      target: 'printed',
      pass: null,
      value: round(cpuMsPerMessage, 3),
    },
  ];
  return {
    rows,
    details: {
      messages: SENDER_MESSAGES,
      delivered: total,
      elapsedMs: elapsed,
      ideal,
      throughput: round(throughput, 1),
      ratio: round(ratio),
      cpuMsPerMessage: round(cpuMsPerMessage, 3),
      coresByProcess: cores,
      limitedBy: limit,
      perContainerCeiling: {
        oneVcpu: round(perContainer1, 1),
        lambda: {
          memoryMb: FUNCTIONS.sender.memoryMb,
          vcpu: round(lambdaShare, 3),
          msgPerSec: round(perContainerLambda, 1),
        },
      },
    },
    notes: [
      `isolated sender: ${total} delivered in ${fmt(elapsed / 1000, 1)} s, ${fmt(throughput, 0)} msg/s between the 10th and 90th percentile of arrivals (ideal ${fmt(ideal, 0)}); CPU cores used per process during the drain: ${fmtCores(cores)} (${cpus().length} vCPU) → limited by ${limit}. Sender CPU ${fmt(cpuMsPerMessage, 2)} ms per delivered message (its DynamoDB and WeCom calls, JSON, logging): a container sending batches of ${batchSize} at ${SIM_LATENCY_MS} ms WeCom latency tops out at ${fmt(perContainer1, 0)} msg/s with a whole vCPU and at ${fmt(perContainerLambda, 0)} msg/s with the ${fmt(lambdaShare, 2)} vCPU Lambda gives ${FUNCTIONS.sender.memoryMb} MB.`,
    ],
  };
}

function cpuSources(iso: IsolatedStack, fn: FunctionProcess): Record<string, () => Promise<number>> {
  return {
    function: () => fn.cpuMs(),
    dynamodb: () => iso.emulators.dynamodb.cpuMs(),
    sqs: () => iso.emulators.sqs.cpuMs(),
    simulator: () => iso.emulators.sim.cpuMs(),
    'bench (load, poller)': async () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    },
  };
}

function load(iso: IsolatedStack, origin: string, runId: string, opts: { mode: 'closed' | 'open' }) {
  return runLoad({
    origin,
    path: '/v1/messages',
    headers: { authorization: `Bearer ${iso.key}` },
    bodyTemplate: JSON.stringify(textMessage(`${ALERT_CONTENT} isolated ${runId} #{{i}}`, 'u{{m}}')),
    members: 100,
    mode: opts.mode,
    connections: CONCURRENCY,
    ...(opts.mode === 'closed'
      ? { concurrency: CONCURRENCY, warmupMs: WARMUP_MS, durationMs: MEASURE_MS }
      : { ratePerSec: OPEN_RATE, durationMs: OPEN_MS }),
  });
}

async function purge(iso: IsolatedStack): Promise<void> {
  for (const url of [iso.stack.env.queueUrls.normal, iso.stack.env.queueUrls.high]) {
    await iso.sqs.send(new PurgeQueueCommand({ QueueUrl: url })).catch(() => undefined);
  }
  await sleep(200);
}

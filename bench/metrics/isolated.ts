/**
 * SPEC §7 ingest ratios with every part in a process of its own (bench/lib/isolated.ts): DynamoDB, SQS and the WeCom
 * simulator (20 ms) each in one, the bundled ingest handler in one, the baselines each in one, the load generator in
 * a worker thread of the bench process. So a ratio is no longer one shared event loop's; each process's CPU is read
 * from /proc and the row says what saturated. (The sender's ratios: metric `sender-isolated`.)
 *
 * Closed loop (16 clients, 1 s warm-up + 3 s, rounds S, R, G, O twice) against
 *   S = bare node:http + SendMessage (SPEC's "bare + SendMessage only"),
 *   R = bare node:http + conditional PutItem + SendMessage, sequential: the fair baseline for record-then-enqueue,
 *   O = the same with PutItem and SendMessage overlapped (Promise.all),
 *   G = the bundled ingest handler behind the API Gateway event shim;
 * then an open loop at a rate none of them saturates, where latency is the sum of the calls' round trips: R vs O
 * is the latency a gateway that overlaps its record write and its enqueue would gain.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type FunctionProcess,
  startBaselineProcess,
  startIngestProcess,
  startRecordBaselineProcess,
} from '../lib/functions.js';
import { SIM_LATENCY_MS } from '../lib/gateway.js';
import type { BenchContext, Metric, Row } from '../lib/harness.js';
import { fmt, percentile, round, summarize } from '../lib/harness.js';
import { ALERT_CONTENT, textMessage } from '../lib/http.js';
import {
  cpuMark,
  emulatorCpu,
  fmtCores,
  type IsolatedStack,
  limiter,
  purgeLanes,
  startIsolatedStack,
} from '../lib/isolated.js';
import { type LoadResult, runLoad } from '../lib/load.js';

const CONCURRENCY = 16;
const WARMUP_MS = 1_000;
const MEASURE_MS = 3_000;
const OPEN_RATE = 25;
const OPEN_MS = 4_000;

type Name = 'send-only' | 'record-sequential' | 'record-overlapped' | 'gateway';

export const isolated: Metric = {
  id: 'isolated',
  title: 'ingest ratios, every part in its own process',
  async run(ctx) {
    const iso = await startIsolatedStack({ simLatencyMs: SIM_LATENCY_MS });
    const dir = await mkdtemp(join(tmpdir(), 'wgw-bench-isolated-fn-'));
    const procs: FunctionProcess[] = [];
    try {
      const gateway = await startIngestProcess(iso, dir);
      procs.push(gateway);
      const ingest = await measureIngest(ctx, iso, dir, gateway, procs);
      return {
        rows: ingest.rows,
        details: { ingest: ingest.details, cpus: cpus().length },
        notes: ingest.notes,
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
    await purgeLanes(iso);
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
    await purgeLanes(iso);
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
  const cpuRatio = g.functionCpuMsPerRequest / r.functionCpuMsPerRequest;
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
      metric: 'ingest CPU per request ÷ fair baseline, own processes',
      measured: `${fmt(cpuRatio)}× (gateway ${fmt(g.functionCpuMsPerRequest)} vs fair ${fmt(r.functionCpuMsPerRequest)} vs bare + SendMessage ${fmt(s.functionCpuMsPerRequest)} ms)`,
      target: '≤ 1.2',
      pass: cpuRatio <= 1.2,
      value: round(cpuRatio),
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

function cpuSources(iso: IsolatedStack, fn: FunctionProcess): Record<string, () => Promise<number>> {
  return { function: () => fn.cpuMs(), ...emulatorCpu(iso) };
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

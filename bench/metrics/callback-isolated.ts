/**
 * Issue 11's callback burst with every part in a process of its own (bench/lib/isolated.ts): DynamoDB (dynalite) in
 * one, the bundled callback handler behind the API Gateway shim in one, two baselines in one each, the generator in
 * a worker thread of the bench process. So the answer time is no longer one shared event loop's (the `callback`
 * metric runs everything in one process, as `npm start` does); each process's CPU is read from /proc and the row
 * says what saturated.
 *
 * The baselines are bare PutItem receivers, each storing the body with one conditional PutItem: **H**, a Lambda
 * handler behind the same API Gateway shim as the callback's (children/baseline-handler.ts; keyed by the body's
 * hash, so a retry fails the condition as the callback's dedupe claim does), and **B**, a bare node:http server.
 * The shim's HTTP and event building is API Gateway's work, done outside Lambda, yet it runs in the function's
 * process here: against H it is in both figures, so callback ÷ H compares the functions' own work (issue 25's
 * bar); callback ÷ B is printed beside it, with H − B: the shim's share plus what else tells the two receivers
 * apart (H hashes the body, and a retry takes the SDK's failed-condition path).
 *
 * After a warm-up, 50 callbacks at 25/s to each (nothing queues: the answer time is the work and the round trip),
 * then rounds B, H, C, B, H, C: each posts 200 callbacks built as WeCom builds them (bench/lib/callbacks.ts; one in
 * ten a retry) at 200/s, open loop — the baselines the same signed requests (they store their bodies), the callback
 * function a fresh burst each round. Afterwards every distinct callback must be in the store exactly once, read
 * back through the gateway's own event store. One callback process serves the whole burst here; when 200/s asks
 * more than the one core its event loop can use, answers queue in it (the row says so) — on AWS each concurrent
 * callback gets a container of its own.
 *
 * The callback process's CPU per callback (verification, decryption, XML parsing, the conditional write, the
 * metrics line — and the shim's work) gives what a Lambda container answers in: CPU ÷ its CPU share (512 MB = 0.29
 * vCPU) plus one DynamoDB round trip, one callback at a time (an upper bound: the shim's share is in it). The
 * callback function has no reserved concurrency (Lambda starts a container per concurrent callback); the API
 * stage's default route throttle (infra context apiRateLimit/apiBurstLimit) is what bounds a sustained rate.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FUNCTIONS } from '#lib/resources/index.js';
import { createDocumentClient, DynamoEventStore, type StoredEvent } from '#lib/store/index.js';
import { LOCAL_REGION } from '#local/stack.js';
import { CONTEXT_DEFAULTS } from '../../infra/context.js';
import {
  BURST,
  callbackAppOf,
  callbackLoad,
  prepareBurst,
  storedOnce,
  tallyStored,
  WECOM_ANSWER_MS,
} from '../lib/callbacks.js';
import {
  type FunctionProcess,
  startCallbackBaselineHandler,
  startCallbackProcess,
  startRecordBaselineProcess,
} from '../lib/functions.js';
import type { Metric, Row } from '../lib/harness.js';
import { fmt, percentile, round, summarize } from '../lib/harness.js';
import {
  cpuMark,
  fmtCores,
  type IsolatedStack,
  lambdaVcpu,
  limiter,
  startIsolatedStack,
} from '../lib/isolated.js';
import { type LoadResult, runLoad } from '../lib/load.js';

const ROUNDS = 2;
const WARM_COUNT = 100;
const WARM_RATE = 50;
const TRICKLE_COUNT = 50;
const TRICKLE_RATE = 25;

interface Phase {
  result: LoadResult;
  /** The server process's CPU per request, ms. */
  cpuMs: number;
  cores: Record<string, number>;
  load: number;
}

export const callbackIsolated: Metric = {
  id: 'callback-isolated',
  title: 'callback answer time, a burst of 200 callbacks in one second, every part in its own process',
  async run(ctx) {
    const iso = await startIsolatedStack({ simLatencyMs: 20 });
    const dir = await mkdtemp(join(tmpdir(), 'wgw-bench-callback-'));
    const procs: FunctionProcess[] = [];
    try {
      const callback = await startCallbackProcess(iso, dir);
      procs.push(callback);
      const baseline = await startRecordBaselineProcess(iso, dir, 'put-only');
      procs.push(baseline);
      const handlerBase = await startCallbackBaselineHandler(iso, dir);
      procs.push(handlerBase);
      const app = callbackAppOf(iso.config);
      const now = Math.floor(Date.now() / 1000);
      const batch = (from: number, count: number) =>
        prepareBurst(app, { runId: ctx.runId, from, count, retryEvery: BURST.retryEvery, now });
      // Warm-up: connections open, the handler's code paths compiled (CPU per callback falls over the first ~100).
      const warm = batch(0, WARM_COUNT);
      await runLoad(callbackLoad(callback.origin, warm.requests, WARM_RATE));
      await runLoad(callbackLoad(baseline.origin, warm.requests, WARM_RATE));
      await runLoad(callbackLoad(handlerBase.origin, warm.requests, WARM_RATE));

      const since = new Date().toISOString();
      // A trickle nothing queues behind: the answer time is the work and the round trip.
      const trickle = batch(500, TRICKLE_COUNT);
      const slow = {
        baseline: await phase(iso, baseline, trickle.requests, TRICKLE_RATE),
        handler: await phase(iso, handlerBase, trickle.requests, TRICKLE_RATE),
        callback: await phase(iso, callback, trickle.requests, TRICKLE_RATE),
      };
      ctx.log(`${TRICKLE_RATE}/s baseline: ${describe(slow.baseline)}`);
      ctx.log(`${TRICKLE_RATE}/s baseline handler: ${describe(slow.handler)}`);
      ctx.log(`${TRICKLE_RATE}/s callback: ${describe(slow.callback)}`);
      const bursts = Array.from({ length: ROUNDS }, (_, r) => batch(1000 * (r + 1), BURST.count));
      const base: Phase[] = [];
      const handlerBases: Phase[] = [];
      const fn: Phase[] = [];
      for (const burst of bursts) {
        base.push(await phase(iso, baseline, burst.requests));
        ctx.log(`burst, baseline (bare node:http + PutItem): ${describe(base.at(-1) as Phase)}`);
        handlerBases.push(await phase(iso, handlerBase, burst.requests));
        ctx.log(
          `burst, baseline handler (PutItem) behind the stand-in: ${describe(handlerBases.at(-1) as Phase)}`,
        );
        fn.push(await phase(iso, callback, burst.requests));
        ctx.log(`burst, callback: ${describe(fn.at(-1) as Phase)}`);
      }
      const distinct = [trickle, ...bursts].flatMap((b) => b.distinct);
      const tally = tallyStored(await storedEvents(iso, app.name, since), ctx.runId, distinct);
      return outcome({ fn, base, handlerBases, slow, tally, distinct: distinct.length });
    } finally {
      for (const p of procs) await p.stop().catch(() => undefined);
      await iso.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};

async function phase(
  iso: IsolatedStack,
  server: FunctionProcess & { origin: string },
  requests: Parameters<typeof callbackLoad>[1],
  ratePerSec?: number,
): Promise<Phase> {
  const mark = await cpuMark({
    server: () => server.cpuMs(),
    dynamodb: () => iso.emulators.dynamodb.cpuMs(),
    'bench (generator)': async () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    },
  });
  const cpu0 = await server.cpuMs();
  const result = await runLoad(callbackLoad(server.origin, requests, ratePerSec));
  const cpuMs = ((await server.cpuMs()) - cpu0) / requests.length;
  return { result, cpuMs, cores: await mark.since(), load: loadavg()[0] ?? Number.NaN };
}

const describe = (p: Phase) => {
  const s = summarize(p.result.latencies);
  return `p50 ${fmt(s.p50, 0)} p99 ${fmt(s.p99, 0)} max ${fmt(s.max, 0)} ms, ${fmt(p.cpuMs, 2)} ms CPU/request, statuses ${JSON.stringify(p.result.statuses)}, cores ${fmtCores(p.cores)}, load average ${fmt(p.load, 1)}`;
};

/** Latencies and statuses of several phases together; CPU per request averaged; the busiest phase's cores. */
function merge(phases: Phase[]) {
  const latencies = phases.flatMap((p) => p.result.latencies);
  const statuses: Record<string, number> = {};
  for (const p of phases) {
    for (const [k, v] of Object.entries(p.result.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  }
  const busiest = [...phases].sort((a, b) => (b.cores.machine ?? 0) - (a.cores.machine ?? 0))[0] as Phase;
  return {
    ...summarize(latencies),
    p95: round(percentile(latencies, 95), 2),
    statuses,
    requests: phases.reduce((n, p) => n + p.result.issued, 0),
    errors: phases.reduce((n, p) => n + p.result.errors, 0),
    cpuMs: phases.reduce((a, p) => a + p.cpuMs, 0) / phases.length,
    cores: busiest.cores,
    loads: phases.map((p) => round(p.load, 2)),
    perRound: phases.map((p) => ({
      ...summarize(p.result.latencies),
      cpuMs: round(p.cpuMs, 2),
      cores: p.cores,
    })),
  };
}

function outcome(m: {
  fn: Phase[];
  base: Phase[];
  handlerBases: Phase[];
  slow: { callback: Phase; baseline: Phase; handler: Phase };
  tally: ReturnType<typeof tallyStored>;
  distinct: number;
}) {
  const { fn, tally, distinct } = m;
  const c = merge(fn);
  const b = merge(m.base);
  const sc = merge([m.slow.callback]);
  const sb = merge([m.slow.baseline]);
  const h = merge(m.handlerBases);
  const sh = merge([m.slow.handler]);
  const answered = c.statuses['200'] ?? 0;
  const share = lambdaVcpu(FUNCTIONS.callback.memoryMb);
  // One callback at a time per container: its CPU at the container's share (plus one DynamoDB round trip).
  const lambdaCpuMs = c.cpuMs / share;
  const perContainer = 1000 / lambdaCpuMs;
  const containers = Math.ceil((BURST.ratePerSec * lambdaCpuMs) / 1000);
  const loads = `load average ${[...new Set(c.loads.map((l) => fmt(l, 1)))].join(', ')}`;
  const rows: Row[] = [
    {
      metric: `callback answer time, ${BURST.count} callbacks in 1 s × ${fn.length}, own processes`,
      measured: `p50 ${fmt(c.p50, 0)}, p95 ${fmt(c.p95, 0)}, p99 ${fmt(c.p99, 0)}, max ${fmt(c.max, 0)} ms (${answered} of ${c.requests} answered 200; ${loads}; limited by ${burstLimiter(c)})`,
      target: `< ${WECOM_ANSWER_MS} ms, every one 200`,
      pass: c.max < WECOM_ANSWER_MS && answered === c.requests,
      value: round(c.p99, 1),
    },
    {
      metric:
        'callback CPU per callback ÷ bare PutItem receiver, both handlers behind the API Gateway stand-in',
      measured: `${fmt(c.cpuMs / h.cpuMs)}× (${fmt(c.cpuMs, 2)} vs ${fmt(h.cpuMs, 2)} ms; at ${TRICKLE_RATE}/s ${fmt(sc.cpuMs, 2)} vs ${fmt(sh.cpuMs, 2)} ms)`,
      target: '≤ 1.3',
      pass: c.cpuMs / h.cpuMs <= 1.3,
      value: round(c.cpuMs / h.cpuMs, 2),
    },
    {
      metric: 'callback CPU per callback ÷ bare node:http PutItem receiver, own processes',
      measured: `${fmt(c.cpuMs / b.cpuMs)}× (${fmt(c.cpuMs, 2)} vs ${fmt(b.cpuMs, 2)} ms; at ${TRICKLE_RATE}/s ${fmt(sc.cpuMs, 2)} vs ${fmt(sb.cpuMs, 2)} ms); the stand-in's HTTP and event building, which API Gateway does outside Lambda, is in the callback's figure only: H − B ${fmt(h.cpuMs - b.cpuMs, 2)} ms a request (the stand-in and the receivers' own differences; the PutItem handler behind it ${fmt(h.cpuMs, 2)} ms)`,
      target: 'printed',
      pass: null,
      value: round(c.cpuMs / b.cpuMs, 2),
    },
    {
      metric: 'callback ÷ bare node:http PutItem receiver, same bursts, own processes',
      measured: `p99 ${fmt(c.p99 / b.p99)}× (${fmt(c.p99, 0)} vs ${fmt(b.p99, 0)} ms), p50 ${fmt(c.p50 / b.p50)}× (${fmt(c.p50, 1)} vs ${fmt(b.p50, 1)} ms); process CPU ${fmt(c.cpuMs, 2)} vs ${fmt(b.cpuMs, 2)} ms/request`,
      target: 'printed',
      pass: null,
      value: round(c.p99 / b.p99, 2),
    },
    {
      metric: `callback answer time at ${TRICKLE_RATE}/s (nothing queues), own processes`,
      measured: `p50 ${fmt(sc.p50, 1)}, p99 ${fmt(sc.p99, 1)} ms vs bare node:http PutItem receiver p50 ${fmt(sb.p50, 1)}, p99 ${fmt(sb.p99, 1)} ms (${sc.statuses['200'] ?? 0} of ${sc.requests} answered 200; limited by ${limiter(sc.cores)})`,
      target: 'printed',
      pass: null,
      value: round(sc.p99, 1),
    },
    {
      metric: `callback CPU per callback → a Lambda container at ${FUNCTIONS.callback.memoryMb} MB`,
      measured: `${fmt(c.cpuMs, 2)} ms → ${fmt(lambdaCpuMs, 1)} ms at ${fmt(share, 2)} vCPU + one DynamoDB round trip per answer; ≤ ${fmt(perContainer, 0)} callbacks/s per container, ${BURST.ratePerSec}/s keeps ≥ ${containers} busy (no reserved concurrency; API route throttle ${CONTEXT_DEFAULTS.apiRateLimit}/s, burst ${CONTEXT_DEFAULTS.apiBurstLimit})`,
      target: `≪ ${WECOM_ANSWER_MS} ms`,
      pass: null,
      value: round(lambdaCpuMs, 2),
    },
    {
      metric: 'callbacks stored once, read back through the event store',
      measured: storedOnce(tally, distinct, c.requests + sc.requests),
      target: `= ${distinct}`,
      pass: tally.once === distinct,
      value: tally.once,
    },
  ];
  return {
    rows,
    details: {
      burst: BURST,
      rounds: fn.length,
      callback: c,
      baseline: b,
      baselineHandler: h,
      trickle: { ratePerSec: TRICKLE_RATE, callback: sc, baseline: sb, baselineHandler: sh },
      storedOnce: tally.once,
      missing: tally.missing,
      duplicated: tally.duplicated,
      cpus: cpus().length,
      lambda: {
        memoryMb: FUNCTIONS.callback.memoryMb,
        vcpu: round(share, 3),
        cpuMsPerCallback: round(lambdaCpuMs, 2),
        callbacksPerSecPerContainer: round(perContainer, 1),
        containersAtBurstRate: containers,
        apiThrottle: { rateLimit: CONTEXT_DEFAULTS.apiRateLimit, burstLimit: CONTEXT_DEFAULTS.apiBurstLimit },
      },
    },
    notes: [
      `callback-isolated: ${fn.length} bursts of ${BURST.count} callbacks at ${BURST.ratePerSec}/s (every ${BURST.retryEvery}th a retry) against the bundled callback handler in its own process, alternated with the same requests against two bare PutItem receivers storing each body with one conditional PutItem: a Lambda handler behind the same API Gateway stand-in as the callback's (the bar's baseline) and a bare node:http server; DynamoDB in its own process. Cores during the busiest callback burst: ${fmtCores(c.cores)} (${cpus().length} vCPU) → limited by ${burstLimiter(c)}; ${loads}.`,
      `callback-isolated, on AWS: the callback process used ${fmt(c.cpuMs, 2)} ms CPU per callback (signature, decryption, XML, the write, the metrics line, and the shim's HTTP, which API Gateway does outside Lambda: an upper bound). A ${FUNCTIONS.callback.memoryMb} MB container gets ${fmt(share, 2)} vCPU and answers one callback at a time, so ~${fmt(lambdaCpuMs, 0)} ms of CPU plus one DynamoDB round trip (two for a retry) per answer, its first answer after a cold start (the cold metric). The function has no reserved concurrency, so a burst gets containers in parallel; a sustained rate above the API stage's default route throttle (${CONTEXT_DEFAULTS.apiRateLimit}/s, burst ${CONTEXT_DEFAULTS.apiBurstLimit}) would be answered 429 (WeCom retries a callback it gets no 200 for).`,
    ],
  };
}

/**
 * What saturated during the bursts. Cores averaged over a phase understate a one-second burst (the phase also
 * holds the generator's start and the tail of answers), so the callback process's own demand is added: the burst
 * asks rate × CPU per callback of its one event loop, and at ≥ 0.9 cores it queues — one process here serves what
 * Lambda spreads over several containers.
 */
function burstLimiter(c: { cpuMs: number; cores: Record<string, number> }): string {
  const general = limiter(c.cores);
  const demand = (BURST.ratePerSec * c.cpuMs) / 1000;
  if (demand < 0.9) return general;
  const loop = `the one callback process (the burst asks ${fmt(demand)} cores of its event loop: ${BURST.ratePerSec}/s × ${fmt(c.cpuMs)} ms)`;
  return general.startsWith("the machine's") ? `${general} and ${loop}` : loop;
}

/** The app's events received since `since`, through the gateway's own event store (the feed index). */
async function storedEvents(iso: IsolatedStack, app: string, since: string): Promise<StoredEvent[]> {
  const db = createDocumentClient('wecom-gateway/bench', {
    region: LOCAL_REGION,
    endpoint: iso.emulators.dynamodb.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const store = new DynamoEventStore(db, iso.stack.env.tableName);
    const events: StoredEvent[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const out = await store.listByApp(app, since, {
        limit: 500,
        now: Date.now(),
        ...(cursor ? { cursor } : {}),
      });
      events.push(...out.events);
      if (out.events.length === 0 || !out.cursor) break;
      cursor = out.cursor;
    }
    return events;
  } finally {
    db.destroy();
  }
}

/**
 * SPEC §7 / issue 25's all-staff send: 20,000 personal messages to 20,000 distinct members, accepted through batch
 * POSTs (100 per POST) and delivered by the sender's containers at 20 ms simulated WeCom latency — time to last
 * delivery and messages per second, next to the fair baseline consumer on the same machine with the same backlog.
 *
 * Every part in a process of its own (bench/lib/isolated.ts), and the sender as a deployed stack runs it
 * (bench/lib/consumers.ts, `containers`): one process per concurrency slot of the reserved concurrency (6), each
 * taking one invocation at a time, fed by the lanes' event source mappings with their own maxConcurrency
 * (lib/resources `senderEventSources`: high 2, normal 4). An all-staff notice is sent at the default priority, so
 * it travels in the normal lane and at most 4 of the 6 containers work on it; the row says how many did.
 * The pollers run while the client posts (2 batch POSTs in flight), so accepting and delivering overlap; time to
 * last delivery counts from the first POST. Then the same with the baseline consumer (children/sender-baseline.ts).
 *
 * The app's quota is the default (what a deployed app has: 10,000 calls/min less the 0.2 margin, the normal lane
 * 0.8 of that = 6,400/min), which alone keeps 20,000 normal messages from leaving in less than 187.5 s; the baseline
 * does not pace, so the simulator's app limits are lifted (WeCom's 10,000 calls/min alone would keep any consumer
 * at ≥ 120 s, which the row prints as a floor). `BENCH_ALLSTAFF_QUOTA=unbound` gives the sender metric `sender-isolated`'s unbound quota instead
 * (its own overhead). Costs ~5–7 minutes on 2 vCPU, so it runs only when named (`--only=allstaff`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { senderEventSources } from '#lib/resources/index.js';
import { LINGERING_POLL_MS, startConsumerFleet } from '../lib/consumers.js';
import { type DrainResult, describeDrain, drain, loadBacklog } from '../lib/drain.js';
import { type FunctionProcess, startIngestProcess } from '../lib/functions.js';
import { SIM_LATENCY_MS } from '../lib/gateway.js';
import type { BenchContext, Metric, Row } from '../lib/harness.js';
import { fmt, round, sleep } from '../lib/harness.js';
import {
  emulatorCpu,
  type IsolatedStack,
  purgeLanes,
  startIsolatedStack,
  writeConfigWithQuota,
} from '../lib/isolated.js';
import { UNBOUND_QUOTA, UNBOUND_SIM_LIMITS } from './sender-isolated.js';

const MESSAGES = 20_000;
/** The issue's seed scenario: an all-staff notice must leave within three to five minutes. */
const SEED_LIMIT_S = 300;
const DRAIN_TIMEOUT_MS = 360_000;
const WECOM_APP_PER_MINUTE = 10_000;

export const allstaff: Metric = {
  id: 'allstaff',
  title: 'all-staff send: 20,000 members through batch POSTs, the sender containers vs the fair baseline',
  optIn: true,
  async run(ctx) {
    const unbound = process.env.BENCH_ALLSTAFF_QUOTA === 'unbound';
    // WeCom's own app limit (10,000 calls/min) lifted: the baseline paces nothing and would meet 45009 answers and
    // their retries, so its row would be the simulator's limit, not what a bare consumer reaches on this machine.
    // The sender keeps its own pace (the quota), well under WeCom's limit.
    const iso = await startIsolatedStack({ simLatencyMs: SIM_LATENCY_MS, simLimits: UNBOUND_SIM_LIMITS });
    const dir = await mkdtemp(join(tmpdir(), 'wgw-bench-allstaff-'));
    let ingest: (FunctionProcess & { origin: string }) | undefined;
    try {
      ingest = await startIngestProcess(iso, dir);
      const env = unbound
        ? { GATEWAY_CONFIG: await writeConfigWithQuota(iso, dir, 'unbound', UNBOUND_QUOTA) }
        : undefined;
      const gateway = await run(ctx, iso, dir, ingest, { kind: 'sender', prefix: 'as0-', env });
      const baseline = await run(ctx, iso, dir, ingest, { kind: 'sender-baseline', prefix: 'as1-' });
      return outcome({ iso, gateway, baseline, unbound });
    } finally {
      await ingest?.stop().catch(() => undefined);
      await iso.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};

async function run(
  ctx: BenchContext,
  iso: IsolatedStack,
  dir: string,
  ingest: FunctionProcess & { origin: string },
  opts: { kind: 'sender' | 'sender-baseline'; prefix: string; env?: Record<string, string> | undefined },
): Promise<DrainResult> {
  const fleet = await startConsumerFleet(iso, dir, {
    kind: opts.kind,
    layout: 'containers',
    ...(opts.env ? { env: opts.env } : {}),
  });
  ctx.log(
    `${opts.kind}: ${fleet.processes.length} containers up; posting ${MESSAGES} messages in batch POSTs`,
  );
  try {
    const d = await drain({
      simUrl: iso.simUrl,
      fleet,
      prefix: opts.prefix,
      count: MESSAGES,
      timeoutMs: DRAIN_TIMEOUT_MS,
      otherCpu: { ingest: () => ingest.cpuMs(), ...emulatorCpu(iso) },
      feed: () =>
        loadBacklog({
          origin: ingest.origin,
          key: iso.key,
          prefix: opts.prefix,
          count: MESSAGES,
          runId: ctx.runId,
          inFlight: 2,
        }),
    });
    ctx.log(describeDrain(opts.kind, d));
    return d;
  } finally {
    await fleet.stop();
    await purgeLanes(iso);
    await sleep(LINGERING_POLL_MS);
  }
}

function outcome(o: { iso: IsolatedStack; gateway: DrainResult; baseline: DrainResult; unbound: boolean }) {
  const { gateway: g, baseline: b } = o;
  const quota = Object.values(o.iso.config.apps)[0]?.quota;
  const normalPerMinute = quota
    ? Math.floor((1 - quota.safetyMargin) * quota.perMinute * quota.normalShare)
    : Number.NaN;
  const floorS = (MESSAGES / normalPerMinute) * 60;
  const wecomFloorS = (MESSAGES / WECOM_APP_PER_MINUTE) * 60;
  const normal = senderEventSources().find((s) => s.queueId === 'normal');
  const gS = g.timeToLastMs / 1000;
  const bS = b.timeToLastMs / 1000;
  const quotaLabel = o.unbound ? 'app quota unbound' : 'default app quota';
  const rows: Row[] = [
    {
      metric: `all-staff: ${MESSAGES.toLocaleString('en-US')} members, batch POSTs, sender containers (${quotaLabel})`,
      measured: `last delivery after ${fmt(gS, 1)} s, ${fmt(g.overallPerSec, 0)} msg/s (${g.delivered} delivered, ${g.maxBusy} containers busy at most); fair baseline ${fmt(bS, 1)} s, ${fmt(b.overallPerSec, 0)} msg/s`,
      target: `≤ ${SEED_LIMIT_S} s (issue 25's seed: 3–5 min)`,
      pass: g.delivered >= MESSAGES && gS <= SEED_LIMIT_S,
      value: round(gS, 1),
    },
    {
      metric: 'all-staff msg/s ÷ fair baseline consumer, same machine and backlog',
      measured: `${fmt(g.overallPerSec / b.overallPerSec)} (CPU ${fmt(g.cpuMsPerMessage, 2)} vs ${fmt(b.cpuMsPerMessage, 2)} ms/msg; handling p99 ${fmt(g.handlingMs.p99, 0)} vs ${fmt(b.handlingMs.p99, 0)} ms)${o.unbound ? '' : `; the default quota alone needs ≥ ${fmt(floorS, 1)} s`}`,
      target: 'printed',
      pass: null,
      value: round(g.overallPerSec / b.overallPerSec),
    },
  ];
  return {
    rows,
    details: {
      messages: MESSAGES,
      quota: o.unbound ? UNBOUND_QUOTA : quota,
      normalLane: normal,
      quotaFloorSeconds: round(floorS, 1),
      wecomFloorSeconds: round(wecomFloorS, 1),
      gateway: g,
      baseline: b,
    },
    notes: [
      `allstaff: ${MESSAGES} messages at the default priority, one member each, posted 100 per batch POST (2 in flight) while the consumers ran; ${normal?.maxConcurrency ?? '?'} of the reserved concurrency's containers can take the normal lane (lib/resources senderEventSources; the other 2 are the high lane's). ${describeDrain('sender', g)}; accepted in ${fmt(g.feedMs / 1000, 1)} s. ${describeDrain('fair baseline', b)}; accepted in ${fmt(b.feedMs / 1000, 1)} s.`,
      `allstaff floors: WeCom allows an app 10,000 calls/min (20,000 personal messages ≥ ${fmt(wecomFloorS, 0)} s); the gateway's default quota lets the normal lane use ${fmt(normalPerMinute, 0)}/min (safety margin, normal share) → ≥ ${fmt(floorS, 1)} s for this send${o.unbound ? ' (not applied in this run: unbound quota)' : ''}. The baseline paces nothing.`,
    ],
  };
}

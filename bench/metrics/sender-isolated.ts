/**
 * SPEC §7 / issue 25: the sender against a fair baseline consumer, every part in a process of its own (bench/lib/
 * isolated.ts: DynamoDB, SQS and the WeCom simulator at 20 ms each in one; the bundled ingest handler, which loads
 * the backlogs, in one; the consumer under test in one).
 *
 * The baseline (children/sender-baseline.ts) does per message what the gateway minimally must: one conditional
 * counter update, one `message/send` over a kept-alive undici Pool (token once per process), one status write,
 * the records of a batch concurrently. Both are fed by the same event source mapping emulation (bench/lib/
 * consumers.ts: the stack's lanes, batch size and maxConcurrency) and drain the same backlog, each alone, in the
 * order baseline, sender with an unbound app quota, sender with the default quota, baseline; the baseline's figure
 * is the mean of its two drains. Throughput is taken from the simulator's inboxes (arrivals between their 10th and
 * 90th percentile), handling time = handed to the consumer → arrived at WeCom, CPU per message from /proc.
 *
 * Two sender drains, because the sender keeps WeCom's per-app pace (lib/quota: 10,000 calls/min less a 0.2 safety
 * margin, the normal lane a 0.8 share of that) and the baseline does not: with the app quota unbound the row is the
 * gateway's own overhead (the bar); with the default quota it is what a deployed app gets (printed).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEFAULT_SENDER_CONCURRENCY,
  type EventSourceDefinition,
  FUNCTIONS,
  senderEventSources,
} from '#lib/resources/index.js';
import { LINGERING_POLL_MS, startConsumerFleet } from '../lib/consumers.js';
import { type DrainResult, describeDrain, drain, loadBacklog } from '../lib/drain.js';
import { type FunctionProcess, startIngestProcess } from '../lib/functions.js';
import { SIM_LATENCY_MS } from '../lib/gateway.js';
import type { BenchContext, Metric, MetricOutcome, Row } from '../lib/harness.js';
import { fmt, msToWindowEnd, round, sleep } from '../lib/harness.js';
import {
  emulatorCpu,
  type IsolatedStack,
  lambdaVcpu,
  purgeLanes,
  startIsolatedStack,
  writeConfigWithQuota,
} from '../lib/isolated.js';

const SENDER_MESSAGES = 1_200;
const MINUTE_MS = 60_000;
const DRAIN_TIMEOUT_MS = 60_000;

export const senderIsolated: Metric = {
  id: 'sender-isolated',
  title: 'sender vs a fair baseline consumer, every part in its own process',
  async run(ctx) {
    const iso = await startIsolatedStack({ simLatencyMs: SIM_LATENCY_MS, simLimits: UNBOUND_SIM_LIMITS });
    const dir = await mkdtemp(join(tmpdir(), 'wgw-bench-sender-iso-'));
    let ingest: (FunctionProcess & { origin: string }) | undefined;
    try {
      ingest = await startIngestProcess(iso, dir);
      const outcome = await measureSender(ctx, iso, dir, ingest);
      return { ...outcome, details: { ...outcome.details, cpus: cpus().length } };
    } finally {
      await ingest?.stop().catch(() => undefined);
      await iso.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};

/**
 * The app quota of the "gateway's own overhead" drains: 1,000,000 calls/min, far above anything this machine can
 * send in a run (the normal lane's pace becomes 0.09 ms), so the pacing never binds. Safety margin and normal share
 * stay the default's. On 2026-12-04 this row measured mostly the quota engine's lateness budget
 * (lib/quota/counters.ts `lateBudgetMs`, computed per send in time proportional to the headroom,
 * perMinute × safetyMargin: ~300 ms of CPU per message here, ~0.5 ms at the default quota); a smaller margin does
 * not help, since it shrinks the lateness a reserved slot may be used with below what a busy batch needs.
 */
export const UNBOUND_QUOTA = { perMinute: 1_000_000, perHour: 60_000_000, perDay: 1_000_000_000 } as const;
export const UNBOUND_SIM_LIMITS = { perAppPerMinute: 1_000_000, perAppPerHour: 60_000_000 } as const;

type DrainName = 'baseline' | 'gateway' | 'gateway-quota';

/**
 * The sender against its fair baseline consumer (children/sender-baseline.ts), each alone on the same emulators,
 * fed by the same event source mapping emulation: drains of the same backlog in the order baseline, gateway with an
 * unbound app quota (its own overhead), gateway with the default quota (WeCom's pace), baseline again.
 */
async function measureSender(
  ctx: BenchContext,
  iso: IsolatedStack,
  dir: string,
  gateway: FunctionProcess & { origin: string },
): Promise<MetricOutcome> {
  const sources = senderEventSources(DEFAULT_SENDER_CONCURRENCY);
  const totalConcurrency = sources.reduce((n, s) => n + s.maxConcurrency, 0);
  const batchSize = sources[0]?.batchSize ?? 10;
  const ideal = (totalConcurrency * batchSize) / (SIM_LATENCY_MS / 1000);
  const high = sources.find((s) => s.queueId === 'high')?.maxConcurrency ?? 2;
  // Lanes loaded in proportion to their pollers, so that every concurrency slot has work.
  const highCount = Math.round((SENDER_MESSAGES * high) / totalConcurrency);
  const unboundConfig = await writeConfigWithQuota(iso, dir, 'unbound-quota', UNBOUND_QUOTA);
  const runs: { name: DrainName; drain: DrainResult }[] = [];
  const order: DrainName[] = ['baseline', 'gateway', 'gateway-quota', 'baseline'];
  for (const [k, name] of order.entries()) {
    const prefix = `is${k}-`;
    await loadBacklog({
      origin: gateway.origin,
      key: iso.key,
      prefix,
      count: SENDER_MESSAGES,
      priority: (i) => (i < highCount ? 'high' : 'normal'),
      runId: ctx.runId,
    });
    const fleet = await startConsumerFleet(iso, dir, {
      kind: name === 'baseline' ? 'sender-baseline' : 'sender',
      layout: 'one-process',
      ...(name === 'gateway' ? { env: { GATEWAY_CONFIG: unboundConfig } } : {}),
    });
    try {
      if (name !== 'baseline') {
        // Inside one quota minute, so the gateway's end-of-window guard band does not stall the drain.
        const expectedMs = (SENDER_MESSAGES / 100) * 1000 + 2_000;
        if (msToWindowEnd(MINUTE_MS) < expectedMs) {
          ctx.log(`waiting ${msToWindowEnd(MINUTE_MS)} ms for the next quota minute`);
          await sleep(msToWindowEnd(MINUTE_MS) + 50);
        }
      }
      const drained = await drain({
        simUrl: iso.simUrl,
        fleet,
        prefix,
        count: SENDER_MESSAGES,
        // Bounded: a drain that cannot finish still gives its rate and CPU per message from what arrived.
        timeoutMs: DRAIN_TIMEOUT_MS,
        otherCpu: emulatorCpu(iso),
      });
      ctx.log(describeDrain(`sender drain, ${DRAIN_LABEL[name]}`, drained));
      runs.push({ name, drain: drained });
    } finally {
      await fleet.stop();
      await purgeLanes(iso);
      // The stopped pollers' long polls linger in the emulator (local/poller.ts `stop`) and would take the next
      // backlog's first messages out of sight for a visibility timeout.
      await sleep(LINGERING_POLL_MS);
    }
  }
  const pick = (name: DrainName) => runs.filter((r) => r.name === name).map((r) => r.drain);
  const [b1, b2] = pick('baseline') as [DrainResult, DrainResult];
  const g = pick('gateway')[0] as DrainResult;
  const q = pick('gateway-quota')[0] as DrainResult;
  // The baseline ran before and after the gateway: its mean is what the machine gave a bare consumer meanwhile.
  const base = {
    steadyPerSec: (b1.steadyPerSec + b2.steadyPerSec) / 2,
    cpuMsPerMessage: (b1.cpuMsPerMessage + b2.cpuMsPerMessage) / 2,
    handlingP99: Math.max(b1.handlingMs.p99, b2.handlingMs.p99),
  };
  const tput = g.steadyPerSec / base.steadyPerSec;
  const cpu = g.cpuMsPerMessage / base.cpuMsPerMessage;
  const p99 = g.handlingMs.p99 / base.handlingP99;
  const quotaPace = paceOfLanes(iso, sources, highCount / SENDER_MESSAGES);
  const ceiling = (share: number) =>
    batchSize / (SIM_LATENCY_MS / 1000 + (batchSize * g.cpuMsPerMessage) / 1000 / share);
  const lambdaShare = lambdaVcpu(FUNCTIONS.sender.memoryMb);
  const perContainer1 = ceiling(1);
  const perContainerLambda = ceiling(lambdaShare);
  const rows: Row[] = [
    {
      metric: 'sender throughput ÷ fair baseline consumer, app quota unbound (own overhead)',
      measured: `${fmt(tput)} (${fmt(g.steadyPerSec, 0)} vs ${fmt(base.steadyPerSec, 0)} msg/s); handling p99 ${fmt(p99)}× (${fmt(g.handlingMs.p99, 0)} vs ${fmt(base.handlingP99, 0)} ms)`,
      target: '≥ 0.8',
      pass: tput >= 0.8,
      value: round(tput),
    },
    {
      metric: 'sender CPU per delivered message ÷ fair baseline consumer',
      measured: `${fmt(cpu)}× (${fmt(g.cpuMsPerMessage, 2)} vs ${fmt(base.cpuMsPerMessage, 2)} ms; default quota ${fmt(q.cpuMsPerMessage, 2)} ms)`,
      target: '≤ 1.3',
      pass: cpu <= 1.3,
      value: round(cpu),
    },
    {
      metric: "sender throughput ÷ fair baseline, default app quota (WeCom's pace)",
      measured: `${fmt(q.steadyPerSec / base.steadyPerSec)} (${fmt(q.steadyPerSec, 0)} msg/s; the quota's pace for this lane mix ${fmt(quotaPace, 0)} msg/s); handling p99 ${fmt(q.handlingMs.p99 / base.handlingP99)}×`,
      target: 'printed (bound by the quota)',
      pass: null,
      value: round(q.steadyPerSec / base.steadyPerSec),
    },
    {
      metric: `sender throughput ÷ ideal (${SIM_LATENCY_MS} ms), unbound quota, own processes`,
      measured: `${fmt(g.steadyPerSec / ideal)} (${fmt(g.steadyPerSec, 0)} of ${fmt(ideal, 0)} msg/s; limited by ${g.limitedBy})`,
      target: 'printed',
      pass: null,
      value: round(g.steadyPerSec / ideal),
    },
    {
      metric: 'sender CPU per message, own process → per-container ceiling',
      measured: `${fmt(g.cpuMsPerMessage, 2)} ms → ${fmt(perContainer1, 0)} msg/s per container at 1 vCPU, ${fmt(perContainerLambda, 0)} at ${FUNCTIONS.sender.memoryMb} MB (${fmt(lambdaShare, 2)} vCPU); ×${totalConcurrency} = ${fmt(perContainerLambda * totalConcurrency, 0)} msg/s (${fmt((perContainerLambda * totalConcurrency) / ideal)} of ideal)`,
      target: 'printed',
      pass: null,
      value: round(g.cpuMsPerMessage, 3),
    },
  ];
  const line = (name: DrainName, d: DrainResult) => `${describeDrain(DRAIN_LABEL[name], d)}`;
  return {
    rows,
    details: {
      messages: SENDER_MESSAGES,
      highMessages: highCount,
      ideal,
      unboundQuota: UNBOUND_QUOTA,
      simLimits: UNBOUND_SIM_LIMITS,
      drains: runs,
      ratios: { throughput: round(tput), cpuPerMessage: round(cpu), handlingP99: round(p99) },
      cpuMsPerMessage: g.cpuMsPerMessage,
      quotaPaceMsgPerSec: round(quotaPace, 1),
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
      `isolated sender: ${SENDER_MESSAGES} messages (${highCount} high, one member each) loaded through the ingest process before each drain; the same event source mapping emulation (${sources.map((s) => `${s.queueId} ${s.maxConcurrency} × ${s.batchSize}`).join(', ')}) feeds one consumer process at a time. Throughput: arrivals at WeCom between their 10th and 90th percentile; handling: handed to the consumer → arrived at WeCom. ${runs.map((r) => line(r.name, r.drain)).join(' | ')}.`,
      `isolated sender, which is which: "unbound" gives the app a quota of ${UNBOUND_QUOTA.perMinute.toLocaleString('en-US')} calls/min (the simulator's app limits raised alike), so that row is the gateway's own overhead; "default quota" is the config as shipped (10,000 calls/min, safety margin 0.2, normal share 0.8), whose pace caps this lane mix at ~${fmt(quotaPace, 0)} msg/s. The baseline (bench/children/sender-baseline.ts) per message: one conditional counter UpdateItem, one message/send over a kept-alive undici Pool (token once per process), one status PutItem; records of a batch concurrently; no quota pacing, records, pauses, retries or logs.`,
      `isolated sender CPU ${fmt(g.cpuMsPerMessage, 2)} ms per delivered message (unbound): a container sending batches of ${batchSize} at ${SIM_LATENCY_MS} ms WeCom latency tops out at ${fmt(perContainer1, 0)} msg/s with a whole vCPU and at ${fmt(perContainerLambda, 0)} msg/s with the ${fmt(lambdaShare, 2)} vCPU Lambda gives ${FUNCTIONS.sender.memoryMb} MB.`,
    ],
  };
}

const DRAIN_LABEL: Record<DrainName, string> = {
  baseline: 'fair baseline consumer',
  gateway: 'sender, app quota unbound',
  'gateway-quota': 'sender, default app quota',
};

/**
 * What the default quota lets this lane mix send per second: each lane's effective per-minute limit
 * (⌊(1 − safetyMargin) × perMinute⌋, × normalShare for normal) over the share of the backlog it carries; the drain
 * ends when the slower lane does.
 */
function paceOfLanes(
  iso: IsolatedStack,
  sources: readonly EventSourceDefinition[],
  highShare: number,
): number {
  const quota = Object.values(iso.config.apps)[0]?.quota;
  if (!quota) return Number.NaN;
  const highPerSec = Math.floor((1 - quota.safetyMargin) * quota.perMinute) / 60;
  const normalPerSec = Math.floor((1 - quota.safetyMargin) * quota.perMinute * quota.normalShare) / 60;
  const lanes = sources.map((s) =>
    s.queueId === 'high' ? highPerSec / highShare : normalPerSec / (1 - highShare),
  );
  return Math.min(...lanes);
}

/**
 * SPEC §7: end-to-end p99 (accepted → WeCom simulator received) at half the quota → ≤ 10 × simulator latency.
 *
 * The stack runs as `npm start` does (its own API and sender, default quota, real 60 s windows, simulator at 20 ms).
 * An open-loop generator submits single POSTs at half the app's effective per-minute quota for the normal lane —
 * ⌊(1 − 0.2) × 10,000⌋ × 0.8 = 6,400/min → 53.3/s — for 15 s, to 200 members (≤ 4 messages each, far below the
 * per-member limit). Each message's latency is the simulator's `receivedAt` (when WeCom accepted it, after the
 * simulated latency) minus the client's send time, matched by content; both clocks are this process's.
 *
 * Diagnostic, to show how much of the tail is queueing on the one event loop that the emulators, the simulator
 * and both functions share in the local stack: the same at 10 msg/s, with the process's CPU use for both rates.
 */
import { QUOTA_DEFAULTS } from '#lib/config/index.js';
import { effectiveLimit } from '#lib/quota/index.js';
import { type BenchGateway, SIM_LATENCY_MS, startBenchGateway } from '../lib/gateway.js';
import type { Metric } from '../lib/harness.js';
import { fmt, round, summarize, waitUntil } from '../lib/harness.js';
import { textMessage } from '../lib/http.js';
import { type RequestRecord, runLoad } from '../lib/load.js';

const DURATION_MS = 15_000;
const LOW_RATE = 10;
const LOW_DURATION_MS = 8_000;
const MEMBERS = 200;

export const e2eLatency: Metric = {
  id: 'e2e',
  title: 'end-to-end p99 at half the quota',
  async run(ctx) {
    const perMinute = effectiveLimit(QUOTA_DEFAULTS.perMinute, { ...QUOTA_DEFAULTS }, 'normal');
    const rate = perMinute / 60 / 2;
    const gw = await startBenchGateway({});
    try {
      const sim = gw.stack.simulator;
      if (!sim) throw new Error('no simulator');
      // Warm-up: token fetched, quota blocks held, connections open.
      await gw.api.post('/v1/messages', textMessage(`e2e warm ${ctx.runId}`, 'e2e-warm'));
      await waitUntil(() => sim.inbox('e2e-warm').length === 1, 10_000);

      ctx.log(`open loop at ${fmt(rate, 1)} msg/s for ${DURATION_MS / 1000} s (half of ${perMinute}/min)`);
      const full = await openLoop(gw, ctx.runId, 'half', rate, DURATION_MS);
      ctx.log(`diagnostic: open loop at ${LOW_RATE} msg/s for ${LOW_DURATION_MS / 1000} s`);
      const low = await openLoop(gw, ctx.runId, 'low', LOW_RATE, LOW_DURATION_MS);
      const { latencies, missing, accepted, res, cpuCores } = full;
      const lowSummary = summarize(low.latencies);
      const s = summarize(latencies);
      const target = 10 * SIM_LATENCY_MS;
      const accept = summarize(accepted.map((r) => r.latencyMs));
      return {
        rows: [
          {
            metric: 'end-to-end p99 at half the quota',
            measured: `${fmt(s.p99, 0)} ms (p50 ${fmt(s.p50, 0)}, max ${fmt(s.max, 0)})`,
            target: `≤ ${target} ms (10 × ${SIM_LATENCY_MS} ms)`,
            pass: s.p99 <= target && missing === 0,
            value: round(s.p99, 1),
          },
          {
            metric: `end-to-end p99 at ${LOW_RATE} msg/s (diagnostic)`,
            measured: `${fmt(lowSummary.p99, 0)} ms (p50 ${fmt(lowSummary.p50, 0)}, max ${fmt(lowSummary.max, 0)})`,
            target: `≤ ${target} ms`,
            pass: null,
            value: round(lowSummary.p99, 1),
          },
        ],
        details: {
          ratePerSec: round(rate, 2),
          durationMs: DURATION_MS,
          samples: full.samples,
          submitted: res.requests,
          accepted: accepted.length,
          missing,
          endToEndMs: s,
          acceptMs: accept,
          generatorMaxLagMs: res.maxLagMs,
          skipped: res.skipped,
          cpuCores,
          lowRate: {
            ratePerSec: LOW_RATE,
            accepted: low.accepted.length,
            missing: low.missing,
            endToEndMs: summarize(low.latencies),
            cpuCores: low.cpuCores,
          },
        },
        notes: [
          `e2e: ${accepted.length} messages accepted at ${fmt(rate, 1)}/s (open loop; generator lag ≤ ${fmt(res.maxLagMs ?? 0, 0)} ms), end-to-end p50 ${fmt(s.p50, 0)} / p90 ${fmt(s.p90, 0)} / p99 ${fmt(s.p99, 0)} ms, of which the 202 took p50 ${fmt(accept.p50, 0)} / p99 ${fmt(accept.p99, 0)} ms; ${missing} not delivered within 30 s; process CPU ${fmt(cpuCores)} cores. At ${LOW_RATE}/s: p50 ${fmt(summarize(low.latencies).p50, 0)} / p99 ${fmt(summarize(low.latencies).p99, 0)} ms, CPU ${fmt(low.cpuCores)} cores.`,
        ],
      };
    } finally {
      await gw.stop();
    }
  },
};

async function openLoop(
  gw: BenchGateway,
  runId: string,
  name: string,
  rate: number,
  durationMs: number,
  origin = gw.stack.apiUrl,
) {
  const sim = gw.stack.simulator;
  if (!sim) throw new Error('no simulator');
  const prefix = `e2e ${runId} ${name} #`;
  const member = (m: number) => `e2e-${name}-${m}`;
  const cpu0 = process.cpuUsage();
  const t0 = Date.now();
  const res = await runLoad({
    origin,
    path: '/v1/messages',
    headers: { authorization: `Bearer ${gw.key}` },
    bodyTemplate: JSON.stringify(textMessage(`${prefix}{{i}}`, `e2e-${name}-{{m}}`)),
    members: MEMBERS,
    mode: 'open',
    ratePerSec: rate,
    durationMs,
    connections: 32,
    record: true,
  });
  const cpu = process.cpuUsage(cpu0);
  const cpuCores = round((cpu.user + cpu.system) / 1000 / (Date.now() - t0), 2);
  const accepted: RequestRecord[] = (res.records ?? []).filter((r) => r.status === 202);
  const inboxCount = () =>
    Array.from({ length: MEMBERS }, (_, m) => sim.inbox(member(m)).length).reduce((a, b) => a + b, 0);
  await waitUntil(() => inboxCount() >= accepted.length, 30_000, 100);
  const receivedAt = new Map<number, number>();
  for (let m = 0; m < MEMBERS; m++) {
    for (const msg of sim.inbox(member(m))) {
      const content = (msg.payload as { content?: string }).content ?? '';
      if (content.startsWith(prefix)) receivedAt.set(Number(content.slice(prefix.length)), msg.receivedAt);
    }
  }
  const latencies: number[] = [];
  /** Send time and latency of each delivered message, for the chart over the run (bench/charts.ts). */
  const samples: { at: number; ms: number }[] = [];
  let missing = 0;
  for (const r of accepted) {
    const at = receivedAt.get(r.i);
    if (at === undefined) missing++;
    else {
      latencies.push(at - r.sentAt);
      samples.push({ at: r.sentAt, ms: at - r.sentAt });
    }
  }
  return { res, accepted, latencies, samples, missing, cpuCores };
}

/**
 * A backlog and its drain: messages accepted through the ingest process's batch POSTs (100 per POST, one member
 * each), then a consumer (bench/lib/consumers.ts) drains them and the WeCom simulator's inboxes say when each one
 * arrived. Used by `isolated` (the sender against its fair baseline consumer) and `allstaff`.
 */
import type { ConsumerFleet } from './consumers.js';
import { fmt, mapLimit, percentile, round, summarize, waitUntil } from './harness.js';
import { ALERT_CONTENT, textMessage } from './http.js';
import { cpuMark, limiter } from './isolated.js';

export interface BacklogSpec {
  /** The ingest process's origin and an API key it accepts. */
  readonly origin: string;
  readonly key: string;
  /** Member ids are `<prefix><i>`: one message per member, so the simulator's inboxes tell each arrival. */
  readonly prefix: string;
  readonly count: number;
  /** The lane of message i; default the API's default (normal). */
  readonly priority?: (i: number) => 'high' | 'normal' | undefined;
  readonly runId: string;
  /** More fields of message i (e.g. a `callback_url`). */
  readonly extra?: (i: number) => Record<string, unknown>;
  /** Batch POSTs in flight at once. */
  readonly inFlight?: number;
}

const BATCH = 100;

/** Submits the backlog through `POST /v1/messages/batch`; throws when a message was not accepted. */
export async function loadBacklog(spec: BacklogSpec): Promise<{ accepted: number; ms: number }> {
  const t0 = Date.now();
  const starts = Array.from({ length: Math.ceil(spec.count / BATCH) }, (_, c) => c * BATCH);
  const accepted = await mapLimit(starts, spec.inFlight ?? 2, async (from) => {
    const res = await fetch(`${spec.origin}/v1/messages/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${spec.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        messages: Array.from({ length: Math.min(BATCH, spec.count - from) }, (_, k) => {
          const i = from + k;
          const priority = spec.priority?.(i);
          return textMessage(`${ALERT_CONTENT} ${spec.prefix} ${spec.runId} #${i}`, `${spec.prefix}${i}`, {
            ...(priority ? { priority } : {}),
            ...spec.extra?.(i),
          });
        }),
      }),
    });
    if (res.status !== 207) throw new Error(`batch POST answered ${res.status}`);
    const body = (await res.json()) as { results?: { id?: string }[] };
    return (body.results ?? []).filter((r) => r.id).length;
  });
  const total = accepted.reduce((a, b) => a + b, 0);
  if (total !== spec.count) throw new Error(`only ${total} of ${spec.count} backlog messages were accepted`);
  return { accepted: total, ms: Date.now() - t0 };
}

export interface DrainSpec {
  readonly simUrl: string;
  readonly fleet: ConsumerFleet;
  /** The backlog's member prefix and size. */
  readonly prefix: string;
  readonly count: number;
  readonly timeoutMs: number;
  /** Other processes whose CPU the row should show (emulators, the bench itself). */
  readonly otherCpu: Record<string, () => Promise<number>>;
  /**
   * Submits the backlog after the pollers started (accepting and delivering overlap, as for a client posting to a
   * running stack); without it the backlog was loaded before. Time to last delivery counts from its start.
   */
  readonly feed?: () => Promise<unknown>;
}

export interface DrainResult {
  readonly consumer: string;
  /** How long `feed` took (the backlog's acceptance), ms; 0 without one. */
  readonly feedMs: number;
  readonly expected: number;
  readonly delivered: number;
  /** Polling started → last arrival at WeCom, ms. */
  readonly timeToLastMs: number;
  /** delivered ÷ time to last delivery, msg/s. */
  readonly overallPerSec: number;
  /** Arrivals between the 10th and 90th percentile ÷ that time, msg/s (start and tail left out). */
  readonly steadyPerSec: number;
  /** Consumer CPU (all its processes) per delivered message, ms. */
  readonly cpuMsPerMessage: number;
  /** Handed to the consumer (first time) → arrived at WeCom, per message, ms. */
  readonly handlingMs: ReturnType<typeof summarize>;
  /** Invocation durations, ms. */
  readonly batchMs: ReturnType<typeof summarize>;
  readonly invocations: number;
  readonly meanRecords: number;
  readonly failedRecords: number;
  readonly maxBusy: number;
  /** WeCom errcodes other than 0 answered during the drain. */
  readonly errcodes: Record<string, number>;
  readonly cores: Record<string, number>;
  readonly limitedBy: string;
}

interface SimStats {
  delivered: number;
  byErrcode?: Record<string, number>;
}

const simStats = async (simUrl: string): Promise<SimStats> =>
  (await fetch(`${simUrl}/__sim/stats`).then((r) => r.json())) as SimStats;

/** Starts the fleet's pollers and waits (bounded) until the backlog reached WeCom; figures from the inboxes. */
export async function drain(spec: DrainSpec): Promise<DrainResult> {
  const before = await simStats(spec.simUrl);
  const mark = await cpuMark({ consumer: () => spec.fleet.cpuMs(), ...spec.otherCpu });
  const cpu0 = await spec.fleet.cpuMs();
  const invocations0 = spec.fleet.invocations().length;
  const t0 = Date.now();
  spec.fleet.startPolling();
  await spec.feed?.();
  const feedMs = Date.now() - t0;
  await waitUntil(
    async () => (await simStats(spec.simUrl)).delivered - before.delivered >= spec.count,
    spec.timeoutMs,
    100,
  );
  const cpuMs = (await spec.fleet.cpuMs()) - cpu0;
  const cores = await mark.since();
  const after = await simStats(spec.simUrl);
  const members = (
    (await fetch(`${spec.simUrl}/__sim/members`).then((r) => r.json())) as {
      userid: string;
      lastAt: number | null;
    }[]
  ).filter((m) => m.userid.startsWith(spec.prefix) && m.lastAt !== null);
  const arrivals = members.map((m) => m.lastAt as number);
  const handed = spec.fleet.handedAt();
  const handling = members
    .map((m) => (m.lastAt as number) - (handed.get(m.userid) ?? Number.NaN))
    .filter(Number.isFinite);
  const invs = spec.fleet.invocations().slice(invocations0);
  const last = arrivals.length > 0 ? Math.max(...arrivals) : Number.NaN;
  const p10 = percentile(arrivals, 10);
  const p90 = percentile(arrivals, 90);
  const inWindow = arrivals.filter((t) => t >= p10 && t <= p90).length;
  const errcodes: Record<string, number> = {};
  for (const [code, n] of Object.entries(after.byErrcode ?? {})) {
    const d = n - (before.byErrcode?.[code] ?? 0);
    if (code !== '0' && d > 0) errcodes[code] = d;
  }
  return {
    consumer: spec.fleet.kind,
    feedMs,
    expected: spec.count,
    delivered: members.length,
    timeToLastMs: last - t0,
    overallPerSec: round((members.length / Math.max(1, last - t0)) * 1000, 1),
    steadyPerSec: round(p90 > p10 ? ((inWindow - 1) / (p90 - p10)) * 1000 : Number.NaN, 1),
    cpuMsPerMessage: round(cpuMs / Math.max(1, members.length), 3),
    handlingMs: summarize(handling),
    batchMs: summarize(invs.map((i) => i.ms)),
    invocations: invs.length,
    meanRecords: round(invs.reduce((a, i) => a + i.records, 0) / Math.max(1, invs.length), 2),
    failedRecords: invs.reduce((a, i) => a + i.failed, 0),
    maxBusy: spec.fleet.maxBusy(),
    errcodes,
    cores,
    limitedBy: limiter(cores),
  };
}

/** One line for progress output. */
export const describeDrain = (label: string, d: DrainResult): string =>
  `${label}: ${d.delivered}/${d.expected} in ${fmt(d.timeToLastMs / 1000, 1)} s, ${fmt(d.steadyPerSec, 0)} msg/s steady (${fmt(d.overallPerSec, 0)} overall), handling p50 ${fmt(d.handlingMs.p50, 0)} p99 ${fmt(d.handlingMs.p99, 0)} ms, batch p99 ${fmt(d.batchMs.p99, 0)} ms (${fmt(d.meanRecords, 1)} records, ${d.maxBusy} at once), CPU ${fmt(d.cpuMsPerMessage, 2)} ms/msg${Object.keys(d.errcodes).length > 0 ? `, errcodes ${JSON.stringify(d.errcodes)}` : ''}; limited by ${d.limitedBy}`;

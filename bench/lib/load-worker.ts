import { parentPort, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import type { LoadResult, LoadSpec, RequestRecord } from './load.js';

const spec = workerData as LoadSpec;
const pool = new Pool(spec.origin, {
  connections: spec.connections,
  pipelining: 1,
  keepAliveTimeout: 30_000,
});
const parts = (spec.bodyTemplate ?? '').split(/(\{\{i\}\}|\{\{m\}\})/);
const members = spec.members ?? 1;
const bodyFor = (i: number): string | undefined =>
  spec.bodyTemplate === undefined
    ? undefined
    : parts.map((p) => (p === '{{i}}' ? String(i) : p === '{{m}}' ? String(i % members) : p)).join('');
const headers = {
  ...(spec.bodyTemplate !== undefined ? { 'content-type': 'application/json' } : {}),
  ...spec.headers,
};
const timeout = spec.timeoutMs ?? 30_000;

interface Outcome {
  status: number;
  latencyMs: number;
  body?: string;
}

async function once(i: number): Promise<Outcome> {
  const started = performance.now();
  try {
    const prepared = spec.requests?.[i % spec.requests.length];
    const body = prepared ? prepared.body : bodyFor(i);
    const res = await pool.request({
      method: spec.method ?? 'POST',
      path: prepared ? prepared.path : spec.path,
      headers,
      ...(body !== undefined ? { body } : {}),
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    const text = await res.body.text();
    return {
      status: res.statusCode,
      latencyMs: performance.now() - started,
      ...(spec.recordBodies ? { body: text } : {}),
    };
  } catch {
    return { status: 0, latencyMs: performance.now() - started };
  }
}

/** What both modes count per answered request: statuses, transport errors, 2xx latencies, optional records. */
function tally() {
  const t = {
    latencies: [] as number[],
    statuses: {} as Record<string, number>,
    records: [] as RequestRecord[],
    ok: 0,
    errors: 0,
    add(out: Outcome, at: { i: number; sentAt: number; scheduledAt?: number }) {
      t.statuses[out.status] = (t.statuses[out.status] ?? 0) + 1;
      if (out.status === 0) t.errors++;
      else if (out.status < 300) {
        t.ok++;
        t.latencies.push(out.latencyMs);
      }
      if (spec.record)
        t.records.push({ ...at, status: out.status, latencyMs: out.latencyMs, ...bodyOf(out) });
    },
  };
  return t;
}

async function closed(): Promise<LoadResult> {
  const start = performance.now();
  const warmEnd = start + (spec.warmupMs ?? 0);
  const end = warmEnd + spec.durationMs;
  const maxRequests = spec.maxRequests ?? Number.POSITIVE_INFINITY;
  const t = tally();
  let issued = 0;
  let recorded = 0;
  const client = async () => {
    while (performance.now() < end && issued < maxRequests) {
      const i = issued++;
      const sentAt = Date.now();
      const startedAt = performance.now();
      const out = await once(i);
      if (startedAt < warmEnd) continue;
      recorded++;
      t.add(out, { i, sentAt });
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency ?? 1 }, client));
  const elapsedMs = Math.min(performance.now(), end) - warmEnd;
  return {
    requests: recorded,
    issued,
    elapsedMs,
    throughput: (t.ok / elapsedMs) * 1000,
    statuses: t.statuses,
    errors: t.errors,
    latencies: t.latencies,
    ...(spec.record ? { records: t.records } : {}),
  };
}

async function open(): Promise<LoadResult> {
  const rate = spec.ratePerSec ?? 1;
  const maxInFlight = spec.maxInFlight ?? 256;
  const maxRequests = Math.min(
    spec.maxRequests ?? Number.POSITIVE_INFINITY,
    Math.floor((rate * spec.durationMs) / 1000),
  );
  const t0 = Date.now();
  const t = tally();
  const pending = new Set<Promise<void>>();
  let skipped = 0;
  let maxLagMs = 0;
  for (let i = 0; i < maxRequests; i++) {
    const scheduledAt = t0 + (i * 1000) / rate;
    const wait = scheduledAt - Date.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    if (pending.size >= maxInFlight) {
      skipped++;
      continue;
    }
    const sentAt = Date.now();
    maxLagMs = Math.max(maxLagMs, sentAt - scheduledAt);
    const p = once(i).then((out) => t.add(out, { i, sentAt, scheduledAt }));
    pending.add(p);
    void p.finally(() => pending.delete(p));
  }
  await Promise.all(pending);
  const elapsedMs = Date.now() - t0;
  return {
    requests: maxRequests - skipped,
    issued: maxRequests - skipped,
    elapsedMs,
    throughput: (t.ok / elapsedMs) * 1000,
    statuses: t.statuses,
    errors: t.errors,
    latencies: t.latencies,
    maxLagMs,
    skipped,
    ...(spec.record ? { records: t.records } : {}),
  };
}

const bodyOf = (out: Outcome) => (out.body !== undefined ? { body: out.body } : {});

const result = await (spec.mode === 'closed' ? closed() : open());
await pool.close();
parentPort?.postMessage(result);

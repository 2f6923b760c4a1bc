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
    const body = bodyFor(i);
    const res = await pool.request({
      method: spec.method ?? 'POST',
      path: spec.path,
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

async function closed(): Promise<LoadResult> {
  const start = performance.now();
  const warmEnd = start + (spec.warmupMs ?? 0);
  const end = warmEnd + spec.durationMs;
  const maxRequests = spec.maxRequests ?? Number.POSITIVE_INFINITY;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const records: RequestRecord[] = [];
  let issued = 0;
  let recorded = 0;
  let ok = 0;
  let errors = 0;
  const client = async () => {
    while (performance.now() < end && issued < maxRequests) {
      const i = issued++;
      const sentAt = Date.now();
      const startedAt = performance.now();
      const out = await once(i);
      if (startedAt < warmEnd) continue;
      recorded++;
      statuses[out.status] = (statuses[out.status] ?? 0) + 1;
      if (out.status === 0) errors++;
      else if (out.status < 300) {
        ok++;
        latencies.push(out.latencyMs);
      }
      if (spec.record)
        records.push({ i, sentAt, status: out.status, latencyMs: out.latencyMs, ...bodyOf(out) });
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency ?? 1 }, client));
  const elapsedMs = Math.min(performance.now(), end) - warmEnd;
  return {
    requests: recorded,
    issued,
    elapsedMs,
    throughput: (ok / elapsedMs) * 1000,
    statuses,
    errors,
    latencies,
    ...(spec.record ? { records } : {}),
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
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const records: RequestRecord[] = [];
  const pending = new Set<Promise<void>>();
  let ok = 0;
  let errors = 0;
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
    const p = once(i).then((out) => {
      statuses[out.status] = (statuses[out.status] ?? 0) + 1;
      if (out.status === 0) errors++;
      else if (out.status < 300) {
        ok++;
        latencies.push(out.latencyMs);
      }
      if (spec.record)
        records.push({
          i,
          sentAt,
          scheduledAt,
          status: out.status,
          latencyMs: out.latencyMs,
          ...bodyOf(out),
        });
    });
    pending.add(p);
    void p.finally(() => pending.delete(p));
  }
  await Promise.all(pending);
  const elapsedMs = Date.now() - t0;
  return {
    requests: maxRequests - skipped,
    issued: maxRequests - skipped,
    elapsedMs,
    throughput: (ok / elapsedMs) * 1000,
    statuses,
    errors,
    latencies,
    maxLagMs,
    skipped,
    ...(spec.record ? { records } : {}),
  };
}

const bodyOf = (out: Outcome) => (out.body !== undefined ? { body: out.body } : {});

const result = await (spec.mode === 'closed' ? closed() : open());
await pool.close();
parentPort?.postMessage(result);

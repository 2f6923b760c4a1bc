/**
 * The shared shape of every SPEC §7 measurement: a metric module gets a {@link BenchContext} (progress output,
 * results of earlier metrics, a time budget) and returns rows for the summary table plus free-form details for
 * `bench/results/latest.json`. Figures are reported, not asserted: a row that misses its target is a finding.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface Row {
  /** Short label in the summary table, e.g. `gettoken calls, 50 cold senders`. */
  readonly metric: string;
  /** Human-readable measured figure, e.g. `1` or `0.97 (24.3/25 per window)`. */
  readonly measured: string;
  readonly target: string;
  /** null: informational row without a target. */
  readonly pass: boolean | null;
  /** The number the pass/fail decision used, for machines reading latest.json. */
  readonly value?: number;
}

export interface MetricOutcome {
  readonly rows: Row[];
  /** Everything needed to understand the rows: inputs, raw counts, percentiles, caveats. */
  readonly details: Record<string, unknown>;
  /** Lines printed under the table: how the figure was obtained and anything that qualifies it. */
  readonly notes?: string[];
}

export interface BenchContext {
  /** Prints a progress line prefixed with the elapsed time and the metric id. */
  log(message: string): void;
  /** Results of metrics that ran earlier in this process, by id (the cost model reads the steady-state run). */
  readonly results: Map<string, MetricOutcome & { shared?: unknown }>;
  /** Run id, unique per bench run; used to make message contents unique. */
  readonly runId: string;
}

export interface Metric {
  readonly id: string;
  readonly title: string;
  /** Ids of metrics whose `shared` output this one reads; run.ts runs them first. */
  readonly needs?: readonly string[];
  /** Runs only when named in `--only` (minutes long, or a diagnostic such as CPU profiles). */
  readonly optIn?: boolean;
  run(ctx: BenchContext): Promise<MetricOutcome & { shared?: unknown }>;
}

const benchStart = performance.now();

export function progress(id: string, message: string): void {
  const t = ((performance.now() - benchStart) / 1000).toFixed(1).padStart(6);
  process.stdout.write(`[${t}s] ${id.padEnd(9)} ${message}\n`);
}

/** Nearest-rank percentile of an unsorted sample; NaN for an empty one. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function summarize(values: readonly number[]): {
  n: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
} {
  const n = values.length;
  const mean = n === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / n;
  return {
    n,
    mean: round(mean, 2),
    p50: round(percentile(values, 50), 2),
    p90: round(percentile(values, 90), 2),
    p99: round(percentile(values, 99), 2),
    max: round(n === 0 ? Number.NaN : Math.max(...values), 2),
  };
}

export const round = (n: number, digits = 3): number => {
  if (!Number.isFinite(n)) return n;
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};

export const fmt = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : String(n));

/**
 * Polls `check` every `intervalMs` until it is true or `timeoutMs` passed; returns whether it became true.
 * Every wait in the bench is bounded: a stuck gateway shows up as a figure (e.g. "lost 3"), not a hang.
 */
export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  intervalMs = 50,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(intervalMs);
  }
}

/** Runs `fn` over `items` with at most `concurrency` in flight; results keep the input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i] as T, i);
    }
  });
  await Promise.all(workers);
  return out;
}

/** Milliseconds until the next boundary of a `windowMs` window aligned to the epoch (as both quota clocks are). */
export const msToWindowEnd = (windowMs: number, now = Date.now()): number => windowMs - (now % windowMs);

export { sleep };

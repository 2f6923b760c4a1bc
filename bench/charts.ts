/**
 * The bench report's pictures, drawn from the metrics' details after a run (bench/run.ts): end-to-end latency
 * percentiles over the `e2e` run, and quota use per window (allowed vs delivered) for the `quota` cases. Written
 * next to latest.json; a metric that did not run leaves its chart out.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MetricOutcome } from './lib/harness.js';
import { barChart, latencyOverTimeChart } from './lib/svg.js';

interface QuotaStream {
  label: string;
  allowed: number;
  wecomLimit: number;
  perWindow: number[];
}

const PALETTE = [
  ['#1c7ed6', '#a5d8ff'],
  ['#e8590c', '#ffd8a8'],
];

export async function writeCharts(results: Map<string, MetricOutcome>, dir: string): Promise<string[]> {
  const written: string[] = [];
  const e2e = results.get('e2e')?.details as
    | { samples?: { at: number; ms: number }[]; ratePerSec?: number; endToEndMs?: { p99: number } }
    | undefined;
  if (e2e?.samples?.length) {
    const file = join(dir, 'e2e-latency.svg');
    await writeFile(
      file,
      latencyOverTimeChart({
        title: 'End-to-end latency over the run (bench e2e)',
        subtitle: `open loop ${e2e.ratePerSec}/s single POSTs (half the normal lane's quota), simulator 20 ms, local stack in one process`,
        samples: e2e.samples,
        bucketMs: 1_000,
        targetMs: 200,
      }),
    );
    written.push(file);
  }
  const quota = results.get('quota')?.details as
    | { cases?: Record<string, { windowMs?: number; streams: QuotaStream[] }> }
    | undefined;
  for (const [name, c] of Object.entries(quota?.cases ?? {})) {
    const windows = Math.max(...c.streams.map((s) => s.perWindow.length));
    const file = join(dir, `quota-${name}.svg`);
    await writeFile(
      file,
      barChart({
        title: `Quota use per window, ${name === 'member' ? 'one member' : 'one app'} (bench quota)`,
        subtitle: `delivered (simulator receivedAt) vs allowed (the gateway's own limit); ${(c.windowMs ?? 0) / 1000} s "minutes"; first and last windows partial`,
        xLabel: 'quota window',
        yLabel: 'messages per window',
        categories: Array.from({ length: windows }, (_, i) => `w${i + 1}`),
        series: c.streams.flatMap((s, i) => {
          const [strong, light] = PALETTE[i % PALETTE.length] as [string, string];
          const lane = s.label.replace(/^per (member|app), /, '');
          return [
            { name: `${lane}: delivered`, color: strong, values: s.perWindow },
            {
              name: `${lane}: allowed ${s.allowed} (WeCom ${s.wecomLimit})`,
              color: light,
              values: Array.from({ length: windows }, () => s.allowed),
            },
          ];
        }),
      }),
    );
    written.push(file);
  }
  return written;
}

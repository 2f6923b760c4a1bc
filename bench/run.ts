/**
 * `npm run bench`: measures every SPEC §7 target on the local stack and prints
 * `metric | measured | target | pass/fail`, then writes bench/results/latest.json. Figures are reported, not
 * asserted: the exit code is 0 unless the bench itself crashed (a metric threw).
 *
 *   npx tsx bench/run.ts                   # everything (~5 min on 2 vCPU)
 *   npx tsx bench/run.ts --only=token,cost # a subset (dependencies such as `dynamo` for `cost` run too)
 *   npx tsx bench/run.ts --list            # metric ids
 *   npx tsx bench/run.ts --only=allstaff   # opt-in metrics (allstaff, profile) run only when named
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
// Type-only: erased at run time, so it does not load the stack before the warning filter below.
import type { MetricOutcome } from './lib/harness.js';

// fauxqs (the SQS emulator) uses node:sqlite, which prints an ExperimentalWarning on Node 22; the npm scripts pass
// --disable-warning, `npx tsx bench/run.ts` does not. Other warnings still print. Must run before the imports below.
process.removeAllListeners('warning');
process.on('warning', (w) => {
  if (w.name !== 'ExperimentalWarning') process.stderr.write(`${w.name}: ${w.message}\n`);
});

const { METRICS } = await import('./metrics/index.js');
const { progress } = await import('./lib/harness.js');
const { writeCharts } = await import('./charts.js');
type Outcome = MetricOutcome & { shared?: unknown };

/** The whole bench must end in bounded time even if a metric hangs: the default run takes ~8 min on 2 vCPU, the
 * opt-in metrics (allstaff, profile) up to ~9 more. */
const WATCHDOG_MS = 20 * 60_000;

const args = process.argv.slice(2);
if (args.includes('--list')) {
  for (const m of METRICS)
    console.log(`${m.id.padEnd(17)} ${m.title}${m.optIn ? ' (only with --only)' : ''}`);
  process.exit(0);
}
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',')
  .filter(Boolean);
const wanted = new Set<string>();
const want = (id: string) => {
  const m = METRICS.find((x) => x.id === id);
  if (!m) throw new Error(`unknown metric ${id}; try --list`);
  for (const dep of m.needs ?? []) want(dep);
  wanted.add(id);
};
for (const m of METRICS) if (only ? only.includes(m.id) : !m.optIn) want(m.id);
const selected = METRICS.filter((m) => wanted.has(m.id));

const runId = Date.now().toString(36);
const startedAt = new Date();
const t0 = performance.now();
const results = new Map<string, Outcome>();
const errors: { id: string; error: string }[] = [];
const durations: Record<string, number> = {};
/** 1-minute load average when each metric started: other work on a shared machine shows up here. */
const loadAtStart: Record<string, number> = {};

const watchdog = setTimeout(() => {
  process.stderr.write(`bench watchdog: still running after ${WATCHDOG_MS / 60_000} min, giving up\n`);
  process.exit(2);
}, WATCHDOG_MS);
watchdog.unref();

console.log(
  `wecom-gateway bench — ${selected.length} metrics, Node ${process.version}, ${cpus().length} vCPU, ` +
    `${Math.round(totalmem() / 2 ** 30)} GB, run ${runId}`,
);
for (const metric of selected) {
  const started = performance.now();
  const load = loadavg()[0] ?? 0;
  loadAtStart[metric.id] = Math.round(load * 100) / 100;
  progress(metric.id, `start: ${metric.title} (load average ${load.toFixed(2)})`);
  try {
    const outcome = await metric.run({
      log: (message) => progress(metric.id, message),
      results,
      runId,
    });
    results.set(metric.id, outcome);
  } catch (err) {
    const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
    errors.push({ id: metric.id, error });
    progress(metric.id, `CRASHED: ${err instanceof Error ? err.message : String(err)}`);
  }
  const took = Math.round(performance.now() - started);
  durations[metric.id] = took;
  progress(metric.id, `done in ${(took / 1000).toFixed(1)} s`);
}
const totalMs = Math.round(performance.now() - t0);

// ── summary table ──────────────────────────────────────────────────────────────────────────────────────────────
const rows = selected.flatMap((m) => {
  const r = results.get(m.id);
  if (!r) return [{ id: m.id, metric: m.title, measured: 'error', target: '', verdict: 'CRASH' }];
  return r.rows.map((row) => ({
    id: m.id,
    metric: row.metric,
    measured: row.measured,
    target: row.target,
    verdict: row.pass === null ? 'info' : row.pass ? 'pass' : 'FAIL',
  }));
});
const width = (key: 'metric' | 'measured' | 'target') =>
  Math.min(70, Math.max(key.length, ...rows.map((r) => r[key].length)));
const w = { metric: width('metric'), measured: width('measured'), target: width('target') };
const line = (a: string, b: string, c: string, d: string) =>
  `${a.padEnd(w.metric)} | ${b.padEnd(w.measured)} | ${c.padEnd(w.target)} | ${d}`;
console.log(`\n${line('metric', 'measured', 'target', 'pass/fail')}`);
console.log(`${'-'.repeat(w.metric)}-|-${'-'.repeat(w.measured)}-|-${'-'.repeat(w.target)}-|----------`);
for (const r of rows) console.log(line(r.metric, r.measured, r.target, r.verdict));

console.log('\ndetails');
for (const m of selected) {
  const r = results.get(m.id);
  for (const note of r?.notes ?? []) console.log(`- ${note}`);
}
for (const e of errors) console.log(`- ${e.id} crashed: ${e.error.split('\n').slice(0, 3).join(' | ')}`);
const passed = rows.filter((r) => r.verdict === 'pass').length;
const failed = rows.filter((r) => r.verdict === 'FAIL').length;
console.log(
  `\n${passed} pass, ${failed} below target, ${errors.length} crashed — total ${(totalMs / 1000).toFixed(1)} s`,
);

// ── latest.json ────────────────────────────────────────────────────────────────────────────────────────────────
const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json');
await mkdir(dirname(out), { recursive: true });
await writeFile(
  out,
  `${JSON.stringify(
    {
      runId,
      startedAt: startedAt.toISOString(),
      totalMs,
      machine: { node: process.version, cpus: cpus().length, model: cpus()[0]?.model, memBytes: totalmem() },
      rows,
      metrics: Object.fromEntries(
        selected.map((m) => {
          const r = results.get(m.id);
          return [
            m.id,
            r
              ? {
                  title: m.title,
                  durationMs: durations[m.id],
                  loadAverageAtStart: loadAtStart[m.id],
                  rows: r.rows,
                  details: r.details,
                  notes: r.notes ?? [],
                }
              : {
                  title: m.title,
                  durationMs: durations[m.id],
                  loadAverageAtStart: loadAtStart[m.id],
                  error: errors.find((e) => e.id === m.id)?.error,
                },
          ];
        }),
      ),
    },
    null,
    2,
  )}\n`,
);
console.log(`results written to ${out}`);
for (const chart of await writeCharts(results, dirname(out))) console.log(`chart written to ${chart}`);
process.exit(errors.length > 0 ? 1 : 0);

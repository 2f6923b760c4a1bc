/**
 * Hand-written SVG charts for the bench and load reports (no browser, no dependency): a line chart of latency
 * percentiles over a run and a grouped bar chart of quota per window. Plain SVG 1.1 that GitHub renders inline.
 */

export interface Series {
  name: string;
  color: string;
  points: { x: number; y: number }[];
  /** Dashed line, e.g. a target. */
  dashed?: boolean;
}

const W = 900;
const H = 340;
const PAD = { left: 64, right: 260, top: 40, bottom: 48 };
const FONT = 'font-family="Helvetica, Arial, sans-serif"';

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Round axis steps: 1, 2, 5 × 10^n, about `count` of them up to `max`. */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  const ticks: number[] = [];
  for (let t = 0; t <= max + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  if ((ticks.at(-1) ?? 0) < max) ticks.push(Number(((ticks.at(-1) ?? 0) + step).toPrecision(12)));
  return ticks;
}

function frame(title: string, subtitle: string, xLabel: string, yLabel: string, body: string): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ${FONT} font-size="12">`,
    // The accessible name of the picture (screen readers, and GitHub's image preview).
    `<title>${esc(title)}</title>`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${PAD.left}" y="18" font-size="15" font-weight="bold">${esc(title)}</text>`,
    `<text x="${PAD.left}" y="33" fill="#555">${esc(subtitle)}</text>`,
    body,
    `<text x="${PAD.left + (W - PAD.left - PAD.right) / 2}" y="${H - 10}" text-anchor="middle" fill="#333">${esc(xLabel)}</text>`,
    `<text transform="translate(16 ${PAD.top + (H - PAD.top - PAD.bottom) / 2}) rotate(-90)" text-anchor="middle" fill="#333">${esc(yLabel)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}

function axes(xTicks: number[], yTicks: number[], sx: (x: number) => number, sy: (y: number) => number) {
  const out: string[] = [];
  for (const t of yTicks) {
    out.push(
      `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="#e5e5e5"/>`,
      `<text x="${PAD.left - 6}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end" fill="#555">${t}</text>`,
    );
  }
  for (const t of xTicks) {
    out.push(
      `<text x="${sx(t).toFixed(1)}" y="${H - PAD.bottom + 16}" text-anchor="middle" fill="#555">${t}</text>`,
    );
  }
  out.push(
    `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${H - PAD.bottom}" y2="${H - PAD.bottom}" stroke="#333"/>`,
    `<line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${H - PAD.bottom}" stroke="#333"/>`,
  );
  return out.join('\n');
}

function legend(items: { name: string; color: string; dashed?: boolean; bar?: boolean }[]): string {
  return items
    .map((s, i) => {
      const y = PAD.top + 10 + i * 20;
      const x = W - PAD.right + 14;
      const mark = s.bar
        ? `<rect x="${x}" y="${y - 8}" width="18" height="10" fill="${s.color}"/>`
        : `<line x1="${x}" x2="${x + 18}" y1="${y - 4}" y2="${y - 4}" stroke="${s.color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="5 4"' : ''}/>`;
      return `${mark}<text x="${x + 24}" y="${y}">${esc(s.name)}</text>`;
    })
    .join('\n');
}

/** Line chart of several series over a shared numeric x axis (e.g. seconds into the run). */
export function lineChart(opts: {
  title: string;
  subtitle: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
}): string {
  const all = opts.series.flatMap((s) => s.points);
  const xMax = Math.max(1, ...all.map((p) => p.x));
  const yMax = Math.max(1, ...all.map((p) => p.y));
  const xTicks = niceTicks(xMax, 8);
  const yTicks = niceTicks(yMax, 5);
  const sx = (x: number) => PAD.left + (x / (xTicks.at(-1) ?? 1)) * (W - PAD.left - PAD.right);
  const sy = (y: number) => H - PAD.bottom - (y / (yTicks.at(-1) ?? 1)) * (H - PAD.top - PAD.bottom);
  const lines = opts.series.map((s) => {
    const d = s.points
      .map((p, i) => `${i === 0 ? 'M' : 'L'}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`)
      .join(' ');
    const dots = s.dashed
      ? ''
      : s.points.map(
          (p) => `<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="2" fill="${s.color}"/>`,
        );
    return `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 4"' : ''}/>\n${Array.isArray(dots) ? dots.join('') : dots}`;
  });
  return frame(
    opts.title,
    opts.subtitle,
    opts.xLabel,
    opts.yLabel,
    `${axes(xTicks, yTicks, sx, sy)}\n${lines.join('\n')}\n${legend(opts.series)}`,
  );
}

/** Grouped bars per category (e.g. per quota window): one bar per series, side by side. */
export function barChart(opts: {
  title: string;
  subtitle: string;
  xLabel: string;
  yLabel: string;
  categories: string[];
  series: { name: string; color: string; values: number[] }[];
}): string {
  const yMax = Math.max(1, ...opts.series.flatMap((s) => s.values));
  const yTicks = niceTicks(yMax, 5);
  const plotW = W - PAD.left - PAD.right;
  const groupW = plotW / Math.max(1, opts.categories.length);
  const barW = Math.min(28, (groupW * 0.8) / opts.series.length);
  const sy = (y: number) => H - PAD.bottom - (y / (yTicks.at(-1) ?? 1)) * (H - PAD.top - PAD.bottom);
  const bars: string[] = [];
  opts.categories.forEach((c, ci) => {
    const x0 = PAD.left + ci * groupW + (groupW - barW * opts.series.length) / 2;
    opts.series.forEach((s, si) => {
      const v = s.values[ci] ?? 0;
      const y = sy(v);
      bars.push(
        `<rect x="${(x0 + si * barW).toFixed(1)}" y="${y.toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${(H - PAD.bottom - y).toFixed(1)}" fill="${s.color}"><title>${esc(`${c} ${s.name}: ${v}`)}</title></rect>`,
      );
    });
    bars.push(
      `<text x="${(PAD.left + ci * groupW + groupW / 2).toFixed(1)}" y="${H - PAD.bottom + 16}" text-anchor="middle" fill="#555">${esc(c)}</text>`,
    );
  });
  const yAxis = yTicks
    .map(
      (t) =>
        `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="#e5e5e5"/><text x="${PAD.left - 6}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end" fill="#555">${t}</text>`,
    )
    .join('\n');
  const base = `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${H - PAD.bottom}" y2="${H - PAD.bottom}" stroke="#333"/><line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${H - PAD.bottom}" stroke="#333"/>`;
  return frame(
    opts.title,
    opts.subtitle,
    opts.xLabel,
    opts.yLabel,
    `${yAxis}\n${bars.join('\n')}\n${base}\n${legend(opts.series.map((s) => ({ ...s, bar: true })))}`,
  );
}

/** Percentiles of `ms` per bucket of `bucketMs` of `at` (relative to the first sample), for {@link lineChart}. */
export function percentilesOverTime(
  samples: { at: number; ms: number }[],
  bucketMs: number,
  ps: number[],
): { x: number; values: number[]; n: number }[] {
  if (samples.length === 0) return [];
  const t0 = Math.min(...samples.map((s) => s.at));
  const buckets = new Map<number, number[]>();
  for (const s of samples) {
    const b = Math.floor((s.at - t0) / bucketMs);
    buckets.set(b, [...(buckets.get(b) ?? []), s.ms]);
  }
  return [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([b, values]) => {
      const sorted = [...values].sort((x, y) => x - y);
      const at = (p: number) =>
        sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
      return { x: ((b + 0.5) * bucketMs) / 1000, values: ps.map(at), n: values.length };
    });
}

/** The usual latency chart: p50/p90/p99 per bucket over the run, with an optional target line. */
export function latencyOverTimeChart(opts: {
  title: string;
  subtitle: string;
  samples: { at: number; ms: number }[];
  bucketMs: number;
  targetMs?: number;
}): string {
  const rows = percentilesOverTime(opts.samples, opts.bucketMs, [50, 90, 99]);
  const colors = ['#2b8a3e', '#e8590c', '#c92a2a'];
  const series: Series[] = ['p50', 'p90', 'p99'].map((name, i) => ({
    name,
    color: colors[i] as string,
    points: rows.map((r) => ({ x: Math.round(r.x * 10) / 10, y: Math.round(r.values[i] as number) })),
  }));
  if (opts.targetMs !== undefined && rows.length > 0) {
    series.push({
      name: `target p99 ${opts.targetMs} ms`,
      color: '#868e96',
      dashed: true,
      points: [
        { x: 0, y: opts.targetMs },
        { x: Math.round((rows.at(-1)?.x ?? 1) * 10) / 10, y: opts.targetMs },
      ],
    });
  }
  return lineChart({
    title: opts.title,
    subtitle: opts.subtitle,
    xLabel: `seconds into the run (accepted at; ${opts.bucketMs / 1000} s buckets)`,
    yLabel: 'accepted → WeCom received, ms',
    series,
  });
}

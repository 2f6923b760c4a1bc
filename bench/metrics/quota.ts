/**
 * SPEC §7: quota utilisation — delivered ÷ allowed per window, with 0 over-quota errcodes (45009) and 0 silent
 * drops → ≥ 0.95, under the simulator's strict readings (every limit counted in rolling windows, userids
 * case-insensitive). Also printed: the most any rolling window held, against WeCom's own limit.
 *
 * Both clocks are shrunk alike: the gateway (`runtime.windows`) and the simulator (`simulator.windows`) run on
 * 8-second "minutes", so a backlog WeCom would spread over minutes plays out in seconds (the logic is the same,
 * only scaled, as in test/integration/sender/quota.test.ts); not shorter, see WINDOW_MS (on 2-second minutes a
 * busy 2-core machine's event-loop stalls even made a send late enough to lose 2 messages, while WeCom's real
 * minute leaves 5 s). For each case a backlog of ~5.5 windows' quota is
 * submitted at once; per window, "delivered" is what reached the simulator's inboxes in that window (by
 * `receivedAt`, the simulator's own clock — the one WeCom enforces its limits with) and "allowed" is the gateway's
 * effective limit for the lane used: ⌊(1 − safetyMargin) × limit⌋ for `high`, × normalShare (0.8) for `normal`
 * (lib/sender `effectiveLimit`). Averaged over full windows: the first window (the backlog arrives mid-window)
 * and the last one (the backlog runs out) are excluded.
 *
 * - per member: one member, WeCom limit 30/min; member A on the high lane (allowed 24), member B on the normal
 *   lane (allowed 19), concurrently, app limits far away;
 * - per app: perMinute 50 on gateway and simulator; app `ops` on the high lane (allowed 40), app `bulk` on the
 *   normal lane (allowed 32), each message to a different member so member limits never bind;
 * - per group robot: WeCom's 20 a minute per robot (refused with 45009 beyond); robot `oncall` on the high lane
 *   (allowed 16), robot `digest` on the normal lane (allowed 12), each robot's group inbox counted.
 */
import type { GatewayConfig } from '#lib/config/index.js';
import { QUOTA_DEFAULTS, ROBOT_QUOTA_DEFAULTS } from '#lib/config/index.js';
import { effectiveLimit, robotQuota } from '#lib/quota/index.js';
import { queueDepth } from '#local/harness/sender.js';
import { maxInRollingWindow } from '#local/harness/windows.js';
import { type BenchGateway, startBenchGateway } from '../lib/gateway.js';
import type { BenchContext, Metric, Row } from '../lib/harness.js';
import { fmt, mapLimit, msToWindowEnd, round, sleep, waitUntil } from '../lib/harness.js';
import { textMessage } from '../lib/http.js';

/**
 * The bench's "minute". A slot (a member's, or an app call a copy holds) may be used at most half of what the margin
 * absorbs late: (30 − 24) × the member's pace ÷ 2, (50 − 40) × the app's pace ÷ 2 — 0.5 s on 4-second minutes, less
 * than the stack takes to turn a backlog of a few hundred fresh messages into held copies on 2 high-lane containers,
 * so the first copies came back after their slots and a window stood partly idle (0.89–1.00 per member over the
 * day's runs, 0.81 per app); 1 s on 8-second ones; 5 s on WeCom's real minute.
 */
const WINDOW_MS = 8_000;

function scaled(windowMs: number) {
  const windows = { minuteMs: windowMs, hourMs: 60 * windowMs, dayMs: 86_400_000 };
  const runtime = {
    windows: { ...windows, dayOffsetMs: 0 },
    // SQS delays are whole seconds: a copy holding a slot arrives within half a second of it and waits the rest.
    slotWaitMs: 1_500,
    deferJitterSeconds: 0,
    retry: { baseSeconds: 1, capSeconds: 1 },
  };
  return { windows, runtime };
}

/** Backlog = this many windows' worth of the allowed quota. */
const BACKLOG_WINDOWS = 5.5;
const TARGET = 0.95;

type Quota = GatewayConfig['apps'][string]['quota'];

interface Stream {
  label: string;
  app: string;
  /** Messages to this group robot instead of the app's members (`member` is then unused). */
  robot?: string;
  priority: 'high' | 'normal';
  allowed: number;
  /** Recipient of message i. */
  member: (i: number) => string;
  count: number;
  /** WeCom's own limit for what is counted (member or app calls per minute). */
  wecomLimit: number;
}

interface StreamResult {
  label: string;
  allowed: number;
  wecomLimit: number;
  submitted: number;
  delivered: number;
  perWindow: number[];
  fullWindows: number[];
  utilisation: number;
  minUtilisation: number;
  maxPerWindow: number;
  /** The most any rolling window held (what WeCom's limit is about under the strict reading). */
  maxRolling: number;
  /** Pauses between consecutive arrivals longer than two of the lane's paces: where the line stood idle. */
  idle: { count: number; totalMs: number; longestMs: number; spanMs: number };
}

export const quotaUtilisation: Metric = {
  id: 'quota',
  title: 'quota utilisation with 0 over-quota errcodes and 0 silent drops',
  async run(ctx) {
    const quota: Quota = { ...QUOTA_DEFAULTS };
    const member = await runCase(ctx, 'per-member', WINDOW_MS, {}, {}, [
      {
        label: 'per member, high lane',
        app: 'ops',
        priority: 'high',
        allowed: effectiveLimit(quota.perMemberPerMinute, quota, 'high'),
        member: () => 'solo-high',
        count: 0,
        wecomLimit: quota.perMemberPerMinute,
      },
      {
        label: 'per member, normal lane',
        app: 'ops',
        priority: 'normal',
        allowed: effectiveLimit(quota.perMemberPerMinute, quota, 'normal'),
        member: () => 'solo-normal',
        count: 0,
        wecomLimit: quota.perMemberPerMinute,
      },
    ]);
    const appQuota: Quota = { ...QUOTA_DEFAULTS, perMinute: 50 };
    const app = await runCase(
      ctx,
      'per-app',
      WINDOW_MS,
      { apps: ['ops', 'bulk'], quota: { perMinute: appQuota.perMinute } },
      { perAppPerMinute: appQuota.perMinute },
      [
        {
          label: 'per app, high lane',
          app: 'ops',
          priority: 'high',
          allowed: effectiveLimit(appQuota.perMinute, appQuota, 'high'),
          member: (i) => `pa${i}`,
          count: 0,
          wecomLimit: appQuota.perMinute,
        },
        {
          label: 'per app, normal lane',
          app: 'bulk',
          priority: 'normal',
          allowed: effectiveLimit(appQuota.perMinute, appQuota, 'normal'),
          member: (i) => `pb${i}`,
          count: 0,
          wecomLimit: appQuota.perMinute,
        },
      ],
    );

    const robotLimits = robotQuota(ROBOT_QUOTA_DEFAULTS);
    const robot = await runCase(ctx, 'per-robot', WINDOW_MS, { robots: ['oncall', 'digest'] }, {}, [
      {
        label: 'per group robot, high lane',
        app: 'ops',
        robot: 'oncall',
        priority: 'high',
        allowed: effectiveLimit(robotLimits.perMemberPerMinute, robotLimits, 'high'),
        member: () => '',
        count: 0,
        wecomLimit: ROBOT_QUOTA_DEFAULTS.perMinute,
      },
      {
        label: 'per group robot, normal lane',
        app: 'ops',
        robot: 'digest',
        priority: 'normal',
        allowed: effectiveLimit(robotLimits.perMemberPerMinute, robotLimits, 'normal'),
        member: () => '',
        count: 0,
        wecomLimit: ROBOT_QUOTA_DEFAULTS.perMinute,
      },
    ]);

    const rows: Row[] = [];
    const notes: string[] = [];
    for (const c of [member, app, robot]) {
      for (const s of c.streams) {
        const ok =
          s.utilisation >= TARGET && c.rateLimited === 0 && c.drops === 0 && s.maxRolling <= s.wecomLimit;
        rows.push({
          metric: `quota utilisation, ${s.label} (strict readings)`,
          measured: `${fmt(s.utilisation)} (${fmt(s.utilisation * s.allowed, 1)}/${s.allowed} per window; most in a rolling window ${s.maxRolling}/${s.wecomLimit}; 45009: ${c.rateLimited}, drops: ${c.drops})`,
          target: '≥ 0.95, 0 × 45009, 0 drops',
          pass: ok,
          value: round(s.utilisation),
        });
        notes.push(
          `quota ${s.label}: ${s.submitted} messages, allowed ${s.allowed}/window (WeCom ${s.wecomLimit}), delivered per window [${s.perWindow.join(', ')}], full windows used: ${s.fullWindows.length}, min ${fmt(s.minUtilisation)}, max delivered in a fixed window ${s.maxPerWindow}, in a rolling one ${s.maxRolling}, DLQ ${c.dlq}; arrivals more than two paces apart: ${s.idle.count}, ${s.idle.totalMs} ms of ${s.idle.spanMs} ms idle (longest ${s.idle.longestMs} ms).`,
        );
      }
    }
    return {
      rows,
      details: { backlogWindows: BACKLOG_WINDOWS, cases: { member, app, robot } },
      notes,
    };
  },
};

async function runCase(
  ctx: BenchContext,
  name: string,
  windowMs: number,
  gatewayOpts: { apps?: string[]; quota?: Partial<Quota>; robots?: string[] },
  simLimits: Record<string, number>,
  streams: Stream[],
): Promise<{
  windowMs: number;
  streams: StreamResult[];
  rateLimited: number;
  drops: number;
  dlq: number;
  elapsedMs: number;
}> {
  const { windows, runtime } = scaled(windowMs);
  const gw: BenchGateway = await startBenchGateway({
    ...gatewayOpts,
    runtime,
    simulator: { windows, limits: simLimits, readings: 'strict' },
  });
  try {
    const sim = gw.stack.simulator;
    if (!sim) throw new Error('no simulator');
    for (const s of streams) s.count = Math.ceil(s.allowed * BACKLOG_WINDOWS);
    // Submit right after a window boundary so the first (excluded) window is nearly full-length too.
    await sleep(msToWindowEnd(windowMs) + 20);
    const started = Date.now();
    const batches = streams.flatMap((s) => {
      const content = (i: number) => `${name} ${ctx.runId} ${s.label} ${i}`;
      const msgs = Array.from({ length: s.count }, (_, i) =>
        s.robot !== undefined
          ? { robot: s.robot, priority: s.priority, msgtype: 'text', text: { content: content(i) } }
          : { ...textMessage(content(i), s.member(i), { priority: s.priority }), app: s.app },
      );
      const chunks: unknown[][] = [];
      for (let i = 0; i < msgs.length; i += 100) chunks.push(msgs.slice(i, i + 100));
      return chunks;
    });
    await mapLimit(batches, 4, async (messages) => {
      const res = await gw.api.post('/v1/messages/batch', { messages });
      if (res.status !== 207) throw new Error(`batch answered ${res.status}`);
    });
    const total = streams.reduce((n, s) => n + s.count, 0);
    const inboxOf = (s: Stream): { receivedAt: number }[] => {
      if (s.robot !== undefined) return sim.groupInbox(s.robot);
      const members = new Set(Array.from({ length: s.count }, (_, i) => s.member(i)));
      return [...members].flatMap((m) => sim.inbox(m));
    };
    ctx.log(
      `${name}: ${total} messages submitted; waiting for delivery (~${Math.ceil(BACKLOG_WINDOWS + 1)} windows)`,
    );
    const done = await waitUntil(
      () => streams.every((s) => inboxOf(s).length >= s.count),
      (BACKLOG_WINDOWS + 12) * windowMs,
      100,
    );
    const elapsedMs = Date.now() - started;
    if (!done) ctx.log(`${name}: not everything arrived within the wait; figures cover what did`);
    const stats = sim.stats();
    const results = streams.map((s): StreamResult => {
      const inbox = inboxOf(s);
      const byWindow = new Map<number, number>();
      for (const m of inbox) {
        const w = Math.floor(m.receivedAt / windowMs);
        byWindow.set(w, (byWindow.get(w) ?? 0) + 1);
      }
      const ids = [...byWindow.keys()];
      const first = Math.min(...ids);
      const last = Math.max(...ids);
      const perWindow = Array.from({ length: last - first + 1 }, (_, k) => byWindow.get(first + k) ?? 0);
      const fullWindows = perWindow.slice(1, -1);
      const utils = fullWindows.map((n) => n / s.allowed);
      return {
        label: s.label,
        allowed: s.allowed,
        wecomLimit: s.wecomLimit,
        submitted: s.count,
        delivered: inbox.length,
        perWindow,
        fullWindows,
        utilisation: utils.length ? utils.reduce((a, b) => a + b, 0) / utils.length : Number.NaN,
        minUtilisation: utils.length ? Math.min(...utils) : Number.NaN,
        maxPerWindow: Math.max(...perWindow),
        // One message is one call to one member: per member or per app, its arrivals are what WeCom counts.
        maxRolling: maxInRollingWindow(
          inbox.map((m) => m.receivedAt),
          windowMs,
        ),
        idle: idleOf(
          inbox.map((m) => m.receivedAt),
          (2 * windowMs) / s.allowed,
        ),
      };
    });
    return {
      windowMs,
      streams: results,
      rateLimited: stats.byErrcode['45009'] ?? 0,
      drops: sim.drops().length,
      dlq: (await queueDepth(gw.stack, 'high-dlq')) + (await queueDepth(gw.stack, 'normal-dlq')),
      elapsedMs,
    };
  } finally {
    await gw.stop();
  }
}

/** Pauses between consecutive arrivals longer than `thresholdMs` (the line stood idle in them). */
function idleOf(times: readonly number[], thresholdMs: number): StreamResult['idle'] {
  const sorted = [...times].sort((a, b) => a - b);
  let count = 0;
  let totalMs = 0;
  let longestMs = 0;
  for (let i = 1; i < sorted.length; i++) {
    const gap = (sorted[i] as number) - (sorted[i - 1] as number);
    longestMs = Math.max(longestMs, gap);
    if (gap > thresholdMs) {
      count++;
      totalMs += gap;
    }
  }
  const spanMs = sorted.length ? (sorted.at(-1) as number) - (sorted[0] as number) : 0;
  return { count, totalMs, longestMs, spanMs };
}

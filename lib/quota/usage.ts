import type { QuotaConfig } from '#lib/config/index.js';
import { COUNTER, callsSpec, memberSpec, personTimesSpec } from './counters.js';
import {
  bucketMsOf,
  type CounterSpec,
  type CounterStates,
  emptyPool,
  type Pool,
  type PoolState,
  type QuotaKey,
  usedInMinute,
  usedInWindow,
} from './slots.js';
import { effectiveLimit, type QuotaWindows, WECOM_WINDOWS } from './windows.js';

/** One of an app's rolling windows, as `GET /v1/apps/{app}` shows it. */
export interface QuotaUsage {
  /** `app-minute` and `app-hour` count message/send calls; `app-day` person-times (one per person reached). */
  window: 'app-minute' | 'app-hour' | 'app-day' | 'robot-minute';
  /** WeCom's limit as configured (`quota.perMinute`, `perHour`, `perDay`). */
  limit: number;
  /** ⌊(1 − safetyMargin) × limit⌋: what the gateway allows itself, all of it for `high`; `normal` gets its share. */
  allowed: number;
  /**
   * Used in the rolling window that ends now, slots reserved ahead included. The minute's figure is an upper bound
   * (lib/quota `usedInMinute`).
   */
  used: number;
  /**
   * When everything counted in `used` has left its rolling window (now, when nothing is): the windows roll, there
   * is no fixed reset.
   */
  resetsAtMs: number;
}

/** Port: reads one quota item (lib/store DynamoQuotaStore). */
export interface QuotaReader {
  read(key: QuotaKey): Promise<CounterStates>;
}

const POOLS: readonly Pool[] = ['n', 'h'];

/**
 * The app-level quota use for status endpoints (`GET /v1/apps/{app}`): per window, WeCom's limit, what the gateway
 * allows itself and what it used. One consistent read of the app's quota item.
 *
 * @example const usage = await new QuotaUsageReader(quotaStore).usage('ops', config.apps.ops.quota, Date.now());
 */
export class QuotaUsageReader {
  constructor(
    private readonly store: QuotaReader,
    private readonly windows: QuotaWindows = WECOM_WINDOWS,
  ) {}

  async usage(app: string, quota: QuotaConfig, nowMs: number): Promise<QuotaUsage[]> {
    const state = await this.store.read({ app, kind: 'app' });
    const w = this.windows;
    const pools = (c: string) => state[c] ?? { n: emptyPool(), h: emptyPool() };
    const sum = (f: (pool: Pool) => number) => POOLS.reduce((n, p) => n + f(p), 0);
    const calls = { spec: callsSpec(quota, w), pools: pools(COUNTER.calls) };
    const day = { spec: personTimesSpec(quota, w), pools: pools(COUNTER.personTimes) };
    const allowed = (limit: number) => ({ limit, allowed: effectiveLimit(limit, quota, 'high') });
    return [
      {
        window: 'app-minute',
        ...allowed(quota.perMinute),
        used: sum((p) => usedInMinute(calls.pools[p], calls.spec, p, w.minuteMs, nowMs)),
        resetsAtMs: Math.max(
          nowMs,
          ...POOLS.map((p) => lastPacedSlot(calls.pools[p], calls.spec, p) + w.minuteMs),
        ),
      },
      {
        window: 'app-hour',
        ...allowed(quota.perHour),
        used: sum((p) => usedInWindow(calls.pools[p], calls.spec, nowMs)),
        resetsAtMs: loggedUntil(calls.pools, calls.spec, nowMs),
      },
      {
        window: 'app-day',
        ...allowed(quota.perDay),
        used: sum((p) => usedInWindow(day.pools[p], day.spec, nowMs)),
        resetsAtMs: loggedUntil(day.pools, day.spec, nowMs),
      },
    ];
  }

  /**
   * A member's rolling minute (a group robot's: lib/quota robots.ts), as `GET /v1/robots/{robot}` shows it: WeCom's
   * limit, what the gateway allows itself and the messages in the minute that ends now (slots reserved ahead
   * included). One consistent read of the member's item.
   *
   * @example await reader.memberMinute('robot:oncall', ROBOT_MEMBER, robotQuota(config.robots.oncall.quota), Date.now())
   */
  async memberMinute(app: string, member: string, quota: QuotaConfig, nowMs: number): Promise<QuotaUsage> {
    const state = await this.store.read({ app, kind: 'member', member });
    const w = this.windows;
    const spec = memberSpec(quota, w);
    const pools = state[COUNTER.member] ?? { n: emptyPool(), h: emptyPool() };
    return {
      window: 'robot-minute',
      limit: quota.perMemberPerMinute,
      allowed: effectiveLimit(quota.perMemberPerMinute, quota, 'high'),
      used: POOLS.reduce((n, p) => n + usedInMinute(pools[p], spec, p, w.minuteMs, nowMs), 0),
      resetsAtMs: Math.max(nowMs, ...POOLS.map((p) => lastPacedSlot(pools[p], spec, p) + w.minuteMs)),
    };
  }
}

/** The last slot a paced pool handed out (its next free one less a pace), or -Infinity. */
function lastPacedSlot(state: PoolState, spec: CounterSpec, pool: Pool): number {
  const pace = spec.pools[pool].paceMs;
  return state.tat !== undefined && pace !== undefined && Number.isFinite(pace)
    ? state.tat - pace
    : Number.NEGATIVE_INFINITY;
}

/** When the latest bucket a sliding log counted has left its window. */
function loggedUntil(pools: Record<Pool, PoolState>, spec: CounterSpec, nowMs: number): number {
  const bucketMs = bucketMsOf(spec);
  const ends = POOLS.map((p) => pools[p].last).filter((b): b is number => b !== undefined);
  return Math.max(nowMs, ...ends.map((b) => (b + 1) * bucketMs + spec.window.lengthMs));
}

import type { QuotaConfig } from '#lib/config/index.js';
import type { Priority } from '#lib/messages/index.js';
import type { QuotaStore } from '#lib/store/index.js';
import { KeyedQueue } from '#lib/util/index.js';

/** Window lengths. WeCom's are fixed; tests shrink them (both here and in the simulator) to run in seconds. */
export interface QuotaWindows {
  minuteMs: number;
  hourMs: number;
  dayMs: number;
  /** WeCom's day starts at midnight China Standard Time (UTC+8). */
  dayOffsetMs: number;
}

export const WECOM_WINDOWS: QuotaWindows = {
  minuteMs: 60_000,
  hourMs: 3_600_000,
  dayMs: 86_400_000,
  dayOffsetMs: 8 * 3_600_000,
};

export type QuotaScope = 'app-minute' | 'app-hour' | 'app-day' | 'member-minute' | 'member-hour';

export type QuotaDecision =
  | { ok: true }
  | {
      ok: false;
      scope: QuotaScope;
      /** When the full window frees up (epoch ms); Infinity when the demand exceeds a whole window's limit. */
      retryAtMs: number;
    };

export interface QuotaDemand {
  app: string;
  quota: QuotaConfig;
  priority: Priority;
  /** Individual userids the message goes to (per-member limits); parties/tags/@all are not expandable here. */
  members: readonly string[];
  /** Person-times charged against the daily quota. */
  personTimes: number;
}

/** The limit the gateway enforces: (1 − safetyMargin) × WeCom's, and for `normal` only its share of that. */
export function effectiveLimit(limit: number, quota: QuotaConfig, priority: Priority): number {
  const full = Math.floor(limit * (1 - quota.safetyMargin));
  return Math.max(1, priority === 'high' ? full : Math.floor(full * quota.normalShare));
}

/**
 * App-level counters are reserved in blocks and consumed from memory, so a busy sender pays about one DynamoDB
 * request per block, not per message. Blocks are small against the limit (≤ 1%) so reservations held by idle
 * containers at a window's end cost little utilisation. Member counters are reserved one by one: their limits
 * (30/min) are too small to split.
 */
const blockSize = (limit: number, cap: number): number => Math.max(1, Math.min(cap, Math.floor(limit / 100)));

/**
 * Guard band at the end of every window. A send reserved in a window's last moments would reach WeCom in the next
 * window, where WeCom counts it on top of that window's full quota (up to twice the limit at the boundary).
 * No reservation is made in the last `guardMs` of a window: the caller waits for the next window instead
 * (at most this long), so every send charged to a window arrives inside it as long as it takes less than
 * `guardMs` to reach WeCom. It costs guardMs / 60 s ≈ 0.4% of the minute quota.
 */
export const DEFAULT_WINDOW_GUARD_MS = 250;

export class QuotaGuard {
  /** Locally held, already reserved units: key → remaining. */
  private readonly held = new Map<string, number>();
  /** Per-key turns: concurrent records of one batch share a block instead of each reserving their own. */
  private readonly turns = new KeyedQueue<string>();

  constructor(
    private readonly store: QuotaStore,
    private readonly windows: QuotaWindows = WECOM_WINDOWS,
    private readonly now: () => number = Date.now,
    private readonly guardMs = DEFAULT_WINDOW_GUARD_MS,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  /**
   * Reserves everything one send needs, or nothing: on a refusal every reservation taken so far is given back
   * and the caller learns when the refusing window ends.
   */
  async acquire(d: QuotaDemand): Promise<QuotaDecision> {
    const w = this.windows;
    for (let attempt = 0; ; attempt++) {
      // Hour and day boundaries are minute boundaries too, so the minute's guard band covers them all.
      const untilNextMinute = w.minuteMs - (this.now() % w.minuteMs);
      if (untilNextMinute <= this.guardMs) await this.sleep(untilNextMinute + 1);
      const now = this.now();
      const decision = await this.acquireAt(d, now);
      // Reserving can take a while (a busy key is served in turn). If the window's guard band began meanwhile, the
      // send would land in the next window while charged to this one: charge the next window instead. What was
      // reserved in this window lapses with it.
      const minuteEnd = (Math.floor(now / w.minuteMs) + 1) * w.minuteMs;
      if (!decision.ok || this.now() < minuteEnd - this.guardMs || attempt >= 2) return decision;
    }
  }

  /**
   * The app's counters in the windows holding `now` (for `GET /v1/apps/{app}`): WeCom's limit as configured, the
   * share the gateway allows itself (for `high`), and what is reserved so far.
   */
  async usage(
    app: string,
    quota: QuotaConfig,
    now: number,
  ): Promise<{ window: QuotaScope; limit: number; allowed: number; used: number; resetsAtMs: number }[]> {
    const w = this.windows;
    const minute = Math.floor(now / w.minuteMs);
    const hour = Math.floor(now / w.hourMs);
    const day = Math.floor((now + w.dayOffsetMs) / w.dayMs);
    const windows = [
      { window: 'app-minute', index: minute, limit: quota.perMinute, resetsAtMs: (minute + 1) * w.minuteMs },
      { window: 'app-hour', index: hour, limit: quota.perHour, resetsAtMs: (hour + 1) * w.hourMs },
      { window: 'app-day', index: day, limit: quota.perDay, resetsAtMs: (day + 1) * w.dayMs - w.dayOffsetMs },
    ] as const;
    return Promise.all(
      windows.map(async (x) => ({
        window: x.window,
        limit: x.limit,
        allowed: effectiveLimit(x.limit, quota, 'high'),
        used: await this.store.counter(app, x.window, x.index),
        resetsAtMs: x.resetsAtMs,
      })),
    );
  }

  private async acquireAt(d: QuotaDemand, now: number): Promise<QuotaDecision> {
    const w = this.windows;
    const minute = Math.floor(now / w.minuteMs);
    const hour = Math.floor(now / w.hourMs);
    const day = Math.floor((now + w.dayOffsetMs) / w.dayMs);
    const app = [
      {
        scope: 'app-minute',
        window: minute,
        amount: 1,
        limit: d.quota.perMinute,
        endMs: (minute + 1) * w.minuteMs,
      },
      { scope: 'app-hour', window: hour, amount: 1, limit: d.quota.perHour, endMs: (hour + 1) * w.hourMs },
      {
        scope: 'app-day',
        window: day,
        amount: d.personTimes,
        limit: d.quota.perDay,
        endMs: (day + 1) * w.dayMs - w.dayOffsetMs,
      },
    ] as const;
    const taken: { scope: QuotaScope; window: number; amount: number; limit: number }[] = [];
    for (const c of app) {
      const limit = effectiveLimit(c.limit, d.quota, d.priority);
      if (await this.take(d.app, c.scope, c.window, c.amount, limit, d.priority, c.endMs)) {
        taken.push({ ...c, limit });
        continue;
      }
      for (const t of taken) this.giveBack(d.app, t.scope, t.window, t.amount, d.priority);
      // More than a whole window holds (e.g. a fan-out beyond the daily person-times): waiting cannot help.
      return { ok: false, scope: c.scope, retryAtMs: c.amount > limit ? Number.POSITIVE_INFINITY : c.endMs };
    }
    const memberDecision = await this.takeMembers(d, minute, hour);
    if (!memberDecision.ok)
      for (const t of taken) this.giveBack(d.app, t.scope, t.window, t.amount, d.priority);
    return memberDecision;
  }

  private async takeMembers(d: QuotaDemand, minute: number, hour: number): Promise<QuotaDecision> {
    if (d.members.length === 0) return { ok: true };
    const w = this.windows;
    const minuteOfHour = minute % Math.max(1, Math.round(w.hourMs / w.minuteMs));
    const limits = {
      perMinute: effectiveLimit(d.quota.perMemberPerMinute, d.quota, d.priority),
      perHour: effectiveLimit(d.quota.perMemberPerHour, d.quota, d.priority),
    };
    const expiresAtMs = (hour + 2) * w.hourMs;
    const granted: string[] = [];
    let refused: 'minute' | 'hour' | undefined;
    // Bounded parallelism: a message to 1,000 users must not open 1,000 concurrent requests.
    for (let i = 0; i < d.members.length && !refused; i += 25) {
      const slice = d.members.slice(i, i + 25);
      const verdicts = await Promise.all(
        slice.map((u) => this.store.reserveMember(d.app, u, hour, minuteOfHour, limits, expiresAtMs)),
      );
      verdicts.forEach((v, j) => {
        if (v === 'ok') granted.push(slice[j] as string);
        else if (refused !== 'hour') refused = v;
      });
    }
    if (!refused) return { ok: true };
    await Promise.all(granted.map((u) => this.store.releaseMember(d.app, u, hour, minuteOfHour)));
    return refused === 'hour'
      ? { ok: false, scope: 'member-hour', retryAtMs: (hour + 1) * w.hourMs }
      : { ok: false, scope: 'member-minute', retryAtMs: (minute + 1) * w.minuteMs };
  }

  private async take(
    app: string,
    scope: QuotaScope,
    window: number,
    amount: number,
    limit: number,
    priority: Priority,
    endMs: number,
  ): Promise<boolean> {
    const key = `${app}#${scope}#${window}#${priority}`;
    return this.turns.run(key, () => this.takeSerialized(key, app, scope, window, amount, limit, endMs));
  }

  private async takeSerialized(
    key: string,
    app: string,
    scope: QuotaScope,
    window: number,
    amount: number,
    limit: number,
    endMs: number,
  ): Promise<boolean> {
    const held = this.held.get(key) ?? 0;
    if (held >= amount) {
      this.held.set(key, held - amount);
      return true;
    }
    this.dropStale(scope, window);
    const want = Math.max(amount, blockSize(limit, scope === 'app-day' ? 100 : 25));
    const expiresAtMs = endMs + this.windows.minuteMs;
    if (await this.store.reserve(app, scope, window, want, limit, expiresAtMs)) {
      // Re-read: a giveBack() may have added units while the reserve was in flight.
      this.held.set(key, (this.held.get(key) ?? 0) + want - amount);
      return true;
    }
    // The block did not fit; the exact amount may still fit in what is left of the window.
    if (want > amount && (await this.store.reserve(app, scope, window, amount, limit, expiresAtMs)))
      return true;
    return false;
  }

  private giveBack(app: string, scope: QuotaScope, window: number, amount: number, priority: Priority): void {
    const key = `${app}#${scope}#${window}#${priority}`;
    this.held.set(key, (this.held.get(key) ?? 0) + amount);
  }

  /** Forgets reservations of past windows of this scope (they lapsed with their window). */
  private dropStale(scope: QuotaScope, window: number): void {
    for (const key of this.held.keys()) {
      const parts = key.split('#');
      if (parts[1] === scope && Number(parts[2]) < window) this.held.delete(key);
    }
  }
}

import type { QuotaWindows } from '#lib/quota/index.js';
import type { AppPause, PauseStore } from '#lib/store/index.js';

/** What the sender may do for an app right now. */
export type Gate =
  /** Send. */
  | { state: 'closed' }
  /** Do not send before `retryAtMs` (the pause, or another container's probe, keeps the app waiting). */
  | { state: 'paused'; pause: AppPause; retryAtMs: number }
  /** Send this one message as the probe: its outcome ends the pause or lengthens it (`probeSucceeded`, `paused`). */
  | { state: 'probe'; pause: AppPause };

export interface PauseCacheOptions {
  /** How long a container trusts what it read (default 5 s). */
  refreshMs?: number;
  /** How long a probe keeps the app to itself (default 30 s: longer than a send waiting for a token and for WeCom). */
  probeLeaseMs?: number;
  /**
   * A message that finds another container's probe in flight looks again after this long, not at the lease's end:
   * a probe answers within seconds, the lease only bounds one that crashed (default 5 s).
   */
  probeRecheckMs?: number;
  now?: () => number;
}

/**
 * Which apps are paused (lib/store `AppPause`). Read from DynamoDB at most once per `refreshMs` per app and
 * container, so checking costs almost nothing per message, while a pause seen by one container reaches the others
 * within seconds (until then, each learns it from WeCom at the price of one refused call). After a pause, one
 * probe at a time, across containers, sends; everybody else keeps waiting until it tells.
 */
export class PauseCache {
  private readonly local = new Map<
    string,
    { pause: AppPause | undefined; checkedAtMs: number; seq: number }
  >();
  private seq = 0;
  private readonly reads = new Map<string, Promise<void>>();
  /** Probe leases this container holds or is claiming, per app. */
  private readonly probing = new Map<string, number>();
  private readonly refreshMs: number;
  private readonly probeLeaseMs: number;
  private readonly probeRecheckMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: PauseStore,
    opts: PauseCacheOptions = {},
  ) {
    this.refreshMs = opts.refreshMs ?? 5_000;
    this.probeLeaseMs = opts.probeLeaseMs ?? 30_000;
    this.probeRecheckMs = opts.probeRecheckMs ?? 5_000;
    this.now = opts.now ?? Date.now;
  }

  /**
   * May this message be sent? `configHash`: the app's configuration now; a pause that came with another one
   * (the operator changed the secret) is probed at once.
   */
  async gate(app: string, configHash?: string): Promise<Gate> {
    const pause = await this.current(app);
    if (!pause) return { state: 'closed' };
    const now = this.now();
    const changedConfig =
      pause.configHash !== undefined && configHash !== undefined && pause.configHash !== configHash;
    if (pause.untilMs > now && !changedConfig) return { state: 'paused', pause, retryAtMs: pause.untilMs };
    const localLease = this.probing.get(app) ?? 0;
    const lease = Math.max(localLease, pause.probeUntilMs ?? 0);
    if (lease > now) return { state: 'paused', pause, retryAtMs: Math.min(lease, now + this.probeRecheckMs) };
    // Claimed synchronously first, so the other records of this batch wait instead of racing for the probe.
    const leaseUntil = now + this.probeLeaseMs;
    this.probing.set(app, leaseUntil);
    // A changed configuration may probe before the pause's end: claim it as if the pause had ended now.
    const claimAt = Math.max(now, changedConfig ? pause.untilMs : now);
    if (await this.store.claimProbe(app, pause.sinceMs, leaseUntil, claimAt)) {
      return { state: 'probe', pause: { ...pause, probeUntilMs: leaseUntil } };
    }
    this.probing.delete(app);
    // Someone else probes, or the pause changed: read again and wait for the probe's lease at most.
    await this.refresh(app);
    const fresh = this.local.get(app)?.pause;
    if (!fresh) return { state: 'closed' };
    const probing = Math.min(fresh.probeUntilMs ?? 0, now + this.probeRecheckMs);
    const retryAtMs = Math.max(fresh.untilMs, probing, now + 1_000);
    return { state: 'paused', pause: fresh, retryAtMs };
  }

  /** The app's pause as this container knows it (read again when older than `refreshMs`, or `fresh`). */
  async current(app: string, opts: { fresh?: boolean } = {}): Promise<AppPause | undefined> {
    const entry = this.local.get(app);
    if (opts.fresh || !entry || this.now() - entry.checkedAtMs >= this.refreshMs) await this.refresh(app);
    return this.local.get(app)?.pause;
  }

  /** Writes a pause (from `nextPause`) and keeps it locally. */
  async paused(app: string, pause: AppPause): Promise<void> {
    this.probing.delete(app);
    this.local.set(app, { pause, checkedAtMs: this.now(), seq: ++this.seq });
    await this.store.put(app, pause);
  }

  /** The probe went through: the run of pauses is over. */
  async probeSucceeded(app: string, pause: AppPause): Promise<void> {
    this.probing.delete(app);
    this.local.set(app, { pause: undefined, checkedAtMs: this.now(), seq: ++this.seq });
    await this.store.clear(app, pause.sinceMs);
  }

  /** The probe ended without an answer about the cause (e.g. a timeout): the next caller probes. */
  async probeInconclusive(app: string, pause: AppPause): Promise<void> {
    this.probing.delete(app);
    await this.store.releaseProbe(app, pause.sinceMs);
  }

  private async refresh(app: string): Promise<void> {
    // The records of one batch ask at once, and one read answers them all.
    let read = this.reads.get(app);
    if (!read) {
      const at = this.now();
      const seq = ++this.seq;
      read = this.store
        .get(app)
        .then((pause) => {
          // A pause written by this container while the read was in flight is newer than what the read saw.
          const known = this.local.get(app);
          if (!known || known.seq < seq) this.local.set(app, { pause, checkedAtMs: at, seq });
        })
        .finally(() => this.reads.delete(app));
      this.reads.set(app, read);
    }
    await read;
  }
}

/**
 * How long the app waits after each error of a run. WeCom blocks for the limit's own period after 45009 ("按分钟
 * 拦截则被屏蔽60秒,按小时拦截则被屏蔽60分钟", per day: the rest of the natural day, https://developer.work.weixin.qq.com/
 * document/path/90454) and does not say which limit was hit, so the pause grows: a minute, 5 minutes, an hour, then
 * the rest of WeCom's day (midnight China Standard Time). Configuration errors are probed after 1, 2, 5, 10, then
 * every 15 minutes: soon after the operator's fix, rarely enough not to get the egress IP banned (40001).
 */
export interface PauseSchedule {
  /** The first pause after 45009; the next ones are 5× and 60× as long, then the rest of the day. */
  rateLimitFirstMs: number;
  /** Waits before each probe of a configuration error (the last repeats). */
  configStepsMs: readonly number[];
  /** Where WeCom's day ends (its length and offset). */
  windows: Pick<QuotaWindows, 'dayMs' | 'dayOffsetMs'>;
}

export const DEFAULT_CONFIG_STEPS_MS: readonly number[] = [60_000, 120_000, 300_000, 600_000, 900_000];

/** When WeCom's natural day holding `now` ends (epoch ms). */
export const dayEndOf = (now: number, w: PauseSchedule['windows']): number =>
  (Math.floor((now + w.dayOffsetMs) / w.dayMs) + 1) * w.dayMs - w.dayOffsetMs;

/**
 * The pause after an error of `kind` at `now`, given the app's current one: undefined when the current pause
 * already covers it (a send that started before the pause was known answered the same), else a longer pause
 * of the same run (the error came after the pause ended, from a probe) or the first pause of a new run.
 */
export function nextPause(
  current: AppPause | undefined,
  error: Pick<AppPause, 'kind' | 'reason' | 'errcode' | 'configHash'>,
  now: number,
  schedule: PauseSchedule,
): AppPause | undefined {
  const sameRun = current !== undefined && current.kind === error.kind;
  if (sameRun && current.untilMs > now) return undefined;
  const first = schedule.rateLimitFirstMs;
  // A 45009 long after the last pause of a run ended (no probe came in between) starts a new run.
  const continues = sameRun && (error.kind === 'config_error' || now - current.untilMs < 60 * first);
  const level = continues ? current.level + 1 : 0;
  const sinceMs = continues ? current.sinceMs : now;
  let untilMs: number;
  if (error.kind === 'rate_limited') {
    const dayEnd = dayEndOf(now, schedule.windows);
    const step = [first, 5 * first, 60 * first][level];
    // In the first hour of a day a 45009 cannot be yesterday's day block: another hour, not a whole day.
    const dayJustBegan = dayEnd - now > schedule.windows.dayMs - 60 * first;
    untilMs = step !== undefined ? Math.min(now + step, dayEnd) : dayJustBegan ? now + 60 * first : dayEnd;
  } else {
    const steps = schedule.configStepsMs;
    untilMs = now + (steps[Math.min(level, steps.length - 1)] ?? 60_000);
  }
  return {
    kind: error.kind,
    untilMs,
    sinceMs,
    level,
    reason: error.reason,
    ...(error.errcode !== undefined ? { errcode: error.errcode } : {}),
    ...(error.configHash !== undefined ? { configHash: error.configHash } : {}),
  };
}

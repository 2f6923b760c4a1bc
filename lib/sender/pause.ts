import type { PauseStore } from '#lib/store/index.js';

/**
 * Which apps WeCom has blocked (45009). Read from DynamoDB at most once per `refreshMs` per app and container,
 * so checking costs almost nothing per message, while a block seen by one container reaches the others within
 * seconds (until then, each learns it from WeCom at the price of one refused call).
 */
export class PauseCache {
  private readonly local = new Map<string, { untilMs: number; checkedAtMs: number }>();
  constructor(
    private readonly store: PauseStore,
    private readonly refreshMs = 5_000,
    private readonly now: () => number = Date.now,
  ) {}

  async pausedUntil(app: string): Promise<number | undefined> {
    const now = this.now();
    const entry = this.local.get(app);
    if (!entry || now - entry.checkedAtMs >= this.refreshMs) {
      const until = (await this.store.pausedUntil(app)) ?? 0;
      this.local.set(app, { untilMs: Math.max(until, entry?.untilMs ?? 0), checkedAtMs: now });
    }
    const until = this.local.get(app)?.untilMs ?? 0;
    return until > now ? until : undefined;
  }

  async pause(app: string, untilMs: number, reason: string): Promise<void> {
    const entry = this.local.get(app);
    if (entry && entry.untilMs >= untilMs) return;
    this.local.set(app, { untilMs, checkedAtMs: this.now() });
    await this.store.pause(app, untilMs, reason);
  }
}

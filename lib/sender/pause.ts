import type { PauseStore } from '#lib/store/index.js';
import { SingleFlight } from '#lib/util/index.js';

/**
 * Which apps WeCom has blocked (45009). Read from DynamoDB at most once per `refreshMs` per app and container,
 * so checking costs almost nothing per message, while a block seen by one container reaches the others within
 * seconds (until then, each learns it from WeCom at the price of one refused call).
 */
export class PauseCache {
  private readonly local = new Map<string, { untilMs: number; checkedAtMs: number }>();
  private readonly reads = new SingleFlight<string, void>();
  constructor(
    private readonly store: PauseStore,
    private readonly refreshMs = 5_000,
    private readonly now: () => number = Date.now,
  ) {}

  async pausedUntil(app: string): Promise<number | undefined> {
    const now = this.now();
    const entry = this.local.get(app);
    if (!entry || now - entry.checkedAtMs >= this.refreshMs) {
      // The records of one batch ask at once, and one read answers them all.
      await this.reads.run(app, () => this.refresh(app, now));
    }
    const until = this.local.get(app)?.untilMs ?? 0;
    return until > now ? until : undefined;
  }

  private async refresh(app: string, now: number): Promise<void> {
    const stored = (await this.store.pausedUntil(app)) ?? 0;
    // Read the entry after the await: a pause() seen meanwhile must not be overwritten by an older value.
    const known = this.local.get(app)?.untilMs ?? 0;
    this.local.set(app, { untilMs: Math.max(stored, known), checkedAtMs: now });
  }

  async pause(app: string, untilMs: number, reason: string): Promise<void> {
    const entry = this.local.get(app);
    if (entry && entry.untilMs >= untilMs) return;
    this.local.set(app, { untilMs, checkedAtMs: this.now() });
    await this.store.pause(app, untilMs, reason);
  }
}

import type { AppPause, PauseStore } from '#lib/store/index.js';

const roundTrip = () => new Promise<void>((resolve) => setImmediate(resolve));

/** In-memory PauseStore with the conditional semantics of DynamoPauseStore; counts calls. */
export class InMemoryPauseStore implements PauseStore {
  readonly pauses = new Map<string, AppPause>();
  readonly calls = { get: 0, put: 0, claimProbe: 0, releaseProbe: 0, clear: 0 };

  async get(app: string): Promise<AppPause | undefined> {
    this.calls.get++;
    await roundTrip();
    const p = this.pauses.get(app);
    return p ? { ...p } : undefined;
  }

  async put(app: string, pause: AppPause): Promise<void> {
    this.calls.put++;
    await roundTrip();
    const { probeUntilMs: _probe, ...rest } = pause;
    this.pauses.set(app, rest);
  }

  async claimProbe(app: string, sinceMs: number, leaseUntilMs: number, now: number): Promise<boolean> {
    this.calls.claimProbe++;
    await roundTrip();
    const p = this.pauses.get(app);
    if (!p || p.sinceMs !== sinceMs || p.untilMs > now || (p.probeUntilMs ?? 0) > now) return false;
    p.probeUntilMs = leaseUntilMs;
    return true;
  }

  async releaseProbe(app: string, sinceMs: number): Promise<void> {
    this.calls.releaseProbe++;
    await roundTrip();
    const p = this.pauses.get(app);
    if (p && p.sinceMs === sinceMs) delete p.probeUntilMs;
  }

  async clear(app: string, sinceMs: number): Promise<void> {
    this.calls.clear++;
    await roundTrip();
    if (this.pauses.get(app)?.sinceMs === sinceMs) this.pauses.delete(app);
  }
}

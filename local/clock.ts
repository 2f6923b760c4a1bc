/**
 * The local stack's clock: real time plus an offset a test (or `POST /__local/clock`) may move forward, so that a
 * message scheduled 20 minutes ahead is due now without waiting 20 minutes. The functions (lib/runtime `now`), the
 * release timers' emulation and the WeCom simulator all read it; the SQS emulator's delays keep real time.
 */
export class LocalClock {
  private offsetMs = 0;
  private readonly listeners = new Set<() => void>();

  readonly now = (): number => Date.now() + this.offsetMs;

  get offset(): number {
    return this.offsetMs;
  }

  /** Moves the clock `ms` forward; whoever waits on it (timers) looks again at once. */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`the clock only moves forward, by a finite ms (${ms})`);
    this.offsetMs += ms;
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` after every move; returns the way to stop. */
  onAdvance(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

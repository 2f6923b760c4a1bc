/** A manual clock for expiry logic: `sleep` advances it instead of waiting (after one event-loop turn). */
export function fakeClock(startMs = Date.parse('2026-12-01T08:00:07Z')) {
  let nowMs = startMs;
  return {
    now: () => nowMs,
    advance: (ms: number) => {
      nowMs += ms;
    },
    /** Advances the clock by `ms`, then yields so other callers run. */
    sleep: async (ms: number) => {
      nowMs += ms;
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
    /** Yields without moving the clock: waiters poll, but no lease or token ever runs out. */
    yieldOnly: () => new Promise<void>((resolve) => setImmediate(resolve)),
  };
}

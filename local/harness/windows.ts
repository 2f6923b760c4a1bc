/**
 * The most events any rolling window of `lengthMs` held, wherever it starts: what a limit counted in sliding
 * windows (the simulator's strict reading) is about. A window starting at an event is always among the fullest.
 *
 * @example maxInRollingWindow(sim.inbox('oncall').map((m) => m.receivedAt), 60_000) // ≤ 30 for WeCom
 */
export function maxInRollingWindow(times: readonly number[], lengthMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, end = 0; i < sorted.length; i++) {
    while (end < sorted.length && (sorted[end] as number) < (sorted[i] as number) + lengthMs) end++;
    best = Math.max(best, end - i);
  }
  return best;
}

/** The furthest ahead a message may be scheduled: 30 days. */
export const MAX_SCHEDULE_AHEAD_MS = 30 * 86_400_000;

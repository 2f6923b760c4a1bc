import { type QuietHoursRule, quietUntil } from './quiet-hours.js';
import { releaseOf } from './spread.js';
import type { Schedule } from './types.js';

/** What decides whether, and until when, a message waits (everything known at acceptance). */
export interface ScheduleInput {
  id: string;
  nowMs: number;
  /** The client's `send_at` (epoch ms); a time already past means now. */
  sendAtMs?: number;
  /** The quiet-hours rules that hold this message (lib/schedule `rulesFor`); none when it opted out. */
  quiet?: readonly QuietHoursRule[];
  /** The app's spread window (ms). */
  spreadMs: number;
}

/**
 * The schedule of a message, computed once at acceptance: undefined when it goes now; else when it is due (its
 * `send_at`, moved to the end of any quiet hours it falls in) and when it is released (spread).
 *
 * @example planSchedule({ id, nowMs, sendAtMs: nowMs + 3_600_000, spreadMs: 0 }) // { reason: 'send_at', … }
 */
export function planSchedule(o: ScheduleInput): Schedule | undefined {
  const asked = o.sendAtMs !== undefined && o.sendAtMs > o.nowMs ? o.sendAtMs : undefined;
  const wanted = asked ?? o.nowMs;
  const quietEnd = o.quiet && o.quiet.length > 0 ? quietUntil(o.quiet, wanted) : wanted;
  const dueMs = quietEnd > wanted ? quietEnd : asked;
  if (dueMs === undefined) return undefined;
  return {
    dueAt: new Date(dueMs).toISOString(),
    releaseAt: new Date(releaseOf(dueMs, o.spreadMs, o.id)).toISOString(),
    reason: quietEnd > wanted ? 'quiet_hours' : 'send_at',
  };
}

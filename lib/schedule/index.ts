/**
 * Scheduled sends and quiet hours (docs/scheduling.md): when an accepted message is due and released. Pure; the
 * timers that release it are lib/queue's (`ReleaseTimer`).
 */
export { planSchedule, type ScheduleInput } from './plan.js';
export {
  DEFAULT_HELD_PRIORITIES,
  minutesOf,
  type QuietHoursRule,
  quietUntil,
  rulesFor,
  WEEKDAYS,
  type Weekday,
} from './quiet-hours.js';
export { MAX_SCHEDULE_AHEAD_MS } from './send-at.js';
export { DEFAULT_SPREAD_SECONDS, releaseOf } from './spread.js';
export type { Schedule, ScheduleReason } from './types.js';
export { instantOf, isTimeZone, localAt } from './zoned.js';

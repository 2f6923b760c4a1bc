import { foldUserId, type Priority, type Recipients } from '#lib/messages/index.js';
import { addDays, instantOf, type LocalDate, localAt, weekdayOf } from './zoned.js';

/** Days a quiet window may start on, as the config names them. */
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/**
 * One quiet-hours rule of an app (`apps.<name>.quietHours`): messages of a held priority that would go inside the
 * window wait for its end. `start`/`end` are local wall times (`HH:MM`) in `timeZone`; a window whose end is not after
 * its start runs over midnight (`22:00`-`08:00`), an equal one lasts 24 hours. `days` are the days a window starts
 * on (default every day). `recipients`: the rule holds only messages naming one of them (default every message).
 */
export interface QuietHoursRule {
  timeZone: string;
  start: string;
  end: string;
  days?: readonly Weekday[];
  priorities?: readonly Priority[];
  recipients?: { touser?: readonly string[]; toparty?: readonly string[]; totag?: readonly string[] };
}

/** The priorities quiet hours hold when a rule names none: `high` passes. */
export const DEFAULT_HELD_PRIORITIES: readonly Priority[] = ['normal'];

const CLOCK = /^([01]\d|2[0-3]):([0-5]\d)$/;

/**
 * Minutes after midnight of a wall time `HH:MM` (00:00-23:59), or undefined.
 *
 * @example minutesOf('22:30') // 1350
 */
export function minutesOf(clock: string): number | undefined {
  const m = CLOCK.exec(clock);
  return m ? Number(m[1]) * 60 + Number(m[2]) : undefined;
}

/** The rules that hold a message of this priority to these recipients. */
export function rulesFor(
  rules: readonly QuietHoursRule[],
  message: { priority: Priority; recipients: Recipients },
): QuietHoursRule[] {
  return rules.filter((r) => {
    if (!(r.priorities ?? DEFAULT_HELD_PRIORITIES).includes(message.priority)) return false;
    if (!r.recipients) return true;
    const users = new Set((r.recipients.touser ?? []).map(foldUserId));
    const { touser, toparty, totag } = message.recipients;
    return (
      touser.some((u) => users.has(foldUserId(u)) || (u === '@all' && users.size > 0)) ||
      toparty.some((p) => r.recipients?.toparty?.includes(p)) ||
      totag.some((t) => r.recipients?.totag?.includes(t))
    );
  });
}

/** The end of the rule's window that `atMs` lies in (epoch ms), or undefined when it lies in none. */
function windowEndAt(rule: QuietHoursRule, atMs: number): number | undefined {
  const start = minutesOf(rule.start) as number;
  const end = minutesOf(rule.end) as number;
  const local = localAt(atMs, rule.timeZone);
  const today: LocalDate = { year: local.year, month: local.month, day: local.day };
  // A window that started yesterday may still run (22:00-08:00); one of today's may have begun.
  for (const day of [addDays(today, -1), today]) {
    if (rule.days && !rule.days.includes(WEEKDAYS[weekdayOf(day)] as Weekday)) continue;
    const from = instantOf(day, start, rule.timeZone);
    const until = instantOf(end > start ? day : addDays(day, 1), end, rule.timeZone);
    if (from <= atMs && atMs < until) return until;
  }
  return undefined;
}

/**
 * When a message that would go at `atMs` may go under these rules: `atMs` itself when no window holds it, else the
 * first instant outside every window (one window's end may lie in another rule's window).
 *
 * @example quietUntil([{ timeZone: 'Asia/Shanghai', start: '22:00', end: '08:00' }], Date.parse('2026-12-06T15:00:00Z'))
 * // Date.parse('2026-12-07T00:00:00Z'): 23:00 in Shanghai waits for 08:00
 */
export function quietUntil(rules: readonly QuietHoursRule[], atMs: number): number {
  let t = atMs;
  // Each step moves past one window; rules that chain windows end within a few steps.
  for (let step = 0; step < 16; step++) {
    const ends = rules.map((r) => windowEndAt(r, t)).filter((e): e is number => e !== undefined);
    if (ends.length === 0) return t;
    t = Math.max(...ends);
  }
  return t;
}

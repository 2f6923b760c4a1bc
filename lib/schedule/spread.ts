import { createHash } from 'node:crypto';

/** The spread of an app that sets none: a few minutes, so that many messages due at one instant trickle out. */
export const DEFAULT_SPREAD_SECONDS = 180;

/** WeCom: "大部分企业应用在每小时的0分或30分触发推送消息,容易造成资源挤占" (path/90236): releases avoid those minutes. */
const CROWDED_MINUTES: ReadonlySet<number> = new Set([0, 30]);
const MINUTE = 60_000;

const crowded = (t: number) => CROWDED_MINUTES.has(Math.floor(t / MINUTE) % 60);

/** A message's place in a spread, in [0, 1): the same id always gets the same place (a retried accept too). */
function placeOf(id: string): number {
  return createHash('sha256').update(id).digest().readUIntBE(0, 6) / 2 ** 48;
}

/**
 * When a message due at `dueMs` is released: its place in the spread window after `dueMs`, counted in minutes that
 * are not :00 or :30 of an hour, so a release never falls in them. `spreadMs` 0 releases it exactly when it is due.
 *
 * @example releaseOf(Date.parse('2026-12-07T00:00:00Z'), 180_000, 'msg_01J…') // somewhere in 00:01:00-00:04:00
 */
export function releaseOf(dueMs: number, spreadMs: number, id: string): number {
  if (spreadMs <= 0) return dueMs;
  let t = dueMs;
  let left = placeOf(id) * spreadMs;
  for (;;) {
    const minuteEnd = (Math.floor(t / MINUTE) + 1) * MINUTE;
    if (crowded(t)) {
      t = minuteEnd;
      continue;
    }
    if (t + left < minuteEnd) return Math.round(t + left);
    left -= minuteEnd - t;
    t = minuteEnd;
  }
}

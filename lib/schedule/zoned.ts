/**
 * Wall-clock time in an IANA time zone, with the platform's ICU data (Intl): the offset at an instant, and the
 * instant of a local date and time — including the days a daylight-saving change skips or repeats an hour.
 */

/** A local calendar date. `month` 1-12. */
export interface LocalDate {
  year: number;
  month: number;
  day: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/**
 * Whether the platform knows the IANA zone (`Asia/Shanghai`, `Europe/Berlin`, `UTC`).
 *
 * @example isTimeZone('Asia/Shanghai') // true; isTimeZone('China/Beijing') // false
 */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatterOf(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The local date and time at an instant, as the zone's clocks show it. */
export function localAt(ms: number, timeZone: string): LocalDate & { hour: number; minute: number } {
  const parts: Record<string, number> = {};
  for (const p of formatterOf(timeZone).formatToParts(new Date(ms))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year as number,
    month: parts.month as number,
    day: parts.day as number,
    hour: parts.hour as number,
    minute: parts.minute as number,
  };
}

/** How far the zone's clocks are ahead of UTC at an instant (ms; negative west of Greenwich). */
function offsetAt(ms: number, timeZone: string): number {
  const whole = Math.floor(ms / 1000) * 1000;
  const parts: Record<string, number> = {};
  for (const p of formatterOf(timeZone).formatToParts(new Date(whole))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  const asUtc = Date.UTC(
    parts.year as number,
    (parts.month as number) - 1,
    parts.day as number,
    parts.hour as number,
    parts.minute as number,
    parts.second as number,
  );
  return asUtc - whole;
}

/** The date `days` after `d` (negative: before). */
export function addDays(d: LocalDate, days: number): LocalDate {
  const t = new Date(Date.UTC(d.year, d.month - 1, d.day + days));
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate() };
}

/** 0 = Sunday … 6 = Saturday. */
export const weekdayOf = (d: LocalDate): number => new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay();

/**
 * The instant a zone's clocks show `minutes` after midnight of `date`. A time the clocks skip (spring forward) is
 * read with the offset before the change, i.e. it lands as far after the gap as it was into it; a time they show
 * twice (fall back) is the earlier of the two.
 *
 * @example instantOf({ year: 2026, month: 12, day: 7 }, 8 * 60, 'Asia/Shanghai') // Date.parse('2026-12-07T00:00:00Z')
 */
export function instantOf(date: LocalDate, minutes: number, timeZone: string): number {
  const wall = Date.UTC(date.year, date.month - 1, date.day, 0, minutes);
  // The offsets a day either side: at most one change lies between them.
  const before = wall - offsetAt(wall - 86_400_000, timeZone);
  const after = wall - offsetAt(wall + 86_400_000, timeZone);
  const shows = (t: number) => {
    const l = localAt(t, timeZone);
    return Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute) === wall;
  };
  const valid = [before, after].filter(shows);
  if (valid.length > 0) return Math.min(...valid);
  return before;
}

/** RFC 3339 date-time with a zone offset (`Z` or `±hh:mm`): a time without one would be read in some zone by guess. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The instant of an RFC 3339 time with an offset, or undefined (no offset, an impossible date, out of range).
 *
 * @example parseOffsetTime('2026-12-07T09:00:00+08:00') // Date.parse('2026-12-07T01:00:00Z')
 */
export function parseOffsetTime(value: string): number | undefined {
  const m = RFC3339.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  if (
    (mo as number) < 1 ||
    (mo as number) > 12 ||
    (h as number) > 23 ||
    (mi as number) > 59 ||
    (s as number) > 60
  )
    return undefined;
  const ms = Date.parse(value.replace(' ', 'T'));
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2026-02-30 over into March: the day must exist.
  const day = new Date(Date.UTC(y as number, (mo as number) - 1, d as number));
  if (day.getUTCDate() !== d) return undefined;
  return ms;
}

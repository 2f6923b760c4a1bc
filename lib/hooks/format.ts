import { createHash } from 'node:crypto';

/** Small, pure helpers the sources share. */

/** Go's zero time, which Alertmanager and Grafana send as endsAt of a firing alert. */
const ZERO_TIME = /^0001-01-01/;

const formatters = new Map<string, Intl.DateTimeFormat>();

/**
 * `2021-10-12 07:51:03 UTC` (or `… GMT+8` in another zone) for an RFC 3339 time; undefined for the zero time or a
 * missing value; the input unchanged when it does not parse.
 */
export function formatTime(value: string | null | undefined, timeZone: string): string | undefined {
  if (!value || ZERO_TIME.test(value)) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('sv-SE', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hour12: false,
      timeZoneName: 'shortOffset',
    });
    formatters.set(timeZone, f);
  }
  return f.format(date).replace(/ GMT(\+0)?$/, ' UTC');
}

/** The first line of a commit message or description, for one-line display. */
export const firstLine = (s: string | null | undefined): string =>
  (s ?? '').split(/\r?\n/, 1)[0]?.trim() ?? '';

/** Collapses whitespace so multi-line text reads as one line. */
export const oneLine = (s: string | null | undefined): string => (s ?? '').replace(/\s+/g, ' ').trim();

export const shortSha = (sha: string | null | undefined): string => (sha ?? '').slice(0, 8);

/** `refs/heads/main` → `main`, `refs/tags/v1` → `v1`. */
export const refName = (ref: string): string => ref.replace(/^refs\/(heads|tags)\//, '');

export const digest = (s: string): string => createHash('sha256').update(s).digest('hex');

export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

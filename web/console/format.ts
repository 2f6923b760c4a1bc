/** Formatting shared by the console's pages. Pure (no DOM): the unit tests run it under node. */
import { classifyErrcode, errcodeHint } from '../../lib/wecom/errcodes.js';

/** `42 s`, `5 min`, `3 h 20 min`, `2 d 4 h`: a duration as an operator reads it. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** `3 min ago` / `in 5 min`, relative to `now` (ms). */
export function relative(iso: string, now: number): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const diff = (now - ms) / 1000;
  if (Math.abs(diff) < 5) return 'just now';
  return diff > 0 ? `${duration(diff)} ago` : `in ${duration(-diff)}`;
}

/** A time as `2026-12-01 08:30:05` in the browser's zone (`offsetMinutes` east of UTC). */
export function timestamp(iso: string, offsetMinutes: number): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19).replace('T', ' ');
}

/** How full a quota window is, 0-100 (of what the gateway allows itself), and how the gauge should look. */
export function gauge(used: number, allowed: number): { percent: number; level: 'ok' | 'high' | 'full' } {
  const percent = allowed > 0 ? Math.min(100, Math.round((used / allowed) * 100)) : used > 0 ? 100 : 0;
  return { percent, level: percent >= 100 ? 'full' : percent >= 80 ? 'high' : 'ok' };
}

/** WeCom's receipt lists (`a|b`) as arrays; empty strings are no one. */
export const userList = (text: string | undefined): string[] =>
  (text ?? '').split('|').filter((s) => s !== '');

const ERRCODE_MEANING: Record<ReturnType<typeof classifyErrcode>, string> = {
  ok: 'success',
  token: 'the access token was invalid or expired; the gateway refreshes it and retries once',
  retryable: 'WeCom was busy; the gateway retries',
  rateLimited: 'the app hit a WeCom frequency limit; the gateway pauses the app until the window ends',
  config: 'a configuration error in WeCom or the gateway config; sending waits for the fix',
  permanent: 'WeCom refused this message; sending it again would fail the same way',
};

/** What a WeCom errcode means for the operator: the class the gateway puts it in, and a fix where one is known. */
export function errcodeMeaning(errcode: number, errmsg?: string): string {
  const hint = errcodeHint(errcode, errmsg);
  return hint ?? ERRCODE_MEANING[classifyErrcode(errcode)];
}

/** Statuses as the list colors them: done well, in progress, or needing a look. */
export function statusTone(status: string): 'good' | 'busy' | 'bad' | 'muted' {
  if (status === 'sent' || status === 'active' || status === 'delivered') return 'good';
  if (
    status === 'scheduled' ||
    status === 'queued' ||
    status === 'deferred' ||
    status === 'probing' ||
    status === 'pending'
  )
    return 'busy';
  if (status === 'recalled' || status === 'expired' || status === 'canceled') return 'muted';
  return 'bad';
}

/**
 * The card as the member now sees it, from the newest `card_updated` event of the timeline: its buttons replaced by
 * a text (lib/ingest/card.ts writes `buttons replaced by “…”`), or a new card that the gateway does not keep.
 */
export function cardUpdateOf(events: { type: string; detail?: string }[]): {
  replaced?: boolean;
  replaceName?: string;
} {
  const last = events.findLast((e) => e.type === 'card_updated');
  if (!last) return {};
  const name = /^buttons replaced by “(.*)”/.exec(last.detail ?? '')?.[1];
  return name !== undefined ? { replaceName: name } : { replaced: true };
}

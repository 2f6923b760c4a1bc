import { callsSpec, memberLimits, memberSpec, personTimesSpec } from './counters.js';
import { bucketMsOf } from './slots.js';
import type { QuotaDemand } from './types.js';
import { effectiveLimit, type QuotaWindows } from './windows.js';

// The counters a message's quota is reserved on, and how late their slots may be used (lib/sender/quota.ts).

/** The counters of an app's quota, with its limits. */
export type QuotaSpecs = ReturnType<typeof specsFor>;

/** The counters of this app, with its limits (the broadcast split applies to every member). */
export function specsFor(d: QuotaDemand, windows: QuotaWindows) {
  return {
    member: memberSpec(d.quota, windows, d.broadcastShare),
    broadcast: memberSpec(d.quota, windows, d.broadcastShare, 'broadcast'),
    calls: callsSpec(d.quota, windows),
    personTimes: personTimesSpec(d.quota, windows),
  };
}

/**
 * How late a slot may be used. A send that reaches WeCom up to (WeCom's minute limit − the allowed count) × the
 * pace after its slot keeps WeCom's rolling minute within WeCom's limit (slots.ts), the pace being that of both
 * pools together (minute ÷ the count `high` may use). Half of that is for using a slot late, half for the send's
 * way to WeCom after it; and at most a bucket of the long windows.
 */
export function latenessFor(
  d: QuotaDemand,
  specs: QuotaSpecs,
  windows: QuotaWindows,
  maxLatenessMs: number,
): number {
  const q = d.quota;
  const split = memberLimits(q, d.broadcastShare);
  const allowed = (limit: number) => (limit > 0 ? effectiveLimit(limit, q, 'high') : 0);
  const memberAllowed = allowed(split.direct.perMinute) + allowed(split.broadcast.perMinute);
  const callsAllowed = allowed(q.perMinute);
  const absorbed = (limit: number, used: number) =>
    used > 0 ? ((limit - used) * windows.minuteMs) / used / 2 : 0;
  return Math.max(
    0,
    Math.min(
      maxLatenessMs,
      absorbed(q.perMemberPerMinute, memberAllowed),
      absorbed(q.perMinute, callsAllowed),
      bucketMsOf(specs.member),
    ),
  );
}

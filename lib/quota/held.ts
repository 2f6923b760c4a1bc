import type { QuotaItems, Reserved, Want } from './items.js';
import type { QuotaKey } from './slots.js';
import type { QuotaSpecs } from './specs.js';
import { APP_CALL_SLOT, type QuotaDecision, type QuotaDemand, type QuotaScope } from './types.js';

/** A copy holds an app call at most this far ahead: SQS's longest delay (later, it wakes when the window frees). */
const MAX_HOLD_MS = 15 * 60_000;
/**
 * A `normal` copy holds an app call at most this many inline waits ahead (16 s by default): the calls of the pool
 * both lanes share come free for `high` after that, however long the normal backlog.
 */
const NORMAL_HOLD_WAITS = 4;

/** The app's counters a held call is reserved on. */
type AppSpecs = Pick<QuotaSpecs, 'calls' | 'personTimes'>;

/**
 * The app calls a container lets deferred copies hold (lib/sender/quota.ts): a copy the app's calls are taken for
 * beyond the inline wait holds the next free one and wakes for it once, as it does for its members' slots.
 */
export class AppCallHolds {
  /** Per app and lane: the latest app call this container let a copy hold (the app's line is taken until then). */
  private readonly heldUntil = new Map<string, number>();

  constructor(
    private readonly items: QuotaItems,
    private readonly now: () => number,
    private readonly inlineWaitMs: number,
  ) {}

  /**
   * A call (and the send's person-times) on the app's line for a copy that waits for it: the next free one after
   * the inline wait, if the app's calls are what is full and it comes within SQS's longest delay (`high`) or
   * {@link NORMAL_HOLD_WAITS} inline waits (`normal`). Undefined when the copy holds nothing: it wakes when the
   * window frees up.
   */
  async hold(
    d: QuotaDemand,
    specs: AppSpecs,
    full: { full: QuotaScope; retryAtMs: number },
    personTimes: number,
    lateness: number,
  ): Promise<Reserved | undefined> {
    const now = this.now();
    if (
      (full.full !== 'app-minute' && full.full !== 'app-hour') ||
      full.retryAtMs <= now + this.inlineWaitMs
    ) {
      return undefined;
    }
    const wants: Want[] = [{ spec: specs.calls, amount: 1 }];
    if (personTimes > 0) wants.push({ spec: specs.personTimes, amount: personTimes });
    const key: QuotaKey = { app: d.app, kind: 'app' };
    const r = await this.items.reserve(
      key,
      wants,
      d.priority,
      full.retryAtMs,
      now + this.aheadMs(d),
      lateness / 2,
    );
    if (r === 'never' || !('plans' in r)) return undefined;
    const lane = `${d.app}#${d.priority}`;
    this.heldUntil.set(lane, Math.max(this.heldUntil.get(lane) ?? 0, r.slotMs));
    return r;
  }

  /**
   * A fresh copy for an app whose calls this container let copies hold beyond the inline wait: it holds the next
   * call at once (or, beyond what it may hold, comes back later), and its members' slots are reserved when it comes
   * back — reserved now, they would lapse unused, a pace of each member's line lost, and the backlog would take
   * twice the requests to turn into held copies while the first of them come due. Not for a member this container
   * reserved for before (it may be busy itself: its copy would hold a call it cannot use), nor for broadcasts.
   */
  async behind(
    d: QuotaDemand,
    specs: AppSpecs,
    lateness: number,
    now: number,
  ): Promise<Extract<QuotaDecision, { ok: false }> | undefined> {
    const heldUntil = this.heldUntil.get(`${d.app}#${d.priority}`);
    if (heldUntil === undefined || heldUntil <= now + this.inlineWaitMs || d.held || d.broadcasts > 0) {
      return undefined;
    }
    if (d.members.some((m) => this.items.cached({ app: d.app, kind: 'member', member: m }) !== undefined))
      return undefined;
    const aheadMs = this.aheadMs(d);
    if (heldUntil > now + aheadMs)
      return { ok: false, scope: 'app-minute', retryAtMs: heldUntil - aheadMs / 2 };
    const personTimes = d.members.length + (d.splittable ? 0 : d.extraPersonTimes);
    const full = { full: 'app-minute' as const, retryAtMs: heldUntil };
    const call = await this.hold(d, specs, full, personTimes, lateness);
    if (!call) return undefined;
    const held = { [`${APP_CALL_SLOT}${personTimes}`]: call.slotMs };
    return { ok: false, scope: 'app-minute', retryAtMs: call.slotMs, held };
  }

  /** How far ahead a copy of this lane may hold an app call. */
  aheadMs(d: QuotaDemand): number {
    return d.priority === 'high' ? MAX_HOLD_MS : NORMAL_HOLD_WAITS * this.inlineWaitMs;
  }
}

/** The app call a copy holds (`~app:<person-times>` → slot), if it is not past use yet. */
export function heldCall(
  d: QuotaDemand,
  notBeforeMs: number,
): { slotMs: number; personTimes: number } | undefined {
  for (const [key, slotMs] of Object.entries(d.held ?? {})) {
    if (!key.startsWith(APP_CALL_SLOT) || slotMs < notBeforeMs) continue;
    const personTimes = Number(key.slice(APP_CALL_SLOT.length));
    if (Number.isInteger(personTimes) && personTimes >= 0) return { slotMs, personTimes };
  }
  return undefined;
}

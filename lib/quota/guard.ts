import { KeyedQueue } from '#lib/util/index.js';
import { AppBlocks } from './app-blocks.js';
import { AppCallHolds, heldCall } from './held.js';
import { type Later, pacedSlotsOf, QuotaItems, type Reserved, type Want } from './items.js';
import { type QuotaKey, usedInMinute } from './slots.js';
import { latenessFor, type QuotaSpecs, specsFor } from './specs.js';
import type { PacedSlot, QuotaStore } from './store.js';
import {
  APP_CALL_SLOT,
  BROADCAST_SLOT,
  type QuotaDecision,
  type QuotaDemand,
  type QuotaScope,
} from './types.js';
import { effectiveLimit, type QuotaWindows, WECOM_WINDOWS } from './windows.js';

export interface QuotaGuardOptions {
  windows?: QuotaWindows;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /**
   * A slot this close is waited for in the function; a later one through the queue. Default 4 s: a member's next
   * slot on either lane (60 s ÷ 24 or ÷ 19, at most 3.2 s), so two messages to one person in a row cost no deferral.
   */
  inlineWaitMs?: number;
  /**
   * How late a slot may still be used. Also bounded per app by what the safety margin absorbs (lib/quota slots.ts):
   * (WeCom's minute limit − the allowed count) × the pace, and a bucket of the long window. Default 5 s.
   */
  maxLatenessMs?: number;
  /** Told the app's use of its paced minute after each block (the utilisation metric). */
  onUsage?: (app: string, scope: QuotaScope, used: number, limit: number) => void;
}

/** Members reserved at once for one message: a message to 1,000 users must not open 1,000 requests. */
const PARALLEL = 25;

/**
 * Reserves send slots for messages (lib/quota slots.ts): per member (its minute paced, its hour a sliding log), the
 * app's shared broadcast allowance, and the app's calls and person-times (reserved in blocks, so a busy sender pays
 * about one request per block). A member's slots are handed out in arrival order; one that is not due yet is held
 * by the message's deferred copy, which wakes for it once.
 *
 * @example const decision = await quota.acquire(demand); if (decision.ok) await wecom.send(token, body);
 */
export class QuotaGuard {
  private readonly windows: QuotaWindows;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  /** A slot this close is waited for in-process; deferred copies holding slots arrive about this early. */
  readonly inlineWaitMs: number;
  private readonly maxLatenessMs: number;
  private readonly items: QuotaItems;
  /** The minute slots each granted decision took from its members' lines, for `giveBack`. */
  private readonly givenOut = new WeakMap<QuotaDecision, { key: QuotaKey; slot: PacedSlot }[]>();
  /** One block reservation at a time per app and lane in this container: the batch's records queue for it. */
  private readonly turns = new KeyedQueue<string>();
  private readonly blocks: AppBlocks;
  /** The app calls this container let deferred copies hold. */
  private readonly holds: AppCallHolds;

  constructor(
    readonly store: QuotaStore,
    private readonly opts: QuotaGuardOptions = {},
  ) {
    this.windows = opts.windows ?? WECOM_WINDOWS;
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    // At least a second: a deferred copy arrives up to a second before its slot (SQS delays are whole seconds).
    this.inlineWaitMs = Math.max(1_000, opts.inlineWaitMs ?? 4_000);
    this.maxLatenessMs = opts.maxLatenessMs ?? 5_000;
    this.blocks = new AppBlocks(this.now);
    this.items = new QuotaItems(store, this.now);
    this.holds = new AppCallHolds(this.items, this.now, this.inlineWaitMs);
  }

  /**
   * Reserves what the message (or this part of it) needs, and resolves when its send may go: at once, or after
   * waiting in-process for a slot at most `inlineWaitMs` away.
   */
  async acquire(d: QuotaDemand): Promise<QuotaDecision> {
    const until = async (t: number) => {
      const wait = t - this.now();
      if (wait > 0) await this.sleep(wait);
    };
    const decision = await this.plan(d, until);
    if (decision.ok) await until(decision.sendAtMs);
    return decision;
  }

  /**
   * Reserves what the message (or this part of it) needs without waiting: slots due within `inlineWaitMs` are for
   * this send (`sendAtMs`), later ones are held for a deferred copy. The app's units are reserved for the time the
   * members' slots come (`acquire` reserves them when it comes).
   */
  reserve(d: QuotaDemand): Promise<QuotaDecision> {
    return this.plan(d, async () => undefined);
  }

  /**
   * A plain list of users is split when some of them have no slot soon; a broadcast waits until every member it
   * reaches has one. The members' slots come first, each in its member's line; the app's own units (calls and
   * person-times, shared by all its messages) are taken only when the send is due, so a message waiting for a busy
   * member never holds the app's line up.
   */
  private async plan(d: QuotaDemand, until: (t: number) => Promise<void>): Promise<QuotaDecision> {
    const specs = specsFor(d, this.windows);
    const lateness = latenessFor(d, specs, this.windows, this.maxLatenessMs);
    const now = this.now();
    const behind = await this.holds.behind(d, specs, lateness, now);
    if (behind) return behind;
    const ids = [...d.members, ...(d.broadcasts > 0 ? [BROADCAST_SLOT] : [])];
    const slots = new Map<string, number>();
    for (const id of ids) {
      const held = d.held?.[id];
      if (held !== undefined && held >= now - lateness) slots.set(id, held);
    }
    const missing = ids.filter((id) => !slots.has(id));
    const call = heldCall(d, now - lateness);
    const first = await this.reserveMembers(
      d,
      specs,
      missing,
      Math.max(now, call?.slotMs ?? now),
      lateness / 2,
    );
    if ('ok' in first) return first;
    for (const [id, r] of first.reserved) slots.set(id, r.slotMs);

    // After reserving (a fan-out to many members takes a while): what is due within the wait from now on goes now.
    const horizon = this.now() + this.inlineWaitMs;
    let due: string[];
    let rest: string[] = [];
    if (d.splittable) {
      due = ids.filter((id) => (slots.get(id) as number) <= horizon);
      rest = ids.filter((id) => (slots.get(id) as number) > horizon);
      if (due.length === 0) return this.waitFor(rest, slots, first.reserved);
    } else {
      const aligned = await this.align(d, specs, ids, slots, first.reserved, lateness);
      if (!aligned.ok) return aligned;
      if (aligned.atMs > horizon) return this.waitFor(ids, slots, first.reserved);
      due = ids;
    }

    const atMs = Math.max(now, ...due.map((id) => slots.get(id) as number));
    await until(atMs);
    const direct = due.filter((id) => id !== BROADCAST_SLOT).length;
    const personTimes = direct + (d.splittable ? 0 : d.extraPersonTimes);
    // The copy's own call, when its members are there in time and it counted as many person-times; else it lapses.
    let app: Awaited<ReturnType<QuotaGuard['reserveApp']>> =
      call && call.personTimes >= personTimes && atMs <= call.slotMs + lateness
        ? { slotMs: call.slotMs }
        : await this.reserveApp(d, specs, personTimes, Math.max(atMs, this.now()), lateness);
    if ('full' in app && app.full === 'app-minute' && app.retryAtMs <= this.now() + this.inlineWaitMs) {
      app = await this.followAppPace(d, specs, due, slots, first.reserved, personTimes, lateness);
    }
    if ('never' in app) return { ok: false, scope: app.never, retryAtMs: Number.POSITIVE_INFINITY };
    const held = Object.fromEntries(rest.map((id) => [id, slots.get(id) as number]));
    if ('full' in app) {
      // The app's calls are taken beyond the inline wait: the copy takes the next free one and waits for it, once
      // (copies that came back to look again found the app's line idle in between, and polled it at every return).
      const ahead = await this.holds.hold(d, specs, app, personTimes, lateness);
      if (ahead) held[`${APP_CALL_SLOT}${personTimes}`] = ahead.slotMs;
      // The members' slots for now lapse (a wasted slot never harms); later ones stay held.
      // Beyond what it may hold, it comes back when the app's next call is halfway into that, and holds one then:
      // woken at the call itself, it found the line idle since the held calls ran out.
      const beyond = app.full === 'app-minute' && app.retryAtMs > this.now() + this.holds.aheadMs(d);
      const retryAtMs = ahead?.slotMs ?? (beyond ? app.retryAtMs - this.holds.aheadMs(d) / 2 : app.retryAtMs);
      return { ok: false, scope: app.full, retryAtMs, ...(Object.keys(held).length ? { held } : {}) };
    }
    const decision: QuotaDecision = {
      ok: true,
      sendAtMs: app.slotMs,
      members: due.filter((id) => id !== BROADCAST_SLOT),
      ...(rest.length
        ? { rest: { members: rest, held, wakeAtMs: Math.min(...rest.map((id) => held[id] as number)) } }
        : {}),
    };
    this.givenOut.set(
      decision,
      due.flatMap((id) => pacedSlotsOf(first.reserved.get(id)).map((slot) => ({ key: keyOf(d, id), slot }))),
    );
    return decision;
  }

  /**
   * The send this decision allowed did not happen (WeCom answered an error, or the request never left): its
   * members' minute slots go back to them, where nobody has reserved after them meanwhile. A member retried after
   * WeCom's -1 then goes again at once instead of a pace later. Hours and days stay charged (conservative). At most
   * once per decision; never throws.
   */
  async giveBack(decision: QuotaDecision): Promise<void> {
    const given = this.givenOut.get(decision);
    this.givenOut.delete(decision);
    await Promise.all(
      (given ?? []).map(({ key, slot }) => this.items.giveBack(key, slot).catch(() => false)),
    );
  }

  /** Slots for members (and the broadcast allowance), `PARALLEL` at a time, each at its earliest. */
  private async reserveMembers(
    d: QuotaDemand,
    specs: QuotaSpecs,
    ids: readonly string[],
    notBeforeMs: number,
    toleranceMs: number,
  ): Promise<{ reserved: Map<string, Reserved> } | Extract<QuotaDecision, { ok: false }>> {
    const reserved = new Map<string, Reserved>();
    for (let i = 0; i < ids.length; i += PARALLEL) {
      const slice = ids.slice(i, i + PARALLEL);
      const results = await Promise.all(
        slice.map((id) => this.reserveMember(d, specs, id, notBeforeMs, toleranceMs)),
      );
      for (const [j, r] of results.entries()) {
        const id = slice[j] as string;
        const kind = id === BROADCAST_SLOT ? 'broadcast' : 'member';
        if (r === 'never') return { ok: false, scope: `${kind}-hour`, retryAtMs: Number.POSITIVE_INFINITY };
        // Contended beyond reason: the copy tries again a moment later, holding nothing.
        if ('laterMs' in r) return { ok: false, scope: `${kind}-minute`, retryAtMs: r.laterMs };
        reserved.set(id, r);
      }
    }
    return { reserved };
  }

  private reserveMember(
    d: QuotaDemand,
    specs: QuotaSpecs,
    id: string,
    notBeforeMs: number,
    toleranceMs: number,
  ): Promise<Reserved | 'never' | Later> {
    const broadcast = id === BROADCAST_SLOT;
    const key = keyOf(d, id);
    const want = broadcast
      ? { spec: specs.broadcast, amount: d.broadcasts }
      : { spec: specs.member, amount: 1 };
    return this.items.reserve(key, [want], d.priority, notBeforeMs, Number.POSITIVE_INFINITY, toleranceMs);
  }

  /**
   * A broadcast goes to everyone at once: every member's slot moves to the latest one. Slots taken earlier lapse.
   * Gives up (tries later without holding anything) if members keep moving the time on.
   */
  private async align(
    d: QuotaDemand,
    specs: QuotaSpecs,
    ids: readonly string[],
    slots: Map<string, number>,
    reserved: Map<string, Reserved>,
    lateness: number,
  ): Promise<{ ok: true; atMs: number } | Extract<QuotaDecision, { ok: false }>> {
    for (let round = 0; round < 3; round++) {
      const atMs = Math.max(...ids.map((id) => slots.get(id) as number));
      const early = ids.filter((id) => (slots.get(id) as number) < atMs - lateness);
      if (early.length === 0) return { ok: true, atMs };
      const again = await this.reserveMembers(d, specs, early, atMs, 0);
      if ('ok' in again) return again;
      for (const [id, r] of again.reserved) {
        slots.set(id, r.slotMs);
        reserved.set(id, r);
      }
    }
    return { ok: false, scope: 'member-minute', retryAtMs: Math.max(...slots.values()) };
  }

  /** Nothing to send now: the copy waits for the earliest of its members' slots, holding them all. */
  private waitFor(
    ids: readonly string[],
    slots: Map<string, number>,
    reserved: Map<string, Reserved>,
  ): Extract<QuotaDecision, { ok: false }> {
    const held = Object.fromEntries(ids.map((id) => [id, slots.get(id) as number]));
    const first = ids.reduce((a, b) => ((held[a] as number) <= (held[b] as number) ? a : b));
    const r = reserved.get(first);
    const member = first === BROADCAST_SLOT ? 'broadcast' : 'member';
    const scope: QuotaScope = r?.boundBy === 'window' ? `${member}-hour` : `${member}-minute`;
    return { ok: false, scope, retryAtMs: held[first] as number, held };
  }

  /**
   * The app's next call is further off than the members' slots may be used late: a busy app, whose calls go a pace
   * apart (at perMinute 50, 10 calls span 15 s; a slot may be used at most 5 s late), so every record after the
   * first few would be deferred. The record takes the app's next call within the inline wait first (its line is
   * what many records contend for), then its members take slots at that call (their earlier ones lapse; a wasted
   * slot never harms); the send waits for it in the function. The batch goes out at the app's pace, not by deferrals.
   */
  private async followAppPace(
    d: QuotaDemand,
    specs: QuotaSpecs,
    due: readonly string[],
    slots: Map<string, number>,
    reserved: Map<string, Reserved>,
    personTimes: number,
    lateness: number,
  ): Promise<Awaited<ReturnType<QuotaGuard['reserveApp']>>> {
    const app = await this.reserveApp(d, specs, personTimes, this.now(), lateness, this.inlineWaitMs);
    if (!('slotMs' in app)) return app;
    const moved = await this.reserveMembers(d, specs, due, app.slotMs, 0);
    if ('ok' in moved) return { full: moved.scope, retryAtMs: moved.retryAtMs };
    for (const [id, r] of moved.reserved) {
      slots.set(id, r.slotMs);
      reserved.set(id, r);
    }
    // A member busy beyond the call: the call lapses, and the copy comes back for the members' slots.
    const atMs = Math.max(...due.map((id) => slots.get(id) as number));
    if (atMs > app.slotMs + lateness) return { full: 'member-minute', retryAtMs: atMs };
    return app;
  }

  /** One call and the person-times of this send, from the container's block or a new one. */
  private async reserveApp(
    d: QuotaDemand,
    specs: QuotaSpecs,
    personTimes: number,
    notBeforeMs: number,
    lateness: number,
    aheadMs = lateness,
  ): Promise<{ slotMs: number } | { never: QuotaScope } | { full: QuotaScope; retryAtMs: number }> {
    const blockKey = `${d.app}#${d.priority}`;
    const release = this.blocks.expect(blockKey, personTimes);
    return this.turns.run(`app#${blockKey}`, async () => {
      const demand = release();
      const taken = this.blocks.take(blockKey, personTimes, notBeforeMs, lateness, aheadMs);
      if (taken.ok) return { slotMs: taken.slotMs };
      const wants: Want[] = [];
      // As much as is queued here now, or was used here over the time a unit stays usable, whichever is more.
      const recent = this.blocks.recent(blockKey, lateness);
      const size = (limit: number, cap: number, own: number, wanted: number) =>
        Math.max(own, Math.min(wanted, Math.max(1, Math.min(cap, Math.floor(limit / 100)))));
      if (taken.needCalls) {
        const limit = specs.calls.pools.n.limit + specs.calls.pools.h.limit;
        wants.push({ spec: specs.calls, amount: size(limit, 25, 1, Math.max(demand.calls, recent.calls)) });
      }
      if (taken.needPersonTimes > 0) {
        const limit = specs.personTimes.pools.n.limit + specs.personTimes.pools.h.limit;
        const wanted = Math.max(demand.personTimes, recent.personTimes);
        wants.push({ spec: specs.personTimes, amount: size(limit, 100, personTimes, wanted) });
      }
      const key: QuotaKey = { app: d.app, kind: 'app' };
      const latest = notBeforeMs + aheadMs;
      let r = await this.items.reserve(key, wants, d.priority, notBeforeMs, latest, lateness / 2);
      // A block too big for what is left: the exact amount may still fit.
      if (r === 'never' || 'laterMs' in r) {
        const exact = wants.map((w) => ({ ...w, amount: w.spec === specs.calls ? 1 : personTimes }));
        r = await this.items.reserve(key, exact, d.priority, notBeforeMs, latest, lateness / 2);
      }
      if (r === 'never') return { never: personTimes > 1 ? 'app-day' : 'app-minute' };
      if ('laterMs' in r) {
        const scope: QuotaScope =
          r.counter === specs.personTimes.name
            ? 'app-day'
            : r.boundBy === 'window'
              ? 'app-hour'
              : 'app-minute';
        return { full: scope, retryAtMs: r.laterMs };
      }
      this.blocks.add(blockKey, r.plans, specs);
      this.reportUsage(d, specs);
      const now = this.blocks.take(blockKey, personTimes, notBeforeMs, lateness, aheadMs);
      if (now.ok) return { slotMs: now.slotMs };
      // Appends on a busy pace granted the block later than this send may wait: it waits (deferred) and the block
      // stays for the sends after it. Never a send the block has not counted.
      return { full: 'app-minute', retryAtMs: r.slotMs };
    });
  }

  /** The app's paced minute as the metric sees it: slots handed out over the last minute and ahead. */
  private reportUsage(d: QuotaDemand, specs: QuotaSpecs): void {
    const calls = this.items.cached({ app: d.app, kind: 'app' })?.[specs.calls.name];
    if (!this.opts.onUsage || !calls) return;
    const limit = effectiveLimit(d.quota.perMinute, d.quota, 'high');
    const used = (['n', 'h'] as const).reduce(
      (n, pool) => n + usedInMinute(calls[pool], specs.calls, pool, this.windows.minuteMs, this.now()),
      0,
    );
    this.opts.onUsage(d.app, 'app-minute', Math.min(used, limit), limit);
  }
}

/** The item a member's (or the broadcast allowance's) slots are kept in. */
const keyOf = (d: QuotaDemand, id: string): QuotaKey =>
  id === BROADCAST_SLOT ? { app: d.app, kind: 'broadcast' } : { app: d.app, kind: 'member', member: id };

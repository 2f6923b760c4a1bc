import { AppLines } from './app-lines.js';
import { appCounters, latenessOf } from './counters.js';
import { compact, type HeldCall, type HeldReservations, mergeHeld, PICKUP_MS } from './held.js';
import { QuotaItems } from './items.js';
import {
  type Ask,
  holdOf,
  type LineSlot,
  latestOf,
  linesOf,
  MemberLines,
  membersOf,
  replaced,
  waitFor,
} from './member-lines.js';
import type { QuotaStore } from './store.js';
import type {
  QuotaDecision,
  QuotaDemand,
  QuotaScope,
  SendDecision,
  SendOutcome,
  Step,
  WaitDecision,
} from './types.js';
import { type QuotaWindows, WECOM_WINDOWS } from './windows.js';

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
   * How late a slot may still be used. Also bounded per app by what the safety margin absorbs (counters.ts
   * `latenessOf`). Default 5 s.
   */
  maxLatenessMs?: number;
  /** Told the app's use of its paced minute after each block (the utilisation metric). */
  onUsage?: (app: string, scope: QuotaScope, used: number, limit: number) => void;
}

/** The members' slots of one send, split or aligned: who goes now, who later, and when. */
interface Chosen {
  ask: Ask;
  due: LineSlot[];
  rest: LineSlot[];
  /** When the due members' slots have all come. */
  atMs: number;
  /** The copy's held call, if it may still be used. */
  call?: HeldCall;
}

/** The members' slots and the app's call of one send, once both are granted. */
interface Granted {
  /** The app call's slot: when the send goes. */
  slotMs: number;
  /** Where the call came from: the container's block, or the copy's held call. */
  from: 'block' | 'held';
  due: LineSlot[];
}

/**
 * Decides when a send may go under WeCom's limits, in every rolling window (docs/quota.md): per member (its minute
 * paced, its hour a log), the app's shared broadcast allowance, and the app's calls and person-times. The sender
 * asks with a demand, acts on the decision (send, wait holding reservations, or never), and reports the outcome.
 *
 * @example const decision = await quota.acquire(demand); if (decision.kind === 'send') await wecom.send(token, body);
 */
export class QuotaGuard {
  /** A slot this close is waited for in-process; deferred copies holding slots arrive about this early. */
  readonly inlineWaitMs: number;
  private readonly windows: QuotaWindows;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly maxLatenessMs: number;
  private readonly items: QuotaItems;
  private readonly members: MemberLines;
  private readonly app: AppLines;
  /** How to give back what each send decision reserved for it, for `report`. */
  private readonly unsent = new WeakMap<SendDecision, () => Promise<void>>();

  constructor(store: QuotaStore, opts: QuotaGuardOptions = {}) {
    this.windows = opts.windows ?? WECOM_WINDOWS;
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    // A deferred copy arrives up to a second and a pick-up before its slot (SQS delays are whole seconds).
    this.inlineWaitMs = Math.max(1_000 + PICKUP_MS, opts.inlineWaitMs ?? 4_000);
    this.maxLatenessMs = opts.maxLatenessMs ?? 5_000;
    this.items = new QuotaItems(store, this.now);
    this.members = new MemberLines(this.items);
    this.app = new AppLines({
      items: this.items,
      now: this.now,
      inlineWaitMs: this.inlineWaitMs,
      minuteMs: this.windows.minuteMs,
      ...(opts.onUsage ? { onUsage: opts.onUsage } : {}),
    });
  }

  /**
   * Reserves what the message (or this part of it) needs, and resolves when its send may go: at once, or after
   * waiting in-process for a slot at most `inlineWaitMs` away.
   */
  async acquire(d: QuotaDemand): Promise<QuotaDecision> {
    const decision = await this.decide(d, (t) => this.until(t));
    if (decision.kind === 'send') await this.until(decision.sendAtMs);
    return decision;
  }

  /**
   * Reserves what the message (or this part of it) needs without waiting: slots due within `inlineWaitMs` are for
   * this send (`sendAtMs`), later ones are held for a deferred copy. The app's units are reserved for the time the
   * members' slots come (`acquire` reserves them when it comes).
   */
  reserve(d: QuotaDemand): Promise<QuotaDecision> {
    return this.decide(d, async () => undefined);
  }

  /**
   * What became of a send this guard allowed. Not sent (WeCom answered an error, or the request never left): what
   * this decision reserved for it goes back — its members' minute slots to their lines, its call to the block —
   * where nobody has reserved after them meanwhile, so a retry need not wait a pace. What the copy holds stays
   * held, and hours and days stay charged (conservative). Sent or in doubt: nothing goes back. At most once per
   * decision; never throws.
   */
  async report(decision: QuotaDecision, outcome: SendOutcome): Promise<void> {
    if (decision.kind !== 'send') return;
    const giveBack = this.unsent.get(decision);
    this.unsent.delete(decision);
    if (outcome === 'not-sent' && giveBack) await giveBack().catch(() => undefined);
  }

  /**
   * The steps of docs/quota.md, "The decision, step by step": the members' slots, then (when they come: `acquire`
   * waits for them in-process) the app's units. So a member's sends take the app's calls in the order of their
   * slots.
   */
  private async decide(d: QuotaDemand, until: (t: number) => Promise<void>): Promise<QuotaDecision> {
    const chosen = await this.slotsFor(d);
    if (chosen.kind !== 'granted') return chosen;
    await until(chosen.atMs);
    return this.appFor(chosen);
  }

  /** Steps 1-4: the members' slots, split or aligned. */
  private async slotsFor(d: QuotaDemand): Promise<Step<Chosen>> {
    const ask = this.askFor(d);
    const now = this.now();
    const behind = this.app.behind(ask, (key) => this.items.cached(key) !== undefined, now);
    if (behind?.kind === 'wait') return behind;
    if (behind) {
      // Its members' slots are reserved when it comes back, at its call: reserved now, they would lapse unused.
      const personTimes = d.members.length + (d.splittable ? 0 : d.extraPersonTimes);
      const wait: WaitDecision = { kind: 'wait', scope: 'app-minute', retryAtMs: behind.notBeforeMs };
      const hold = await this.app.hold(ask, wait, personTimes);
      if (hold) return { kind: 'wait', scope: 'app-minute', retryAtMs: hold.slotMs, held: { call: hold } };
    }
    const call = usableCall(d.held, now - ask.latenessMs);
    const found = await this.members.slots(ask, linesOf(d), Math.max(now, call?.slotMs ?? now), now);
    const chosen = found.kind === 'granted' ? await this.splitOrAlign(ask, found.slots) : found;
    // Its members come later than its call: the copy holds the members' slots (the call lapses).
    if (chosen.kind !== 'granted') return chosen;
    const atMs = Math.max(now, latestOf(chosen.due));
    return { ...chosen, ask, atMs, ...(call ? { call } : {}) };
  }

  /** Steps 5-6, when the members' slots are due: the app's units, and the answer. */
  private async appFor(chosen: Chosen): Promise<QuotaDecision> {
    const { ask, rest, atMs, call } = chosen;
    const d = ask.demand;
    const personTimes = membersOf(chosen.due).length + (d.splittable ? 0 : d.extraPersonTimes);
    const app = await this.appUnits(ask, { due: chosen.due, personTimes, atMs, ...(call ? { call } : {}) });
    if (app.kind === 'never') return app;
    if (app.kind === 'wait') return this.waitForApp(ask, { wait: app, due: chosen.due, rest, personTimes });
    const decision: SendDecision = {
      kind: 'send',
      // Not before any of its slots: a member's slot may come a little after the app's call (within the lateness).
      sendAtMs: Math.max(app.slotMs, latestOf(app.due)),
      members: membersOf(app.due),
      slots: holdOf(app.due).members ?? {},
      ...(rest.length
        ? {
            rest: {
              members: membersOf(rest),
              held: holdOf(rest),
              wakeAtMs: Math.min(...rest.map((s) => s.slotMs)),
            },
          }
        : {}),
    };
    // What the copy holds stays held (its retry is the same copy); what was reserved for this send goes back.
    const fresh = app.due.filter((s) => s.reserved);
    this.unsent.set(decision, async () => {
      if (app.from === 'block') this.app.untake(ask, { slotMs: app.slotMs, personTimes });
      await this.members.release(ask, fresh);
    });
    return decision;
  }

  /**
   * The app's calls are taken beyond the inline wait: the copy holds the next free one and waits for it, once; its
   * members' slots are reserved again when it comes back, at its call. Beyond what it may hold, it holds nothing and
   * comes back when the app's next call is halfway into that.
   */
  private async waitForApp(
    ask: Ask,
    s: { wait: WaitDecision; due: LineSlot[]; rest: LineSlot[]; personTimes: number },
  ): Promise<WaitDecision> {
    const { wait, rest } = s;
    const withRest = (w: WaitDecision): WaitDecision => {
      const held = compact(mergeHeld(w.held ?? {}, holdOf(rest)));
      return { ...w, ...(held ? { held } : {}) };
    };
    // A member busy beyond the app's call (followAppPace): the copy already holds its members' slots.
    if (wait.held) return withRest(wait);
    const hold = await this.app.hold(ask, wait, s.personTimes);
    const aheadMs = this.app.aheadMs(ask.demand.priority);
    const beyond = wait.scope === 'app-minute' && wait.retryAtMs > this.now() + aheadMs;
    const retryAtMs = hold?.slotMs ?? (beyond ? wait.retryAtMs - aheadMs / 2 : wait.retryAtMs);
    // A slot reserved now whose line would stand past the copy's return goes back: reserving again then, the copy
    // would find its own slot in the way, a pace later each time, and chase it. The others lapse (a wasted slot
    // never harms; giving it back would cost a request).
    await this.members.release(
      ask,
      s.due.filter((slot) => standsPast(slot, retryAtMs)),
    );
    return withRest({
      kind: 'wait',
      scope: wait.scope,
      retryAtMs,
      ...(hold ? { held: { call: hold } } : {}),
    });
  }

  private askFor(d: QuotaDemand): Ask {
    const counters = appCounters(d.quota, this.windows, d.broadcastShare);
    return { demand: d, counters, ...latenessOf(d, this.windows, this.maxLatenessMs) };
  }

  /**
   * A plain list of users is split: those whose slots come within the inline wait go now, the others later (a
   * send whose members all come later waits for the earliest). A broadcast goes to everyone at once, at the slot of
   * its busiest member.
   */
  private async splitOrAlign(
    ask: Ask,
    slots: LineSlot[],
  ): Promise<Step<{ due: LineSlot[]; rest: LineSlot[] }>> {
    // After reserving (a fan-out to many members takes a while): what is due within the wait from now on goes now,
    // if it is not more than the lateness after the earliest (which would be used that much later).
    const horizon = this.now() + this.inlineWaitMs;
    if (ask.demand.splittable) {
      const until = Math.min(horizon, Math.min(...slots.map((s) => s.slotMs)) + ask.latenessMs);
      const due = slots.filter((s) => s.slotMs <= until);
      const rest = slots.filter((s) => s.slotMs > until);
      return due.length ? { kind: 'granted', due, rest } : waitFor(rest);
    }
    const aligned = await this.members.align(ask, slots);
    if (aligned.kind !== 'granted') return aligned;
    return aligned.atMs > horizon
      ? waitFor(aligned.slots, 'latest')
      : { kind: 'granted', due: aligned.slots, rest: [] };
  }

  /**
   * One call and the send's person-times: the copy's held call, when its members are there in time and it counted
   * as many person-times (else it lapses); otherwise from the app's lines, following the app's pace when its
   * calls are what is busy within the inline wait.
   */
  private async appUnits(
    ask: Ask,
    s: { due: LineSlot[]; personTimes: number; atMs: number; call?: HeldCall },
  ): Promise<Step<Granted>> {
    const { call } = s;
    // No unit of the send may be used more than the lateness after its slot: the call not after the earliest
    // member's slot plus the lateness, the members not after the call plus the lateness.
    const latestMs = Math.min(...s.due.map((slot) => slot.slotMs)) + ask.latenessMs;
    const inTime = (callMs: number) => s.atMs <= callMs + ask.latenessMs && callMs <= latestMs;
    if (call && call.personTimes >= s.personTimes && inTime(call.slotMs)) {
      return { kind: 'granted', slotMs: call.slotMs, from: 'held', due: s.due };
    }
    const notBeforeMs = Math.max(s.atMs, this.now());
    const app = await this.app.take(ask, {
      personTimes: s.personTimes,
      notBeforeMs,
      aheadMs: latestMs - notBeforeMs,
    });
    if (app.kind === 'granted') return { ...app, from: 'block', due: s.due };
    if (
      app.kind === 'wait' &&
      app.scope === 'app-minute' &&
      app.retryAtMs <= this.now() + this.inlineWaitMs
    ) {
      return this.followAppPace(ask, s.due, s.personTimes);
    }
    return app;
  }

  /**
   * The app's next call is further off than the members' slots may be used late: a busy app, whose calls go a pace
   * apart. The send takes the app's next call within the inline wait first (its line is what many records contend
   * for), then its members' slots move to that call (their earlier ones go back); the send waits for it in the
   * function. A member busy beyond the call: the call goes back, and the copy waits holding the members' slots.
   */
  private async followAppPace(ask: Ask, due: LineSlot[], personTimes: number): Promise<Step<Granted>> {
    const app = await this.app.take(ask, {
      personTimes,
      notBeforeMs: this.now(),
      aheadMs: this.inlineWaitMs,
    });
    if (app.kind !== 'granted') return app;
    const moved = await this.members.move(ask, due, app.slotMs);
    const atCall = moved.kind === 'granted' ? replaced(due, moved.slots) : [];
    if (moved.kind === 'granted' && latestOf(atCall) <= app.slotMs + ask.latenessMs) {
      return { kind: 'granted', slotMs: app.slotMs, from: 'block', due: atCall };
    }
    this.app.untake(ask, { slotMs: app.slotMs, personTimes });
    if (moved.kind !== 'granted') return moved;
    const atMs = latestOf(atCall);
    return { kind: 'wait', scope: 'member-minute', retryAtMs: atMs, held: holdOf(atCall) };
  }

  private async until(t: number): Promise<void> {
    const wait = t - this.now();
    if (wait > 0) await this.sleep(wait);
  }
}

/** Whether a slot this decision reserved leaves its line's next free slot after `t`. */
const standsPast = (slot: LineSlot, t: number): boolean =>
  slot.reserved?.plans.some((p) => p.pace !== undefined && p.slotMs + p.pace.spanMs > t) ?? false;

/** The app call a copy holds, if it is not past use yet. */
const usableCall = (held: HeldReservations | undefined, notBeforeMs: number): HeldCall | undefined =>
  held?.call && held.call.slotMs >= notBeforeMs ? held.call : undefined;

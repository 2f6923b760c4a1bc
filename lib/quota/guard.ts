import { AppLines } from './app-lines.js';
import { appCounters, latenessOf } from './counters.js';
import { compact, type HeldCall, type HeldReservations } from './held.js';
import { QuotaItems } from './items.js';
import {
  type Ask,
  givenOut,
  holdOf,
  type LineSlot,
  latestOf,
  linesOf,
  MemberLines,
  membersOf,
  replaced,
  waitFor,
} from './member-lines.js';
import type { QuotaKey } from './slots.js';
import type { PacedSlot, QuotaStore } from './store.js';
import type { QuotaDecision, QuotaDemand, QuotaScope, SendDecision, SendOutcome, Step } from './types.js';
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

/** The members' slots and the app's call of one send, once both are granted. */
interface Granted {
  /** The app call's slot: when the send goes. */
  slotMs: number;
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
  /** The minute slots each send decision took from its members' lines, for `report`. */
  private readonly givenOut = new WeakMap<SendDecision, { key: QuotaKey; slot: PacedSlot }[]>();

  constructor(store: QuotaStore, opts: QuotaGuardOptions = {}) {
    this.windows = opts.windows ?? WECOM_WINDOWS;
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    // At least a second: a deferred copy arrives up to a second before its slot (SQS delays are whole seconds).
    this.inlineWaitMs = Math.max(1_000, opts.inlineWaitMs ?? 4_000);
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
   * What became of a send this guard allowed. Not sent (WeCom answered an error, or the request never left): its
   * members' minute slots go back to their lines, where nobody has reserved after them meanwhile, so a retry need
   * not wait a pace. Hours and days stay charged (conservative). Sent or in doubt: nothing goes back. At most once
   * per decision; never throws.
   */
  async report(decision: QuotaDecision, outcome: SendOutcome): Promise<void> {
    if (decision.kind !== 'send') return;
    const given = this.givenOut.get(decision) ?? [];
    this.givenOut.delete(decision);
    if (outcome !== 'not-sent') return;
    await Promise.all(given.map(({ key, slot }) => this.items.giveBack(key, slot).catch(() => false)));
  }

  /** The steps of docs/quota.md, "The decision, step by step". */
  private async decide(d: QuotaDemand, until: (t: number) => Promise<void>): Promise<QuotaDecision> {
    const ask = this.askFor(d);
    const now = this.now();
    const behind = await this.app.behind(ask, (key) => this.items.cached(key) !== undefined, now);
    if (behind) return behind;
    const call = usableCall(d.held, now - ask.latenessMs);
    const found = await this.members.slots(ask, linesOf(d), Math.max(now, call?.slotMs ?? now), now);
    if (found.kind !== 'granted') return found;
    const chosen = await this.splitOrAlign(ask, found.slots);
    if (chosen.kind !== 'granted') return chosen;
    const { rest } = chosen;

    const atMs = Math.max(now, latestOf(chosen.due));
    await until(atMs);
    const personTimes = membersOf(chosen.due).length + (d.splittable ? 0 : d.extraPersonTimes);
    const app = await this.appUnits(ask, { due: chosen.due, personTimes, atMs, ...(call ? { call } : {}) });
    if (app.kind === 'never') return app;
    if (app.kind === 'wait') {
      // The app's calls are taken beyond the inline wait: the copy takes the next free one and waits for it, once.
      // The members' slots for now lapse (a wasted slot never harms); later ones stay held.
      const held = await this.app.hold(ask, app, personTimes);
      const aheadMs = this.app.aheadMs(d.priority);
      // Beyond what it may hold, it comes back when the app's next call is halfway into that, and holds one then.
      const beyond = app.scope === 'app-minute' && app.retryAtMs > this.now() + aheadMs;
      const retryAtMs = held?.slotMs ?? (beyond ? app.retryAtMs - aheadMs / 2 : app.retryAtMs);
      const holds = compact({ ...holdOf(rest), ...(held ? { call: held } : {}) });
      return { kind: 'wait', scope: app.scope, retryAtMs, ...(holds ? { held: holds } : {}) };
    }
    const decision: SendDecision = {
      kind: 'send',
      sendAtMs: app.slotMs,
      members: membersOf(app.due),
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
    this.givenOut.set(decision, givenOut(d.app, app.due));
    return decision;
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
    // After reserving (a fan-out to many members takes a while): what is due within the wait from now on goes now.
    const horizon = this.now() + this.inlineWaitMs;
    if (ask.demand.splittable) {
      const due = slots.filter((s) => s.slotMs <= horizon);
      const rest = slots.filter((s) => s.slotMs > horizon);
      return due.length ? { kind: 'granted', due, rest } : waitFor(rest);
    }
    const aligned = await this.members.align(ask, slots);
    if (aligned.kind !== 'granted') return aligned;
    return aligned.atMs > horizon
      ? waitFor(aligned.slots)
      : { kind: 'granted', due: aligned.slots, rest: [] };
  }

  /**
   * One call and the send's person-times: the copy's held call, when its members are there in time and it counted
   * as many person-times (else it lapses); otherwise from the app's lines, following the app's pace when its calls
   * are what is busy within the inline wait.
   */
  private async appUnits(
    ask: Ask,
    s: { due: LineSlot[]; personTimes: number; atMs: number; call?: HeldCall },
  ): Promise<Step<Granted>> {
    const { call } = s;
    if (call && call.personTimes >= s.personTimes && s.atMs <= call.slotMs + ask.latenessMs) {
      return { kind: 'granted', slotMs: call.slotMs, due: s.due };
    }
    const app = await this.app.take(ask, {
      personTimes: s.personTimes,
      notBeforeMs: Math.max(s.atMs, this.now()),
    });
    if (app.kind === 'granted') return { ...app, due: s.due };
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
   * for), then its members take slots at that call (their earlier ones lapse); the send waits for it in the function.
   */
  private async followAppPace(ask: Ask, due: LineSlot[], personTimes: number): Promise<Step<Granted>> {
    const app = await this.app.take(ask, {
      personTimes,
      notBeforeMs: this.now(),
      aheadMs: this.inlineWaitMs,
    });
    if (app.kind !== 'granted') return app;
    const moved = await this.members.reserve(
      ask,
      due.map((s) => s.line),
      app.slotMs,
      0,
    );
    if (moved.kind !== 'granted') return moved;
    const atCall = replaced(due, moved.slots);
    // A member busy beyond the call: the call lapses, and the copy comes back for the members' slots.
    const atMs = latestOf(atCall);
    if (atMs > app.slotMs + ask.latenessMs) return { kind: 'wait', scope: 'member-minute', retryAtMs: atMs };
    return { kind: 'granted', slotMs: app.slotMs, due: atCall };
  }

  private async until(t: number): Promise<void> {
    const wait = t - this.now();
    if (wait > 0) await this.sleep(wait);
  }
}

/** The app call a copy holds, if it is not past use yet. */
const usableCall = (held: HeldReservations | undefined, notBeforeMs: number): HeldCall | undefined =>
  held?.call && held.call.slotMs >= notBeforeMs ? held.call : undefined;

import type { QuotaConfig } from '#lib/config/index.js';
import type { Priority } from '#lib/messages/index.js';
import {
  earliestHeld,
  type HeldReservations,
  heldDelaySeconds,
  type QuotaDecision,
  type QuotaDemand,
  QuotaGuard,
  type QuotaWindows,
  WECOM_WINDOWS,
} from '#lib/quota/index.js';
import { InMemoryQuotaStore } from './unit-quota-store.js';

/**
 * A sender's world around the quota guard, on a fake clock: messages arrive, sender containers (guards sharing
 * one in-memory store with DynamoDB's conditional semantics) decide, copies are deferred through a queue that
 * rounds delays down to whole seconds as SQS does, parts go later, some sends fail and are retried. Every send that
 * succeeds lands at WeCom some time after it went; the world records what WeCom would count. An hour of WeCom time
 * plays in milliseconds.
 */

export interface Arrival {
  atMs: number;
  members: string[];
  priority: Priority;
  /** A broadcast (not splittable) instead of a list of users. */
  broadcast?: boolean;
}

export interface WorldOptions {
  quota: QuotaConfig;
  /** Sender containers, each with its own guard (and caches) over one store. */
  containers?: number;
  /** 0..1: the share of sends WeCom answers with an error (nobody gets them); they are retried. */
  failureRate?: number;
  /** Longest way from a send to WeCom (ms); every send lands up to this after it went. */
  transitMaxMs?: number;
  /**
   * How long each send's way is: `random` (uniform up to the longest), or `crowding`, the worst case for a rolling
   * window: sends in the last `transitMaxMs` of every other minute take the longest way and the rest none, so the
   * next minute gets its own sends and those that were due just before it.
   */
  transit?: 'random' | 'crowding';
  /**
   * A stalled container: a copy holding slots is picked up late, by up to this much (ms) after its slot, one copy
   * in five (0: never).
   */
  stallMaxMs?: number;
  random?: () => number;
  windows?: QuotaWindows;
  startMs?: number;
}

/** A copy of a message in the queue. */
interface Copy {
  seq: number;
  arrival: Arrival;
  members: string[];
  held?: HeldReservations;
}

interface Event {
  atMs: number;
  copy: Copy;
  order: number;
}

export interface Landing {
  seq: number;
  member: string;
  /** When WeCom got it. */
  atMs: number;
  /** When it was sent, and the slot its member had for it. */
  sentAtMs: number;
  slotMs: number;
}

export interface Call {
  seq: number;
  atMs: number;
  personTimes: number;
}

/** How long a failed send waits before its retry (the sender's first backoff is up to 5 s). */
const RETRY_MAX_MS = 5_000;
const MINUTE_MS = 60_000;
/** More decisions than this for one message within a minute: it is chasing its slots. */
const LOOKS_A_MINUTE = 60;
/** Copies that hold nothing wake spread over this (the sender's `deferJitterSeconds`). */
const JITTER_MS = 10_000;

export class QuotaWorld {
  readonly store = new InMemoryQuotaStore();
  readonly guards: QuotaGuard[];
  /** Member messages as WeCom received them. */
  readonly landings: Landing[] = [];
  /** The app's `message/send` calls as WeCom received them. */
  readonly calls: Call[] = [];
  /** Messages (by seq) that had a failed send: their order is the retry's, not the acceptance's. */
  readonly failed = new Set<number>();
  readonly never: Copy[] = [];
  /** Per message, how many of its copies are in the queue or being handled. */
  private readonly copies = new Map<number, number>();
  readonly guardDecisions: QuotaDecision[] = [];
  private readonly arrivals: Arrival[] = [];
  private readonly looks = new Map<number, number[]>();
  private error: unknown;
  private nowMs: number;
  private order = 0;
  private readonly events: Event[] = [];
  private timers: { atMs: number; resolve: () => void }[] = [];
  /** Handlers running, and those of them waiting for the clock. */
  private active = 0;
  private sleeping = 0;
  private readonly random: () => number;

  constructor(private readonly opts: WorldOptions) {
    this.nowMs = opts.startMs ?? Date.parse('2026-12-01T08:00:07.250Z');
    this.random = opts.random ?? Math.random;
    this.guards = Array.from(
      { length: opts.containers ?? 1 },
      () =>
        new QuotaGuard(this.store, {
          windows: opts.windows ?? WECOM_WINDOWS,
          now: () => this.nowMs,
          sleep: (ms) => this.sleep(ms),
        }),
    );
  }

  /** Whether a copy of message `seq` is still queued (when the world stopped). */
  waits(seq: number): boolean {
    return (this.copies.get(seq) ?? 0) > 0;
  }

  /** The arrival of message `seq`. */
  arrivalOf(seq: number): Arrival {
    const a = this.arrivals[seq];
    if (!a) throw new Error(`no message ${seq}`);
    return a;
  }

  get now(): number {
    return this.nowMs;
  }

  /** Queues the arrivals (in acceptance order: `seq` is their index) and plays everything until `untilMs`. */
  async run(arrivals: readonly Arrival[], untilMs: number): Promise<void> {
    this.arrivals.push(...arrivals);
    arrivals.forEach((arrival, seq) => {
      this.push({
        atMs: arrival.atMs,
        copy: { seq, arrival, members: arrival.members },
        order: 0,
      });
    });
    for (;;) {
      // Every container runs until it waits: for the clock (an inline wait) or for nothing at all.
      await this.settle();
      if (this.error) throw this.error;
      const at = Math.min(
        this.events[0]?.atMs ?? Number.POSITIVE_INFINITY,
        ...this.timers.map((t) => t.atMs),
      );
      if (!Number.isFinite(at) || at > untilMs) break;
      this.nowMs = Math.max(this.nowMs, at);
      const due = this.timers.filter((t) => t.atMs <= this.nowMs).sort((a, b) => a.atMs - b.atMs);
      this.timers = this.timers.filter((t) => t.atMs > this.nowMs);
      for (const t of due) t.resolve();
      // Everything due at this instant runs together, as the records of one batch do.
      const batch: Event[] = [];
      for (let e = this.events[0]; e && e.atMs <= this.nowMs; e = this.events[0])
        batch.push(...this.events.splice(0, 1));
      // In the order the sender takes a batch up: copies holding slots by their earliest, the others as accepted.
      batch.sort((a, b) => slotOrder(a) - slotOrder(b) || a.order - b.order);
      for (const e of batch) {
        this.active++;
        this.copies.set(e.copy.seq, (this.copies.get(e.copy.seq) ?? 1) - 1);
        void this.handle(e)
          .catch((err: unknown) => {
            this.error ??= err;
          })
          .finally(() => this.active--);
      }
    }
  }

  /**
   * Until every container waits for the clock or for another that does: handlers move on only through the store's
   * round trips (a turn of the event loop each) and the clock, so two turns without a store call, a finished
   * handler or a new wait mean nothing more happens before the clock moves.
   */
  private async settle(): Promise<void> {
    const progress = () => `${this.store.total()}:${this.active}:${this.sleeping}`;
    for (let last = '', quiet = 0; quiet < 2 && this.active > 0; ) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const now = progress();
      quiet = now === last ? quiet + 1 : 0;
      last = now;
    }
  }

  /** The guards' clock waits: resolved when the world's clock gets there. */
  private sleep(ms: number): Promise<void> {
    this.sleeping++;
    return new Promise<void>((resolve) => {
      this.timers.push({
        atMs: this.nowMs + ms,
        resolve: () => {
          this.sleeping--;
          resolve();
        },
      });
    });
  }

  private async handle(e: Event): Promise<void> {
    const { copy } = e;
    // Copies due at one instant reach one container (its batch); others any (SQS standard queues keep no order).
    const guard = this.guards[Math.floor(e.atMs) % this.guards.length];
    if (!guard) throw new Error('no container');
    // As the sender asks: waiting in-process for slots within the inline wait.
    const decision = await guard.acquire(this.demandOf(copy));
    this.guardDecisions.push(decision);
    // A copy that keeps coming back within moments of its last look is chasing its slots: stop the world there.
    const looks = (this.looks.get(copy.seq) ?? []).filter((t) => t > this.nowMs - MINUTE_MS);
    looks.push(this.nowMs);
    this.looks.set(copy.seq, looks);
    if (looks.length > LOOKS_A_MINUTE)
      throw new Error(
        `message ${copy.seq} looked ${looks.length} times in a minute: ${JSON.stringify(decision)}`,
      );
    if (decision.kind === 'never') {
      this.never.push(copy);
      return;
    }
    if (decision.kind === 'wait') {
      const next = { ...copy, ...(decision.held ? { held: decision.held } : {}) };
      if (!decision.held) delete next.held;
      this.defer(next, decision.retryAtMs, decision.held !== undefined);
      return;
    }
    const sentAt = this.nowMs;
    if (this.random() < (this.opts.failureRate ?? 0)) {
      // WeCom answered an error: reported at once, and the copy comes back after a backoff.
      this.failed.add(copy.seq);
      await guard.report(decision, 'not-sent');
      this.push({ atMs: sentAt + this.random() * RETRY_MAX_MS, copy, order: 0 });
      return;
    }
    const landsAt = sentAt + this.transitOf(sentAt);
    for (const member of decision.members) {
      this.landings.push({
        seq: copy.seq,
        member,
        atMs: landsAt,
        slotMs: decision.slots[member] ?? Number.NaN,
        sentAtMs: sentAt,
      });
    }
    this.calls.push({ seq: copy.seq, atMs: landsAt, personTimes: decision.members.length });
    if (decision.rest) {
      const part: Copy = {
        seq: copy.seq,
        arrival: copy.arrival,
        members: decision.rest.members,
        held: decision.rest.held,
      };
      this.defer(part, decision.rest.wakeAtMs, true);
    }
  }

  private transitOf(sentAtMs: number): number {
    const longest = this.opts.transitMaxMs ?? 0;
    if (this.opts.transit !== 'crowding') return this.random() * longest;
    const minuteMs = 60_000;
    const minute = Math.floor(sentAtMs / minuteMs);
    return minute % 2 === 0 && sentAtMs >= (minute + 1) * minuteMs - longest ? longest : 0;
  }

  private demandOf(copy: Copy): QuotaDemand {
    return {
      app: 'ops',
      quota: this.opts.quota,
      priority: copy.arrival.priority,
      members: copy.members,
      splittable: !copy.arrival.broadcast,
      extraPersonTimes: 0,
      broadcasts: 0,
      broadcastShare: 0,
      ...(copy.held ? { held: copy.held } : {}),
    };
  }

  /** As the sender defers a copy: holding slots, it arrives up to a second before them (SQS delays are whole seconds). */
  private defer(copy: Copy, wakeAtMs: number, exact: boolean): void {
    const wake = exact ? wakeAtMs : wakeAtMs + this.random() * JITTER_MS;
    const seconds = exact ? heldDelaySeconds(wake, this.nowMs) : Math.ceil((wake - this.nowMs) / 1000);
    const delayMs = Math.max(exact ? 0 : 1, seconds) * 1000;
    // A copy is picked up a little after it becomes visible (long polling), within the pick-up the sender allows;
    // now and then much later (a stalled container).
    const stall = exact && this.random() < 0.2 ? this.random() * (this.opts.stallMaxMs ?? 0) : 0;
    const atMs =
      stall > 0 ? Math.max(this.nowMs, wakeAtMs + stall) : this.nowMs + delayMs + this.random() * 50;
    this.push({ atMs, copy, order: 1 });
  }

  private push(e: Event): void {
    this.copies.set(e.copy.seq, (this.copies.get(e.copy.seq) ?? 0) + 1);
    const withOrder = { ...e, order: this.order++ };
    const at = this.events.findIndex((x) => x.atMs > withOrder.atMs);
    if (at < 0) this.events.push(withOrder);
    else this.events.splice(at, 0, withOrder);
  }
}

const slotOrder = (e: Event): number => earliestHeld(e.copy.held) ?? e.copy.arrival.atMs;

/** The most any rolling window of `lengthMs` holds of weighted events, wherever it starts. */
export function maxWeightInRollingWindow(
  events: readonly { atMs: number; weight: number }[],
  lengthMs: number,
): number {
  const sorted = [...events].sort((a, b) => a.atMs - b.atMs);
  let best = 0;
  let sum = 0;
  let end = 0;
  for (const start of sorted) {
    for (let e = sorted[end]; e && e.atMs < start.atMs + lengthMs; e = sorted[end]) {
      sum += e.weight;
      end++;
    }
    best = Math.max(best, sum);
    sum -= start.weight;
  }
  return best;
}

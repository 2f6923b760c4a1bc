import { bucketMsOf, type CounterSpec } from './slots.js';
import type { CounterReservation } from './store.js';

interface Block {
  /** Calls reserved ahead: the next one may go at `nextMs`, each later one a pace after it. */
  calls?: { nextMs: number; left: number; paceMs: number };
  /** Person-times reserved ahead, counted in a bucket of the day that ends at `untilMs`. */
  personTimes?: { left: number; untilMs: number };
}

export type Taken = { ok: true; slotMs: number } | { ok: false; needCalls: boolean; needPersonTimes: number };

/**
 * The app-level units a container has reserved ahead, per app and priority. The records of a batch queue up for
 * them; the block a reservation asks for is sized by what is queued, so a full batch costs about one request, and
 * a quiet sender does not reserve what it will not use (units it does not use in time lapse: never harmful, only
 * unused).
 */
export class AppBlocks {
  private readonly blocks = new Map<string, Block>();
  private readonly queued = new Map<string, { calls: number; personTimes: number }>();
  /** Per key: when each recent take happened and its person-times (for `recent`). */
  private readonly taken = new Map<string, { atMs: number; personTimes: number }[]>();

  constructor(private readonly now: () => number) {}

  /**
   * Announces a caller that will want one call and `personTimes`. The returned function is called when its turn
   * comes: it answers what is queued at that moment (the caller included) and withdraws the caller.
   */
  expect(key: string, personTimes: number): () => { calls: number; personTimes: number } {
    const q = this.queued.get(key) ?? { calls: 0, personTimes: 0 };
    q.calls++;
    q.personTimes += personTimes;
    this.queued.set(key, q);
    return () => {
      const demand = { ...q };
      q.calls--;
      q.personTimes -= personTimes;
      if (q.calls === 0) this.queued.delete(key);
      return demand;
    };
  }

  /**
   * One call at or after `notBeforeMs` (at most `aheadMs` after it) and `personTimes` from the block, or what is
   * missing. Calls whose time passed by more than `latenessMs` lapse.
   */
  take(
    key: string,
    personTimes: number,
    notBeforeMs: number,
    latenessMs: number,
    aheadMs = latenessMs,
  ): Taken {
    const b = this.blocks.get(key) ?? {};
    const calls = b.calls;
    if (calls && calls.nextMs < notBeforeMs - latenessMs) {
      const skip = Math.ceil((notBeforeMs - latenessMs - calls.nextMs) / calls.paceMs);
      calls.nextMs += skip * calls.paceMs;
      calls.left -= skip;
    }
    const callOk = calls !== undefined && calls.left > 0 && calls.nextMs <= notBeforeMs + aheadMs;
    const pt = b.personTimes;
    const ptOk =
      personTimes === 0 ||
      (pt !== undefined && pt.left >= personTimes && Math.max(notBeforeMs, this.now()) < pt.untilMs);
    if (!callOk || !ptOk) return { ok: false, needCalls: !callOk, needPersonTimes: ptOk ? 0 : personTimes };
    const slotMs = Math.max(notBeforeMs, calls.nextMs);
    calls.nextMs += calls.paceMs;
    calls.left--;
    if (pt) pt.left -= personTimes;
    const log = this.taken.get(key) ?? [];
    log.push({ atMs: this.now(), personTimes });
    this.taken.set(key, log);
    return { ok: true, slotMs };
  }

  /**
   * What this container took for `key` over the last `windowMs`: a sender that gets one record per invocation
   * (a trickle) still reserves a block that lasts it a while (its unused units lapse after `windowMs`).
   */
  recent(key: string, windowMs: number): { calls: number; personTimes: number } {
    const from = this.now() - windowMs;
    const log = (this.taken.get(key) ?? []).filter((t) => t.atMs >= from);
    if (log.length) this.taken.set(key, log);
    else this.taken.delete(key);
    return { calls: log.length, personTimes: log.reduce((n, t) => n + t.personTimes, 0) };
  }

  /** A new reservation's units join the block (replacing those of the same kind, which it follows). */
  add(
    key: string,
    plans: readonly CounterReservation[],
    specs: { calls: CounterSpec; personTimes: CounterSpec },
  ) {
    const b = this.blocks.get(key) ?? {};
    const calls = plans.find((p) => p.counter === specs.calls.name);
    if (calls) {
      const paceMs = specs.calls.pools[calls.pool].paceMs ?? 0;
      b.calls = { nextMs: calls.slotMs, left: calls.amount, paceMs };
    }
    const pt = plans.filter((p) => p.counter === specs.personTimes.name);
    if (pt.length > 0) {
      const bucketMs = bucketMsOf(specs.personTimes);
      b.personTimes = {
        left: pt.reduce((n, p) => n + p.amount, 0),
        untilMs: ((pt[0] as CounterReservation).bucket + 1) * bucketMs,
      };
    }
    this.blocks.set(key, b);
  }
}

import type { Priority } from '#lib/messages/index.js';
import { KeyedQueue } from '#lib/util/index.js';
import {
  bestSlots,
  blindSlot,
  type CounterSpec,
  type CounterStates,
  emptyPool,
  grantedSlot,
  type QuotaKey,
} from './slots.js';
import type { CounterReservation, PacedSlot, QuotaStore } from './store.js';

/** Not written: the earliest slot is later than the caller may wait (or the key stayed contended). */
export interface Later {
  laterMs: number;
  counter: string;
  boundBy: 'minute' | 'window';
}

export interface Want {
  spec: CounterSpec;
  amount: number;
}

/** Where a reservation landed, and which window set its time. */
export interface Reserved {
  slotMs: number;
  boundBy: 'minute' | 'window';
  plans: CounterReservation[];
}

/** Keys this container remembers (one quota item each, a few hundred bytes). */
const CACHE_KEYS = 10_000;
/** A contended key is planned again at most this often before the message waits a little and tries again. */
const MAX_ATTEMPTS = 6;

/**
 * Reservations on quota items (one per member, the app, its broadcasts), as this container makes them: planned from
 * what it last saw of the item (lib/quota) and written with one conditional UpdateItem, one at a time per key in
 * arrival order. The store's answer replaces what the container knew.
 */
export class QuotaItems {
  /** What this container last saw of each key: plans start from it, and the store's answer replaces it. */
  private readonly cache = new Map<string, CounterStates>();
  /** One reservation at a time per key in this container, in arrival order (no self-inflicted conflicts). */
  private readonly turns = new KeyedQueue<string>();

  constructor(
    private readonly store: QuotaStore,
    private readonly now: () => number,
  ) {}

  /** Gives a paced slot back (store `giveBack`): true when it went back. */
  giveBack(key: QuotaKey, slot: PacedSlot): Promise<boolean> {
    const name = nameOf(key);
    return this.turns.run(name, async () => {
      const state = await this.store.giveBack(key, slot);
      // Not given back: someone reserved after it; what this container knew is stale either way.
      if (state) this.remember(name, state);
      else this.cache.delete(name);
      return state !== undefined;
    });
  }

  /** What this container last saw of a key. */
  cached(key: QuotaKey): CounterStates | undefined {
    return this.cache.get(nameOf(key));
  }

  /**
   * Plans the wanted units on one item from what this container knows of it and writes them with one conditional
   * UpdateItem. A key never seen here is tried blind (one unit at the wanted time, conditioned on the item's stored
   * ceiling); a refusal brings the item back, and the plan is made again from it. `latestMs`: when the earliest
   * slot would be later, nothing is written and that slot is returned as `laterMs`.
   */
  reserve(
    key: QuotaKey,
    wants: readonly Want[],
    priority: Priority,
    notBeforeMs: number,
    latestMs: number,
    toleranceMs: number,
  ): Promise<Reserved | 'never' | Later> {
    const name = nameOf(key);
    return this.turns.run(name, async () => {
      for (let attempt = 0; ; attempt++) {
        const now = this.now();
        let state = this.cache.get(name);
        const single = wants.length === 1 && wants[0]?.amount === 1 ? (wants[0] as Want) : undefined;
        const blind =
          state === undefined && single ? blindSlot(single.spec, Math.max(now, notBeforeMs)) : undefined;
        let plans: CounterReservation[] | undefined;
        if (blind && single) plans = [{ ...blind, counter: single.spec.name }];
        else {
          state ??= await this.store.read(key);
          this.remember(name, state);
          plans = planItem(state, wants, priority, Math.max(now, notBeforeMs), now, toleranceMs);
          if (!plans) return 'never';
        }
        const slotMs = Math.max(...plans.map((p) => p.slotMs));
        const { counter, boundBy } = bindingOf(plans, state, Math.max(now, notBeforeMs));
        if (slotMs > latestMs) return { laterMs: slotMs, counter, boundBy };
        const longest = Math.max(...wants.map((w) => w.spec.window.lengthMs));
        const res = await this.store.reserve(key, plans, slotMs + 2 * longest);
        this.remember(name, res.state);
        if (res.ok) {
          // A busy paced pool gives the next free slot, wherever concurrent writers left it.
          const granted = plans.map((p) => {
            const after = res.state[p.counter]?.[p.pool];
            return after ? { ...p, slotMs: grantedSlot(after, p) } : p;
          });
          return { slotMs: Math.max(...granted.map((p) => p.slotMs)), boundBy, plans: granted };
        }
        if (attempt >= MAX_ATTEMPTS) {
          // Contended beyond reason: try again a little later, without holding anything.
          return { laterMs: now + 1_000, counter, boundBy };
        }
      }
    });
  }

  private remember(name: string, state: CounterStates): void {
    this.cache.delete(name);
    this.cache.set(name, state);
    if (this.cache.size > CACHE_KEYS) this.cache.delete(this.cache.keys().next().value as string);
  }
}

/** The paced slots of a reservation, as `giveBack` returns them. */
export const pacedSlotsOf = (r: Reserved | undefined): PacedSlot[] =>
  (r?.plans ?? []).flatMap((p) =>
    p.pace ? [{ counter: p.counter, pool: p.pool, fromTat: p.slotMs + p.pace.spanMs, toTat: p.slotMs }] : [],
  );

const nameOf = (key: QuotaKey): string =>
  key.kind === 'member' ? `${key.app}#member#${key.member}` : `${key.app}#${key.kind}`;

/** Plans every wanted counter of one item for one common slot (each may push the others later). */
function planItem(
  state: CounterStates,
  wants: readonly Want[],
  priority: Priority,
  notBeforeMs: number,
  nowMs: number,
  toleranceMs: number,
): CounterReservation[] | undefined {
  let atMs = notBeforeMs;
  for (let round = 0; ; round++) {
    const plans: CounterReservation[] = [];
    for (const w of wants) {
      const pools = state[w.spec.name] ?? { n: emptyPool(), h: emptyPool() };
      const found = bestSlots(pools, w.spec, priority, w.amount, atMs, nowMs, toleranceMs);
      if (!found) return undefined;
      plans.push(...found.map((p) => ({ ...p, counter: w.spec.name })));
    }
    const latest = Math.max(...plans.map((p) => p.slotMs));
    if (latest <= atMs || round >= 8) return plans;
    atMs = latest;
  }
}

/** Which counter set the slot, and whether its pace or its long window did (for the deferral's reason). */
function bindingOf(plans: readonly CounterReservation[], state: CounterStates | undefined, wantedMs: number) {
  const latest = Math.max(...plans.map((p) => p.slotMs));
  const binding = plans.filter((p) => p.slotMs === latest);
  const paced = binding.find((p) => state?.[p.counter]?.[p.pool].tat === latest);
  if (paced || latest <= wantedMs)
    return { counter: (paced ?? binding[0])?.counter ?? '', boundBy: 'minute' as const };
  return { counter: binding[0]?.counter ?? '', boundBy: 'window' as const };
}

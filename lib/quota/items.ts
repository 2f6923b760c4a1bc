import type { Priority } from '#lib/messages/index.js';
import { KeyedQueue } from '#lib/util/index.js';
import { COUNTER } from './counters.js';
import {
  bestSlots,
  blindSlot,
  type CounterSpec,
  type CounterStates,
  earliestSlot,
  emptyPool,
  grantedSlot,
  type Pool,
  type QuotaKey,
} from './slots.js';
import type { CounterReservation, PacedSlot, QuotaStore } from './store.js';
import type { QuotaScope, Step } from './types.js';

/** Units wanted on one counter of an item. */
export interface Want {
  spec: CounterSpec;
  amount: number;
  /** Only this pool (a slot moved to another time keeps its pool); else the best the lane may use. */
  pool?: Pool;
}

/** One reservation on one item: every wanted counter at one common slot. */
export interface ItemAsk {
  key: QuotaKey;
  wants: readonly Want[];
  priority: Priority;
  notBeforeMs: number;
  /** When the earliest slot is later than this, nothing is written and the answer is a wait (default: no bound). */
  latestMs?: number;
  /** How far before `notBeforeMs` a busy line may stand and still be joined. */
  toleranceMs: number;
}

/** A granted reservation: where its first unit is, which window set that time, and what was written. */
export interface Reserved {
  slotMs: number;
  scope: QuotaScope;
  plans: CounterReservation[];
}

/** Keys this container remembers (one quota item each, a few hundred bytes). */
const CACHE_KEYS = 10_000;
/** A contended key is planned again at most this often before the message waits a little and tries again. */
const MAX_ATTEMPTS = 6;
/** How long a copy waits after a key stayed contended through every attempt. */
const CONTENDED_WAIT_MS = 1_000;

/**
 * Reservations on quota items (one per member, the app, its broadcasts), as this container makes them: planned from
 * what it last saw of the item (slots.ts) and written with one conditional UpdateItem, one at a time per key in
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
    const name = keyName(key);
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
    return this.cache.get(keyName(key));
  }

  /**
   * Plans the wanted units on one item from what this container knows of it and writes them with one conditional
   * UpdateItem. A key never seen here is tried blind (one unit at the wanted time, conditioned on the item's stored
   * ceiling); a refusal brings the item back, and the plan is made again from it.
   */
  reserve(ask: ItemAsk): Promise<Step<Reserved>> {
    const name = keyName(ask.key);
    return this.turns.run(name, async () => {
      for (let attempt = 0; ; attempt++) {
        const now = this.now();
        const wantedMs = Math.max(now, ask.notBeforeMs);
        const known = this.cache.get(name);
        let plans = known ? undefined : blindPlans(ask.wants, wantedMs);
        if (!plans) {
          const state = known ?? (await this.store.read(ask.key));
          this.remember(name, state);
          const planned = planItem(state, ask, now);
          if (planned.kind === 'never') return planned;
          plans = planned.plans;
        }
        const slotMs = Math.max(...plans.map((p) => p.slotMs));
        const scope = scopeOf(ask.key, bindingOf(plans, this.cache.get(name), wantedMs));
        if (slotMs > (ask.latestMs ?? Number.POSITIVE_INFINITY))
          return { kind: 'wait', scope, retryAtMs: slotMs };
        const longest = Math.max(...ask.wants.map((w) => w.spec.window.lengthMs));
        const res = await this.store.reserve(ask.key, plans, slotMs + 2 * longest);
        this.remember(name, res.state);
        if (res.ok) {
          // A busy paced pool gives the next free slot, wherever concurrent writers left it.
          const granted = plans.map((p) => {
            const after = res.state[p.counter]?.[p.pool];
            return after ? { ...p, slotMs: grantedSlot(after, p) } : p;
          });
          return {
            kind: 'granted',
            slotMs: Math.max(...granted.map((p) => p.slotMs)),
            scope,
            plans: granted,
          };
        }
        // Contended beyond reason: try again a little later, without holding anything.
        if (attempt >= MAX_ATTEMPTS) return { kind: 'wait', scope, retryAtMs: now + CONTENDED_WAIT_MS };
      }
    });
  }

  private remember(name: string, state: CounterStates): void {
    this.cache.delete(name);
    this.cache.set(name, state);
    const oldest = this.cache.keys().next();
    if (this.cache.size > CACHE_KEYS && !oldest.done) this.cache.delete(oldest.value);
  }
}

/** The paced slots of a reservation, as `giveBack` returns them. */
export const pacedSlotsOf = (r: Reserved): PacedSlot[] =>
  r.plans.flatMap((p) =>
    p.pace ? [{ counter: p.counter, pool: p.pool, fromTat: p.slotMs + p.pace.spanMs, toTat: p.slotMs }] : [],
  );

/** A key's name in this container's maps. */
export const keyName = (key: QuotaKey): string =>
  key.kind === 'member' ? `${key.app}#member#${key.member}` : `${key.app}#${key.kind}`;

/** One unit of one counter, planned without the item (a key this container has not seen). */
function blindPlans(wants: readonly Want[], wantedMs: number): CounterReservation[] | undefined {
  const [only, ...others] = wants;
  if (!only || others.length > 0 || only.amount !== 1 || only.pool === 'h') return undefined;
  const plan = blindSlot(only.spec, wantedMs);
  return plan && [{ ...plan, counter: only.spec.name }];
}

/** Plans every wanted counter of one item for one common slot (each may push the others later). */
function planItem(
  state: CounterStates,
  ask: ItemAsk,
  nowMs: number,
): { kind: 'planned'; plans: CounterReservation[] } | { kind: 'never'; scope: QuotaScope } {
  let atMs = Math.max(nowMs, ask.notBeforeMs);
  for (let round = 0; ; round++) {
    const plans: CounterReservation[] = [];
    for (const w of ask.wants) {
      const pools = state[w.spec.name] ?? { n: emptyPool(), h: emptyPool() };
      const slotAsk = { amount: w.amount, notBeforeMs: atMs, nowMs, toleranceMs: ask.toleranceMs };
      const pinned = w.pool && earliestSlot(pools[w.pool], w.spec, w.pool, slotAsk);
      const found = pinned ? [pinned] : bestSlots(pools, w.spec, ask.priority, slotAsk);
      if (!found) return { kind: 'never', scope: scopeOf(ask.key, { counter: w.spec.name, by: 'window' }) };
      plans.push(...found.map((p) => ({ ...p, counter: w.spec.name })));
    }
    const latest = Math.max(...plans.map((p) => p.slotMs));
    if (latest <= atMs || round >= 8) return { kind: 'planned', plans };
    atMs = latest;
  }
}

/** Which counter set a reservation's slot, and whether its minute (the line) or its long window (the log) did. */
interface Binding {
  counter: string;
  by: 'minute' | 'window';
}

function bindingOf(
  plans: readonly CounterReservation[],
  state: CounterStates | undefined,
  wantedMs: number,
): Binding {
  const latest = Math.max(...plans.map((p) => p.slotMs));
  const binding = plans.filter((p) => p.slotMs === latest);
  const paced = binding.find((p) => state?.[p.counter]?.[p.pool].tat === latest);
  const counter = (paced ?? binding[0])?.counter ?? '';
  return { counter, by: paced || latest <= wantedMs ? 'minute' : 'window' };
}

/** The scope a binding names on this key. */
function scopeOf(key: QuotaKey, b: Binding): QuotaScope {
  const window = b.by === 'minute' ? 'minute' : 'hour';
  if (key.kind !== 'app') return `${key.kind}-${window}`;
  return b.counter === COUNTER.personTimes ? 'app-day' : `app-${window}`;
}

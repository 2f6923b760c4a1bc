import {
  applySlot,
  type CounterReservation,
  type CounterStates,
  emptyPool,
  type PacedSlot,
  type Pool,
  type PoolState,
  planFits,
  type QuotaKey,
  type QuotaStore,
  TAT_TOLERANCE_MS,
} from '#lib/quota/index.js';

const roundTrip = () => new Promise<void>((resolve) => setImmediate(resolve));

export const quotaKeyName = (key: QuotaKey): string =>
  key.kind === 'member' ? `${key.app}#member#${key.member}` : `${key.app}#${key.kind}`;

const clone = (s: CounterStates): CounterStates =>
  Object.fromEntries(
    Object.entries(s).map(([c, pools]) => [
      c,
      { n: { ...pools.n, snaps: new Map(pools.n.snaps) }, h: { ...pools.h, snaps: new Map(pools.h.snaps) } },
    ]),
  );

/**
 * In-memory QuotaStore with the conditional semantics of DynamoQuotaStore: every reservation's condition is checked
 * against the stored item (lib/quota `planFits`, the ConditionExpression) after a simulated round trip, and then all
 * are applied or none. Counts every call, so tests can measure store requests per message.
 */
export class InMemoryQuotaStore implements QuotaStore {
  readonly items = new Map<string, CounterStates>();
  readonly calls = { read: 0, reserve: 0, refused: 0, giveBack: 0 };
  /** Every granted reservation, in the order the store applied them. */
  readonly granted: { key: string; reservation: CounterReservation }[] = [];

  total(): number {
    return this.calls.read + this.calls.reserve + this.calls.giveBack;
  }

  pool(key: QuotaKey, counter: string, pool: Pool): PoolState {
    return this.items.get(quotaKeyName(key))?.[counter]?.[pool] ?? emptyPool();
  }

  async read(key: QuotaKey): Promise<CounterStates> {
    this.calls.read++;
    await roundTrip();
    return clone(this.items.get(quotaKeyName(key)) ?? {});
  }

  async reserve(
    key: QuotaKey,
    reservations: readonly CounterReservation[],
    _expiresAtMs: number,
  ): Promise<{ ok: boolean; state: CounterStates }> {
    this.calls.reserve++;
    await roundTrip();
    const name = quotaKeyName(key);
    const item = clone(this.items.get(name) ?? {});
    const poolOf = (r: CounterReservation) => item[r.counter]?.[r.pool] ?? emptyPool();
    if (!reservations.every((r) => planFits(poolOf(r), r))) {
      this.calls.refused++;
      return { ok: false, state: clone(item) };
    }
    for (const r of reservations) {
      item[r.counter] ??= { n: emptyPool(), h: emptyPool() };
      (item[r.counter] as Record<Pool, PoolState>)[r.pool] = applySlot(poolOf(r), r);
      this.granted.push({ key: name, reservation: r });
    }
    this.items.set(name, item);
    return { ok: true, state: clone(item) };
  }

  async giveBack(key: QuotaKey, slot: PacedSlot): Promise<CounterStates | undefined> {
    this.calls.giveBack++;
    await roundTrip();
    const state = this.items.get(quotaKeyName(key))?.[slot.counter]?.[slot.pool];
    if (state?.tat === undefined || Math.abs(state.tat - slot.fromTat) > TAT_TOLERANCE_MS) return undefined;
    state.tat = slot.toTat;
    return clone(this.items.get(quotaKeyName(key)) ?? {});
  }
}

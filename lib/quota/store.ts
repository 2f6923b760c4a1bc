import type { CounterStates, Pool, QuotaKey, SlotPlan } from './slots.js';

// The store port of the quota engine: lib/store/quota-store.ts is its DynamoDB adapter.

/** One reservation on one counter of an item. */
export interface CounterReservation extends SlotPlan {
  counter: string;
}

/** Port: quota counters, several per item, reserved all or nothing with one conditional write. */
export interface QuotaStore {
  read(key: QuotaKey): Promise<CounterStates>;
  /**
   * Applies every reservation if every one's condition holds against the stored item (lib/quota `planFits`), else
   * none. Either way the answer carries the item as it now is, so a refused caller can plan again without a read.
   */
  reserve(
    key: QuotaKey,
    reservations: readonly CounterReservation[],
    expiresAtMs: number,
  ): Promise<{ ok: boolean; state: CounterStates }>;
  /**
   * Gives a paced slot back: the pool's next free slot moves from `fromTat` back to `toTat`, only if nobody reserved
   * after it meanwhile (else nothing changes). The item as it now is, or undefined when nothing changed.
   */
  giveBack(key: QuotaKey, slot: PacedSlot): Promise<CounterStates | undefined>;
}

/** How far a stored next-free-slot may differ from the caller's copy and still be the same one (see `giveBack`). */
export const TAT_TOLERANCE_MS = 0.001;

/** A slot on a paced pool, as `giveBack` returns it. */
export interface PacedSlot {
  counter: string;
  pool: Pool;
  /** The pool's next free slot right after the slot was granted. */
  fromTat: number;
  /** Where the next free slot goes back to: the slot itself. */
  toTat: number;
}

/**
 * Fixed-window counters. Windows are aligned to `floor(now / windowMs)` (epoch-aligned) rather than
 * sliding: WeCom does not document its window shape, a fixed window is O(1) per check, and it is the
 * stricter reading for a client (a burst at the end of one window and the start of the next is allowed,
 * so a client must not rely on sliding-window smoothing). An offset shifts the alignment: WeCom's day is the
 * China Standard Time calendar day (UTC+8), so the day counter is built with an 8-hour offset.
 */
interface WindowSlot {
  window: number;
  count: number;
}

export class FixedWindowCounter {
  readonly #windowMs: number;
  readonly #offsetMs: number;
  readonly #slots = new Map<string, WindowSlot>();

  constructor(windowMs: number, offsetMs = 0) {
    this.#windowMs = windowMs;
    this.#offsetMs = offsetMs;
  }

  #index(now: number): number {
    return Math.floor((now + this.#offsetMs) / this.#windowMs);
  }

  /** Count already used in the current window. */
  current(key: string, now: number): number {
    const slot = this.#slots.get(key);
    return slot !== undefined && slot.window === this.#index(now) ? slot.count : 0;
  }

  add(key: string, now: number, amount = 1): number {
    const window = this.#index(now);
    const slot = this.#slots.get(key);
    if (slot === undefined) {
      this.#slots.set(key, { window, count: amount });
      return amount;
    }
    if (slot.window !== window) {
      slot.window = window;
      slot.count = 0;
    }
    slot.count += amount;
    return slot.count;
  }

  clear(): void {
    this.#slots.clear();
  }
}

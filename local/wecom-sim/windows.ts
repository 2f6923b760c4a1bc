/**
 * A log of what each key used over the last window length, able to answer under both readings of a WeCom limit
 * (readings.ts `windows`): the use in the current fixed window, or the most used by any rolling window ending
 * now. Keeping the log for either reading lets the reading change at runtime without losing history.
 *
 * Per key: times in arrival order and running totals, so the use since any moment is one binary search and one
 * subtraction. Entries older than the window length can matter to neither reading and are dropped; cost is
 * amortised O(log n) per call.
 */
interface KeyLog {
  times: number[];
  /** totals[i] = everything added up to and including entry i (since the key was created). */
  totals: number[];
  /** The total before entry 0 (what entries already cut off the arrays added up to). */
  base: number;
  /** Entries before `head` are expired. */
  head: number;
}

export interface WindowReading {
  windows: 'fixed' | 'rolling';
  windowOffsetMs: number;
}

const mod = (a: number, n: number): number => ((a % n) + n) % n;

export class WindowLog {
  readonly #lengthMs: number;
  readonly #alignMs: number;
  readonly #logs = new Map<string, KeyLog>();

  /**
   * @param alignMs fixed windows (before any reading offset) start at times ≡ alignMs (mod lengthMs); WeCom's day
   *   starts at midnight China Standard Time, i.e. 16:00 UTC, so the day log is built with -8 h.
   */
  constructor(lengthMs: number, alignMs = 0) {
    this.#lengthMs = lengthMs;
    this.#alignMs = alignMs;
  }

  get lengthMs(): number {
    return this.#lengthMs;
  }

  /** Start of the fixed window holding `now` under the reading's offset. */
  windowStart(now: number, reading: WindowReading): number {
    return now - mod(now - this.#alignMs - reading.windowOffsetMs, this.#lengthMs);
  }

  /** What the key used in the window that counts at `now` under the reading. */
  used(key: string, now: number, reading: WindowReading): number {
    const log = this.#logs.get(key);
    if (log === undefined) return 0;
    this.#expire(log, now);
    if (log.head === log.times.length) {
      this.#logs.delete(key);
      return 0;
    }
    // rolling: entries in (now - length, now]; fixed: entries in [windowStart, now].
    const from = reading.windows === 'rolling' ? now - this.#lengthMs : this.windowStart(now, reading);
    const first = this.#firstIndex(log, from, reading.windows === 'rolling');
    const last = log.totals.length - 1;
    if (first > last) return 0;
    const before = first === 0 ? log.base : (log.totals[first - 1] as number);
    return (log.totals[last] as number) - before;
  }

  add(key: string, now: number, amount = 1): void {
    let log = this.#logs.get(key);
    if (log === undefined) {
      log = { times: [], totals: [], base: 0, head: 0 };
      this.#logs.set(key, log);
    }
    this.#expire(log, now);
    const n = log.times.length;
    // A clock moved backwards (a runtime clock offset) must not unsort the log.
    log.times.push(n === 0 ? now : Math.max(now, log.times[n - 1] as number));
    log.totals.push((n === 0 ? log.base : (log.totals[n - 1] as number)) + amount);
  }

  clear(): void {
    this.#logs.clear();
  }

  #expire(log: KeyLog, now: number): void {
    const cutoff = now - this.#lengthMs;
    while (log.head < log.times.length && (log.times[log.head] as number) <= cutoff) log.head++;
    if (log.head > 64 && log.head * 2 > log.times.length) {
      log.base = log.totals[log.head - 1] as number;
      log.times.splice(0, log.head);
      log.totals.splice(0, log.head);
      log.head = 0;
    }
  }

  /** First live index whose time is >= t (or > t when `after`). */
  #firstIndex(log: KeyLog, t: number, after: boolean): number {
    let lo = log.head;
    let hi = log.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const time = log.times[mid] as number;
      if (after ? time > t : time >= t) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

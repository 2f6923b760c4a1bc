/**
 * The order in which the simulator recorded what it keeps (inbox entries, drops, suppressed duplicates, undelivered
 * sends): their timestamps are milliseconds, and two sends in one millisecond (or under a fake clock) tie, so the
 * timeline breaks ties by this.
 */
const arrivals = new WeakMap<object, number>();
let last = 0;

/** Marks a record as the latest recorded; returns it. */
export function stampArrival<T extends object>(record: T): T {
  arrivals.set(record, ++last);
  return record;
}

/** When a record was recorded relative to the others (0 for one never stamped). */
export const arrivalOf = (record: object): number => arrivals.get(record) ?? 0;

/** A shallow copy of a record that keeps its place in the order (what the simulator's readers hand out). */
export function copyWithArrival<T extends object>(record: T): T {
  const copy = { ...record };
  const at = arrivals.get(record);
  if (at !== undefined) arrivals.set(copy, at);
  return copy;
}

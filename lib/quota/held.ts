/**
 * What a deferred copy holds: the reservations made for it, which it wakes for and uses once (docs/quota.md,
 * "hold"). It travels in the copy's SQS body (lib/model `QueuedPart.reservations`), so its shape is a wire format:
 * add optional fields only.
 */
export interface HeldReservations {
  /** Case-folded member → the slot reserved on its line (epoch ms). */
  members?: Readonly<Record<string, number>>;
  /** The slot reserved on the app's shared broadcast allowance. */
  broadcastMs?: number;
  /** An app call reserved for this copy, with the person-times it counted. */
  call?: HeldCall;
}

export interface HeldCall {
  slotMs: number;
  personTimes: number;
}

/**
 * A copy holding reservations arrives at least this long before its earliest (its pick-up from the queue takes a
 * moment), and the guard waits the rest in-process: copies arriving after their slots would go in the order they
 * were picked up, not in the order of their slots.
 */
export const PICKUP_MS = 250;

/**
 * The queue delay (whole seconds, as SQS takes them) of a copy that holds reservations from `wakeAtMs` on: it
 * arrives between a second and a pick-up before them, never after.
 *
 * @example await queue.enqueue(lane, copy, heldDelaySeconds(earliestHeld(held), Date.now()));
 */
export const heldDelaySeconds = (wakeAtMs: number, nowMs: number): number =>
  Math.max(0, Math.floor((wakeAtMs - nowMs - PICKUP_MS) / 1000));

/** Every slot the reservations hold. */
export const heldSlots = (held: HeldReservations | undefined): number[] => [
  ...Object.values(held?.members ?? {}),
  ...(held?.broadcastMs !== undefined ? [held.broadcastMs] : []),
  ...(held?.call ? [held.call.slotMs] : []),
];

/** The earliest slot held, or undefined when nothing is. */
export function earliestHeld(held: HeldReservations | undefined): number | undefined {
  const slots = heldSlots(held);
  return slots.length ? Math.min(...slots) : undefined;
}

/** Held reservations with their empty fields left out; undefined when nothing is held. */
export function compact(held: HeldReservations): HeldReservations | undefined {
  const members = held.members && Object.keys(held.members).length ? held.members : undefined;
  const out: HeldReservations = {
    ...(members ? { members } : {}),
    ...(held.broadcastMs !== undefined ? { broadcastMs: held.broadcastMs } : {}),
    ...(held.call ? { call: held.call } : {}),
  };
  return Object.keys(out).length ? out : undefined;
}

/** Both holds together (their members are distinct). */
export function mergeHeld(a: HeldReservations, b: HeldReservations): HeldReservations {
  const members = { ...a.members, ...b.members };
  const broadcastMs = a.broadcastMs ?? b.broadcastMs;
  const call = a.call ?? b.call;
  return (
    compact({ members, ...(broadcastMs !== undefined ? { broadcastMs } : {}), ...(call ? { call } : {}) }) ??
    {}
  );
}

/** The member slots of `held` for these (case-folded) members only: what a part for them keeps. */
export function heldFor(held: HeldReservations | undefined, members: Iterable<string>): HeldReservations {
  const kept: Record<string, number> = {};
  for (const m of members) {
    const slot = held?.members?.[m];
    if (slot !== undefined) kept[m] = slot;
  }
  return Object.keys(kept).length ? { members: kept } : {};
}

/** Keys of the map older bodies carried instead: `~broadcast`, and `~app:<person-times>` for a held call. */
const LEGACY_BROADCAST = '~broadcast';
const LEGACY_CALL = '~app:';

/**
 * Reads the held slots of a body queued by a version before `HeldReservations` (one map: case-folded member, or
 * one of the two keys above, → slot). Bodies stay queued up to 14 days, so this stays until none can be left.
 */
export function fromLegacyHeld(map: Readonly<Record<string, unknown>>): HeldReservations | undefined {
  const members: Record<string, number> = {};
  const held: HeldReservations = {};
  for (const [key, slotMs] of Object.entries(map)) {
    if (typeof slotMs !== 'number') continue;
    if (key === LEGACY_BROADCAST) held.broadcastMs = slotMs;
    else if (key.startsWith(LEGACY_CALL)) {
      const personTimes = Number(key.slice(LEGACY_CALL.length));
      if (Number.isInteger(personTimes) && personTimes >= 0) held.call = { slotMs, personTimes };
    } else members[key] = slotMs;
  }
  return compact({ ...held, members });
}

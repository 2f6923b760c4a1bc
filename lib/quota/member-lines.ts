import type { AppCounters } from './counters.js';
import type { HeldReservations } from './held.js';
import { pacedSlotsOf, type QuotaItems, type Reserved } from './items.js';
import type { Pool, QuotaKey } from './slots.js';
import type { PacedSlot } from './store.js';
import type { QuotaDemand, Step, WaitDecision } from './types.js';

/**
 * The members' lines (docs/quota.md): one per member a send reaches, and one for the app's shared broadcast
 * allowance, which broadcasts of configured size are charged to. Slots are handed out on each line in arrival
 * order; a copy that holds one uses it, if it is not older than the lateness.
 */
export type Line = { kind: 'member'; member: string } | { kind: 'broadcast' };

/**
 * A line's slot for this send: held by the copy, or reserved by this decision (`reserved`: what a give-back
 * returns; cleared once given back, so nothing goes back twice).
 */
export interface LineSlot {
  line: Line;
  slotMs: number;
  reserved?: Reserved | undefined;
}

/** One demand with the terms it is reserved under: the app's counters, the lateness and the tolerance. */
export interface Ask {
  demand: QuotaDemand;
  counters: AppCounters;
  latenessMs: number;
  toleranceMs: number;
}

/** Members reserved at once for one message: a message to 1,000 users must not open 1,000 requests. */
const PARALLEL = 25;
/** A broadcast whose members keep moving its time on gives up after this many rounds, and tries later. */
const ALIGN_ROUNDS = 3;

/** The lines a demand reaches: its members, then the broadcast allowance when it has broadcasts of configured size. */
export const linesOf = (d: QuotaDemand): Line[] => [
  ...d.members.map((member): Line => ({ kind: 'member', member })),
  ...(d.broadcasts > 0 ? [{ kind: 'broadcast' } as const] : []),
];

/** The item a line's slots are kept in. */
export const keyOf = (app: string, line: Line): QuotaKey =>
  line.kind === 'broadcast' ? { app, kind: 'broadcast' } : { app, kind: 'member', member: line.member };

/** The members among some line slots (the broadcast allowance is no recipient). */
export const membersOf = (slots: readonly LineSlot[]): string[] =>
  slots.flatMap((s) => (s.line.kind === 'member' ? [s.line.member] : []));

/** The latest of some slots. */
export const latestOf = (slots: readonly LineSlot[]): number => Math.max(...slots.map((s) => s.slotMs));

/** What a copy holds for these line slots. */
export function holdOf(slots: readonly LineSlot[]): HeldReservations {
  const members: Record<string, number> = {};
  let broadcastMs: number | undefined;
  for (const s of slots) {
    if (s.line.kind === 'member') members[s.line.member] = s.slotMs;
    else broadcastMs = s.slotMs;
  }
  return {
    ...(Object.keys(members).length ? { members } : {}),
    ...(broadcastMs !== undefined ? { broadcastMs } : {}),
  };
}

/**
 * Nothing to send now: the copy waits, holding every slot, for the earliest of them (a list of users: whoever is due
 * then goes) or, for a broadcast, for the latest (it goes to everyone at once).
 */
export function waitFor(slots: readonly LineSlot[], until: 'earliest' | 'latest' = 'earliest'): WaitDecision {
  const pick = (a: LineSlot, b: LineSlot) =>
    until === 'earliest' ? (a.slotMs <= b.slotMs ? a : b) : a.slotMs >= b.slotMs ? a : b;
  const first = slots.reduce(pick);
  // A held slot's window is not known any more; the minute is what holds most.
  const scope = first.reserved?.scope ?? (`${first.line.kind}-minute` as const);
  return { kind: 'wait', scope, retryAtMs: first.slotMs, held: holdOf(slots) };
}

export class MemberLines {
  constructor(private readonly items: QuotaItems) {}

  /**
   * A slot on every line: a held one where the copy holds one not older than the lateness, else the earliest from
   * `notBeforeMs` on (in the order of `lines`).
   */
  async slots(
    ask: Ask,
    lines: readonly Line[],
    notBeforeMs: number,
    nowMs: number,
  ): Promise<Step<{ slots: LineSlot[] }>> {
    const held = ask.demand.held;
    const usable = (slotMs: number | undefined) =>
      slotMs !== undefined && slotMs >= nowMs - ask.latenessMs ? slotMs : undefined;
    const heldSlot = (line: Line) =>
      usable(line.kind === 'member' ? held?.members?.[line.member] : held?.broadcastMs);
    const missing = lines.filter((line) => heldSlot(line) === undefined);
    const reserved = await this.reserve(ask, missing, notBeforeMs, ask.toleranceMs);
    if (reserved.kind !== 'granted') return reserved;
    const kept = lines.flatMap((line) => {
      const slotMs = heldSlot(line);
      return slotMs !== undefined ? [{ line, slotMs }] : [];
    });
    const order = new Map(lines.map((line, i) => [line, i]));
    const rank = (s: LineSlot) => order.get(s.line) ?? 0;
    return { kind: 'granted', slots: [...kept, ...reserved.slots].sort((a, b) => rank(a) - rank(b)) };
  }

  /** Slots on these lines, `PARALLEL` at a time, each at its earliest from `notBeforeMs` on. */
  async reserve(
    ask: Ask,
    lines: readonly Line[],
    notBeforeMs: number,
    toleranceMs: number,
  ): Promise<Step<{ slots: LineSlot[] }>> {
    return this.reserveOn(ask, { lines, notBeforeMs, toleranceMs });
  }

  /**
   * Moves line slots to `toMs` or later: the ones this decision reserved go back to their lines first, and are
   * taken again on the same pool, so that no later message can take the slot given back and pass this one.
   */
  async move(ask: Ask, slots: readonly LineSlot[], toMs: number): Promise<Step<{ slots: LineSlot[] }>> {
    const pools = new Map<Line, Pool>();
    for (const s of slots) {
      const pool = s.reserved?.plans.find((p) => p.pace)?.pool;
      if (pool) pools.set(s.line, pool);
    }
    await this.release(ask, slots);
    return this.reserveOn(ask, { lines: slots.map((s) => s.line), notBeforeMs: toMs, toleranceMs: 0, pools });
  }

  private async reserveOn(
    ask: Ask,
    r: { lines: readonly Line[]; notBeforeMs: number; toleranceMs: number; pools?: ReadonlyMap<Line, Pool> },
  ): Promise<Step<{ slots: LineSlot[] }>> {
    const slots: LineSlot[] = [];
    for (let i = 0; i < r.lines.length; i += PARALLEL) {
      const results = await Promise.all(
        r.lines.slice(i, i + PARALLEL).map(async (line) => {
          const pool = r.pools?.get(line);
          return {
            line,
            result: await this.reserveOne(ask, {
              line,
              notBeforeMs: r.notBeforeMs,
              toleranceMs: r.toleranceMs,
              ...(pool ? { pool } : {}),
            }),
          };
        }),
      );
      for (const { line, result } of results) {
        if (result.kind !== 'granted') return result;
        slots.push({ line, slotMs: result.slotMs, reserved: result });
      }
    }
    return { kind: 'granted', slots };
  }

  /**
   * A broadcast goes to everyone at once: every line's slot moves to the latest one (`move`). Gives up, holding nothing, if members keep moving the time on.
   */
  async align(ask: Ask, start: readonly LineSlot[]): Promise<Step<{ slots: LineSlot[]; atMs: number }>> {
    let slots = [...start];
    for (let round = 0; round < ALIGN_ROUNDS; round++) {
      const atMs = latestOf(slots);
      const early = slots.filter((s) => s.slotMs < atMs - ask.latenessMs);
      if (early.length === 0) return { kind: 'granted', slots, atMs };
      const again = await this.move(ask, early, atMs);
      if (again.kind !== 'granted') return again;
      slots = replaced(slots, again.slots);
    }
    return { kind: 'wait', scope: 'member-minute', retryAtMs: latestOf(slots) };
  }

  /**
   * Slots this decision reserved and does not use go back to their lines (where nobody reserved after them), so
   * that a line the copy waits on is not pushed a pace further every time it tries. Held slots stay as they are:
   * the copy's body still names them, and a copy whose deferral failed comes back with it.
   */
  async release(ask: Ask, slots: readonly LineSlot[]): Promise<void> {
    await Promise.all(
      slots.map(async (s) => {
        const reserved = s.reserved;
        if (!reserved) return;
        s.reserved = undefined;
        const key = keyOf(ask.demand.app, s.line);
        const spec = s.line.kind === 'broadcast' ? ask.counters.broadcast : ask.counters.member;
        // Not a slot in `n` when `h`, which only high uses, has handed out a later one since: the next high message
        // would take the slot given back and go before that later one. (A later slot in `n` than one in `h` is
        // normal's: a high message would have taken `h`, and `h` would not be free to give back.)
        const passed = (slot: PacedSlot) => {
          if (slot.pool !== 'n') return false;
          const h = this.items.cached(key)?.[slot.counter]?.h;
          const pace = spec.pools.h.paceMs;
          return h?.tat !== undefined && pace !== undefined && h.tat - pace > slot.toTat;
        };
        const back = pacedSlotsOf(reserved).filter((slot) => !passed(slot));
        await Promise.all(back.map((slot) => this.items.giveBack(key, slot).catch(() => false)));
      }),
    );
  }

  private reserveOne(
    ask: Ask,
    r: { line: Line; notBeforeMs: number; toleranceMs: number; pool?: Pool },
  ): Promise<Step<Reserved>> {
    const { demand: d, counters } = ask;
    const want =
      r.line.kind === 'broadcast'
        ? { spec: counters.broadcast, amount: d.broadcasts }
        : { spec: counters.member, amount: 1 };
    return this.items.reserve({
      key: keyOf(d.app, r.line),
      wants: [{ ...want, ...(r.pool ? { pool: r.pool } : {}) }],
      priority: d.priority,
      notBeforeMs: r.notBeforeMs,
      toleranceMs: r.toleranceMs,
    });
  }
}

/** `slots` with the lines of `newer` replaced by their newer slots. */
export function replaced(slots: readonly LineSlot[], newer: readonly LineSlot[]): LineSlot[] {
  const byLine = new Map(newer.map((s) => [s.line, s]));
  return slots.map((s) => byLine.get(s.line) ?? s);
}

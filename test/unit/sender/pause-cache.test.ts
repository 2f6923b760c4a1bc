import { describe, expect, it } from 'vitest';
import { WECOM_WINDOWS } from '#lib/quota/index.js';
import { dayEndOf, nextPause, PauseCache, type PauseSchedule } from '#lib/sender/index.js';
import type { AppPause } from '#lib/store/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { InMemoryPauseStore } from '#test/helpers/unit-pause-store.js';

const START = Date.parse('2026-12-01T02:00:07Z'); // 10:00:07 in China Standard Time
const pause = (over: Partial<AppPause> = {}): AppPause => ({
  kind: 'rate_limited',
  untilMs: START + 60_000,
  sinceMs: START,
  level: 0,
  reason: 'errcode 45009 from message/send',
  ...over,
});

/** Two containers' caches over one store, a second after a minute's pause ended. */
async function twoContainersAfterPause() {
  const clock = fakeClock(START);
  const store = new InMemoryPauseStore();
  await store.put('ops', pause());
  const a = new PauseCache(store, { now: clock.now });
  const b = new PauseCache(store, { now: clock.now });
  clock.advance(61_000);
  return { clock, store, a, b };
}

describe('PauseCache', () => {
  it('reads the store at most once per refresh interval per app', async () => {
    const clock = fakeClock(START);
    const store = new InMemoryPauseStore();
    const cache = new PauseCache(store, { now: clock.now });

    for (let i = 0; i < 10; i++) {
      expect(await cache.gate('ops')).toEqual({ state: 'closed' });
      clock.advance(400);
    }

    expect(store.calls.get).toBe(1);
  });

  it('learns a pause another container wrote within the refresh interval', async () => {
    const clock = fakeClock(START);
    const store = new InMemoryPauseStore();
    const cache = new PauseCache(store, { now: clock.now });
    await cache.gate('ops');

    await store.put('ops', pause());
    clock.advance(5_000);

    expect(await cache.gate('ops')).toMatchObject({ state: 'paused', retryAtMs: START + 60_000 });
  });

  it('lets one record of one container probe after the pause; the others wait for its lease', async () => {
    const { store, a, b } = await twoContainersAfterPause();

    const gates = await Promise.all([...Array(5)].flatMap(() => [a.gate('ops'), b.gate('ops')]));

    expect(gates.filter((g) => g.state === 'probe')).toHaveLength(1);
    for (const g of gates.filter((g) => g.state !== 'probe'))
      expect(g).toMatchObject({ state: 'paused', retryAtMs: expect.any(Number) });
    expect(store.calls.claimProbe).toBeLessThanOrEqual(2);
  });

  it('has the others look again within seconds while a probe is in flight, not at its 30 s lease’s end', async () => {
    const { clock, a, b } = await twoContainersAfterPause();

    expect(await a.gate('ops')).toMatchObject({ state: 'probe' });
    const sameContainer = await a.gate('ops');
    const otherContainer = await b.gate('ops');

    for (const g of [sameContainer, otherContainer])
      expect(g).toMatchObject({ state: 'paused', retryAtMs: clock.now() + 5_000 });
  });

  it('ends the run when the probe succeeds: everyone sends again', async () => {
    const clock = fakeClock(START);
    const store = new InMemoryPauseStore();
    await store.put('ops', pause());
    const cache = new PauseCache(store, { now: clock.now });
    clock.advance(61_000);
    const gate = await cache.gate('ops');
    if (gate.state !== 'probe') throw new Error('expected to probe');

    await cache.probeSucceeded('ops', gate.pause);

    expect(store.pauses.has('ops')).toBe(false);
    expect(await cache.gate('ops')).toEqual({ state: 'closed' });
  });

  it('probes at once when the app configuration changed since the configuration error (the operator fixed it)', async () => {
    const clock = fakeClock(START);
    const store = new InMemoryPauseStore();
    await store.put(
      'ops',
      pause({ kind: 'config_error', errcode: 40001, configHash: 'old', untilMs: START + 900_000 }),
    );
    const cache = new PauseCache(store, { now: clock.now });

    expect(await cache.gate('ops', 'old')).toMatchObject({ state: 'paused' });
    expect(await cache.gate('ops', 'new')).toMatchObject({ state: 'probe' });
  });
});

describe('nextPause', () => {
  const schedule: PauseSchedule = {
    rateLimitFirstMs: 60_000,
    configStepsMs: [60_000, 120_000, 300_000, 600_000, 900_000],
    windows: WECOM_WINDOWS,
  };
  const error45009 = { kind: 'rate_limited' as const, reason: 'errcode 45009', errcode: 45009 };

  it('grows a run of 45009 pauses: a minute, 5 minutes, an hour, then the rest of WeCom’s day', () => {
    let now = START;
    let current: AppPause | undefined;
    const lengths: number[] = [];
    for (let i = 0; i < 5; i++) {
      const next = nextPause(current, error45009, now, schedule);
      if (!next) throw new Error('no pause');
      lengths.push(next.untilMs - now);
      current = next;
      now = next.untilMs; // the probe right after the pause gets 45009 again
    }
    expect(lengths.slice(0, 3)).toEqual([60_000, 300_000, 3_600_000]);
    // Midnight in China Standard Time, whatever the time zone of the clock.
    expect(new Date(START + 60_000 + 300_000 + 3_600_000 + (lengths[3] ?? 0)).toISOString()).toBe(
      '2026-12-01T16:00:00.000Z',
    );
    expect(current?.level).toBe(4);
    expect(current?.sinceMs).toBe(START);
  });

  it('does not lengthen a pause for a send that started before the pause was known', () => {
    const current = nextPause(undefined, error45009, START, schedule);
    expect(nextPause(current, error45009, START + 1_000, schedule)).toBeUndefined();
  });

  it('never pauses past the end of WeCom’s day, and starts a new run long after the last pause', () => {
    const lateEvening = dayEndOf(START, WECOM_WINDOWS) - 30_000;
    expect(nextPause(undefined, error45009, lateEvening, schedule)?.untilMs).toBe(lateEvening + 30_000);
    const old = pause({ level: 3, untilMs: START });
    expect(nextPause(old, error45009, START + 2 * 3_600_000, schedule)).toMatchObject({ level: 0 });
  });

  it('probes a configuration error after 1, 2, 5, 10, then every 15 minutes', () => {
    let now = START;
    let current: AppPause | undefined;
    const waits: number[] = [];
    for (let i = 0; i < 7; i++) {
      const next = nextPause(
        current,
        { kind: 'config_error', reason: '40001', errcode: 40001 },
        now,
        schedule,
      );
      if (!next) throw new Error('no pause');
      waits.push((next.untilMs - now) / 60_000);
      current = next;
      now = next.untilMs;
    }
    expect(waits).toEqual([1, 2, 5, 10, 15, 15, 15]);
  });
});

import { describe, expect, it } from 'vitest';
import { PauseCache } from '#lib/sender/index.js';
import type { PauseStore } from '#lib/store/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';

/** A PauseStore double that counts reads and writes. */
function pauseStore(initial: Record<string, number> = {}) {
  const until = new Map(Object.entries(initial));
  const calls = { pausedUntil: 0, pause: 0 };
  const store: PauseStore = {
    async pause(app, untilMs) {
      calls.pause++;
      until.set(app, untilMs);
    },
    async pausedUntil(app) {
      calls.pausedUntil++;
      return until.get(app);
    },
  };
  return { store, calls, until };
}

describe('PauseCache', () => {
  it('reads the store at most once per refresh interval per app', async () => {
    const clock = fakeClock();
    const { store, calls } = pauseStore();
    const cache = new PauseCache(store, 5_000, clock.now);

    for (let i = 0; i < 10; i++) {
      await cache.pausedUntil('ops');
      clock.advance(400);
    }

    expect(calls.pausedUntil).toBe(1);
  });

  it('reads the store again once the refresh interval has passed', async () => {
    const clock = fakeClock();
    const { store, calls, until } = pauseStore();
    const cache = new PauseCache(store, 5_000, clock.now);
    const first = await cache.pausedUntil('ops');
    until.set('ops', clock.now() + 60_000);

    clock.advance(4_999);
    const stale = await cache.pausedUntil('ops');
    clock.advance(1);
    const refreshed = await cache.pausedUntil('ops');

    expect(first).toBeUndefined();
    expect(stale).toBeUndefined();
    expect(refreshed).toBe(until.get('ops'));
    expect(calls.pausedUntil).toBe(2);
  });

  it('keeps separate apps apart', async () => {
    const clock = fakeClock();
    const { store, calls } = pauseStore({ ops: clock.now() + 60_000 });
    const cache = new PauseCache(store, 5_000, clock.now);

    expect(await cache.pausedUntil('ops')).toBe(clock.now() + 60_000);
    expect(await cache.pausedUntil('billing')).toBeUndefined();
    expect(calls.pausedUntil).toBe(2);
  });

  it('reports its own pause at once, without a read, and writes it to the store for the other containers', async () => {
    const clock = fakeClock();
    const { store, calls, until } = pauseStore();
    const cache = new PauseCache(store, 5_000, clock.now);
    const pauseEnd = clock.now() + 60_000;

    await cache.pause('ops', pauseEnd, 'errcode 45009');
    const seen = await cache.pausedUntil('ops');

    expect(seen).toBe(pauseEnd);
    expect(until.get('ops')).toBe(pauseEnd);
    expect(calls).toEqual({ pause: 1, pausedUntil: 0 });
  });

  it('does not write a pause that ends before the one it already knows', async () => {
    const clock = fakeClock();
    const { store, calls } = pauseStore();
    const cache = new PauseCache(store, 5_000, clock.now);
    await cache.pause('ops', clock.now() + 60_000, 'errcode 45009');

    await cache.pause('ops', clock.now() + 30_000, 'errcode 45009');

    expect(calls.pause).toBe(1);
  });

  it('stops reporting a pause once it has ended', async () => {
    const clock = fakeClock();
    const { store } = pauseStore();
    const cache = new PauseCache(store, 5_000, clock.now);
    await cache.pause('ops', clock.now() + 60_000, 'errcode 45009');

    clock.advance(60_000);

    expect(await cache.pausedUntil('ops')).toBeUndefined();
  });
});

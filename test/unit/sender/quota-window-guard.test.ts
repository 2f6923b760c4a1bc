import { describe, expect, it } from 'vitest';
import { QUOTA_DEFAULTS } from '#lib/config/index.js';
import { type QuotaDemand, QuotaGuard, WECOM_WINDOWS } from '#lib/sender/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { InMemoryQuotaStore } from '#test/helpers/unit-quota-store.js';

const MINUTE_START = Date.parse('2026-12-01T08:00:00Z');
const MINUTE = MINUTE_START / 60_000;
const demand: QuotaDemand = {
  app: 'ops',
  quota: { ...QUOTA_DEFAULTS },
  priority: 'high',
  members: [],
  personTimes: 1,
};

describe('QuotaGuard window guard band', () => {
  it('waits for the next window instead of reserving in the last 250 ms of a minute', async () => {
    const clock = fakeClock(MINUTE_START + 59_900);
    const slept: number[] = [];
    const store = new InMemoryQuotaStore();
    const guard = new QuotaGuard(store, WECOM_WINDOWS, clock.now, 250, async (ms) => {
      slept.push(ms);
      clock.advance(ms);
    });

    expect((await guard.acquire(demand)).ok).toBe(true);

    expect(slept).toEqual([101]);
    expect(store.used('ops', 'app-minute', MINUTE)).toBe(0);
    expect(store.used('ops', 'app-minute', MINUTE + 1)).toBeGreaterThan(0);
  });

  it('charges the next window when reserving took it into the guard band', async () => {
    const clock = fakeClock(MINUTE_START + 59_000);
    const store = new InMemoryQuotaStore();
    // A slow store: the first reservation returns 900 ms later, inside the guard band of minute MINUTE.
    const slow = Object.assign(Object.create(store) as InMemoryQuotaStore, {
      reserve: async (...args: Parameters<InMemoryQuotaStore['reserve']>) => {
        const ok = await store.reserve(...args);
        if (args[2] === MINUTE && args[1] === 'app-minute') clock.advance(900);
        return ok;
      },
    });
    const guard = new QuotaGuard(slow, WECOM_WINDOWS, clock.now, 250, async (ms) => clock.advance(ms));

    expect((await guard.acquire(demand)).ok).toBe(true);

    // The send happens in the next minute, so that is the minute it is charged to.
    expect(store.used('ops', 'app-minute', MINUTE + 1)).toBeGreaterThan(0);
  });
});

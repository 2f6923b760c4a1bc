import { describe, expect, it } from 'vitest';
import { QUOTA_DEFAULTS } from '#lib/config/index.js';
import { type QuotaDemand, QuotaGuard, QuotaUsageReader, WECOM_WINDOWS } from '#lib/quota/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { InMemoryQuotaStore } from '#test/helpers/unit-quota-store.js';

const START = Date.parse('2026-12-01T08:00:50Z');
const quota = { ...QUOTA_DEFAULTS };
const demand = (member: string): QuotaDemand => ({
  app: 'ops',
  quota,
  priority: 'high',
  members: [member],
  splittable: true,
  extraPersonTimes: 0,
  broadcasts: 0,
  broadcastShare: 0,
});

describe('QuotaUsageReader (GET /v1/apps/{app})', () => {
  it('shows the app’s calls and person-times in the rolling windows that end now, with WeCom’s limit and the share allowed', async () => {
    const store = new InMemoryQuotaStore();
    const clock = fakeClock(START);
    const guard = new QuotaGuard(store, { now: clock.now, sleep: clock.sleep });
    for (let i = 0; i < 3; i++) expect(await guard.acquire(demand(`u${i}`))).toMatchObject({ kind: 'send' });
    const reader = new QuotaUsageReader(store, WECOM_WINDOWS);

    // 20 s later the clock's minute has changed; a rolling minute still holds the three sends.
    clock.advance(20_000);
    const usage = await reader.usage('ops', quota, clock.now());

    expect(usage.map(({ window, limit, allowed }) => ({ window, limit, allowed }))).toEqual([
      { window: 'app-minute', limit: 10_000, allowed: 8_000 },
      { window: 'app-hour', limit: 150_000, allowed: 120_000 },
      { window: 'app-day', limit: 100_000, allowed: 80_000 },
    ]);
    // Reserved in blocks ahead of use: at least what was sent, a block at most.
    for (const u of usage) expect(u.used).toBeGreaterThanOrEqual(3);
    for (const u of usage) expect(u.used).toBeLessThanOrEqual(3 * 100);
    // What is counted leaves each window a window after it was reserved, not at the next clock boundary.
    const [minute, hour, day] = usage;
    expect(minute?.resetsAtMs).toBeGreaterThan(START + 60_000 - 1);
    expect(minute?.resetsAtMs).toBeLessThan(START + 61_000);
    expect(hour?.resetsAtMs).toBeGreaterThan(START + 3_600_000);
    expect(day?.resetsAtMs).toBeGreaterThan(START + 86_400_000);

    // A day and more later, everything has rolled out.
    clock.advance(2 * 86_400_000);
    const later = await reader.usage('ops', quota, clock.now());
    expect(later.map((u) => u.used)).toEqual([0, 0, 0]);
    expect(later.map((u) => u.resetsAtMs)).toEqual([clock.now(), clock.now(), clock.now()]);
  });

  it('shows an app that never sent as unused', async () => {
    const usage = await new QuotaUsageReader(new InMemoryQuotaStore()).usage('ops', quota, START);
    expect(usage.map((u) => [u.window, u.used, u.resetsAtMs])).toEqual([
      ['app-minute', 0, START],
      ['app-hour', 0, START],
      ['app-day', 0, START],
    ]);
  });
});

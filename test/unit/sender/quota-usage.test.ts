import { describe, expect, it } from 'vitest';
import { QUOTA_DEFAULTS } from '#lib/config/index.js';
import { QuotaGuard, WECOM_WINDOWS } from '#lib/sender/index.js';
import { InMemoryQuotaStore } from '#test/helpers/unit-quota-store.js';

const NOW = Date.parse('2026-12-01T08:00:30Z');

describe('QuotaGuard.usage', () => {
  it('reads the app’s counters in the windows holding now, with WeCom’s limit and the share the gateway allows', async () => {
    const store = new InMemoryQuotaStore();
    const guard = new QuotaGuard(
      store,
      WECOM_WINDOWS,
      () => NOW,
      250,
      async () => undefined,
    );
    const quota = { ...QUOTA_DEFAULTS };
    for (let i = 0; i < 3; i++) {
      await guard.acquire({ app: 'ops', quota, priority: 'high', members: [], personTimes: 2 });
    }

    const usage = await guard.usage('ops', quota, NOW);

    expect(usage.map((u) => u.window)).toEqual(['app-minute', 'app-hour', 'app-day']);
    expect(usage[0]).toMatchObject({
      limit: 10_000,
      allowed: 8_000,
      resetsAtMs: Date.parse('2026-12-01T08:01:00Z'),
    });
    // Reserved in blocks ahead of use: at least what was sent.
    expect(usage[0]?.used).toBeGreaterThanOrEqual(3);
    expect(usage[2]?.used).toBeGreaterThanOrEqual(6);
    expect(usage[2]?.resetsAtMs).toBe(Date.parse('2026-12-01T16:00:00Z')); // midnight CST
  });
});

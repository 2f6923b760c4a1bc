import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TOKEN_BACKOFF,
  type TokenApp,
  TokenCache,
  TokenUnavailableError,
  type WecomApi,
  WecomApiError,
  WecomTransportError,
} from '#lib/wecom/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { InMemoryTokenStore } from '#test/helpers/unit-token-store.js';

const APP: TokenApp = { corpId: 'ww0123456789abcdef', agentId: 1000002, secret: 'wrong-secret' };
const wrongSecret = () => new WecomApiError(40001, 'invalid credential', 'gettoken');

/** gettoken answering with `answer()`; counts the calls. */
function gettoken(answer: () => Promise<{ access_token: string; expires_in: number }>) {
  const calls: number[] = [];
  const api: Pick<WecomApi, 'getToken'> = {
    getToken: async () => {
      calls.push(calls.length);
      await new Promise<void>((resolve) => setImmediate(resolve));
      return answer();
    },
  };
  return { api, calls };
}

/** gettoken failing with `error()` every time; records when it was called. */
function failingGettoken(now: () => number, error: () => Error) {
  const calledAt: number[] = [];
  const api: Pick<WecomApi, 'getToken'> = {
    getToken: async () => {
      calledAt.push(now());
      throw error();
    },
  };
  return { api, calledAt };
}

describe('TokenCache after a failed gettoken (no token storm)', () => {
  it('calls gettoken once for 50 containers with a backlog when the secret is wrong, until the retry time', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = gettoken(async () => {
      throw wrongSecret();
    });
    const containers = Array.from(
      { length: 50 },
      () => new TokenCache(store, wecom.api, { now: clock.now, sleep: clock.yieldOnly }),
    );

    // Every container tries for 10 messages; WeCom hears one gettoken.
    const outcomes = await Promise.allSettled(
      containers.flatMap((c) => Array.from({ length: 10 }, () => c.get(APP))),
    );

    expect(wecom.calls).toHaveLength(1);
    for (const o of outcomes) {
      expect(o.status).toBe('rejected');
      const err = (o as PromiseRejectedResult).reason as WecomApiError;
      expect(err).toBeInstanceOf(WecomApiError);
      expect(err.errcode).toBe(40001);
      expect(err.errclass).toBe('config');
    }
    const remembered = outcomes.filter(
      (o) => ((o as PromiseRejectedResult).reason as WecomApiError).remembered,
    );
    expect(remembered.length).toBeGreaterThan(400);
  });

  it('makes at most 2 gettoken calls in any minute and 7 in the first hour with a wrong secret (SPEC §7)', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const { api, calledAt } = failingGettoken(clock.now, () => wrongSecret());
    const containers = Array.from(
      { length: 6 },
      () => new TokenCache(store, api, { now: clock.now, sleep: clock.yieldOnly }),
    );

    // A backlog: every container asks every second for two hours.
    for (let s = 0; s < 7_200; s++) {
      await Promise.allSettled(containers.map((c) => c.get(APP)));
      clock.advance(1_000);
    }

    const start = calledAt[0] ?? 0;
    const perMinute = new Map<number, number>();
    for (const t of calledAt) {
      const m = Math.floor((t - start) / 60_000);
      perMinute.set(m, (perMinute.get(m) ?? 0) + 1);
    }
    expect(Math.max(...perMinute.values())).toBeLessThanOrEqual(2);
    const firstHour = calledAt.filter((t) => t - start < 3_600_000);
    // WeCom bans the IP after repeated wrong secrets; the strict simulator after 10 within an hour.
    expect(firstHour.length).toBeLessThanOrEqual(7);
    expect(calledAt.length - firstHour.length).toBeLessThanOrEqual(4);
  });

  it('backs off transient gettoken failures from 2 s, doubling to a minute', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const { api, calledAt } = failingGettoken(
      clock.now,
      () => new WecomTransportError('WeCom gettoken: HTTP 502', 'HTTP_502', { inDoubt: true }),
    );
    const cache = new TokenCache(store, api, { now: clock.now, sleep: clock.yieldOnly });

    for (let s = 0; s < 300; s++) {
      const err = await cache.get(APP).catch((e: unknown) => e);
      expect(err instanceof WecomTransportError || err instanceof TokenUnavailableError).toBe(true);
      clock.advance(1_000);
    }

    const gaps = calledAt.slice(1).map((t, i) => (t - (calledAt[i] ?? 0)) / 1000);
    expect(gaps.slice(0, 7)).toEqual([2, 4, 8, 16, 32, 60, 60]);
    expect(DEFAULT_TOKEN_BACKOFF.transientMs.at(-1)).toBe(60_000);
  });

  it('keeps using a still-valid token when the early refresh fails, and tries again only after the backoff (H2)', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    let down = false;
    const wecom = gettoken(async () => {
      if (down) throw new WecomApiError(-1, 'system busy', 'gettoken');
      return { access_token: `T${wecom.calls.length}`, expires_in: 7_200 };
    });
    const cache = new TokenCache(store, wecom.api, { now: clock.now, sleep: clock.yieldOnly });
    expect(await cache.get(APP)).toBe('T1');
    clock.advance(7_000_000); // 200 s left: inside the 5-minute refresh-ahead window
    down = true;

    const tokens = [];
    for (let i = 0; i < 10; i++) {
      tokens.push(await Promise.all([cache.get(APP), cache.get(APP)]));
      clock.advance(100);
    }

    expect(new Set(tokens.flat())).toEqual(new Set(['T1']));
    expect(wecom.calls).toHaveLength(2); // the first fetch and one failed refresh
    clock.advance(2_000);
    down = false;
    expect(await cache.get(APP)).toBe('T3');
  });

  it('tries at once with a changed secret (the operator fixed the config)', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = gettoken(async () => {
      if (wecom.calls.length === 1) throw wrongSecret();
      return { access_token: 'FIXED', expires_in: 7_200 };
    });
    const cache = new TokenCache(store, wecom.api, { now: clock.now, sleep: clock.yieldOnly });
    await expect(cache.get(APP)).rejects.toThrow(WecomApiError);
    await expect(cache.get(APP)).rejects.toMatchObject({ remembered: true });

    expect(await cache.get({ ...APP, secret: 'right-secret' })).toBe('FIXED');
    expect(wecom.calls).toHaveLength(2);
    expect((await store.get(APP.corpId, APP.agentId)).failure).toBeUndefined();
  });

  it('describes the token by its age and the failure holding calls back, never the token itself', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = gettoken(async () => ({ access_token: 'SECRET-TOKEN', expires_in: 7_200 }));
    const cache = new TokenCache(store, wecom.api, { now: clock.now, sleep: clock.yieldOnly });
    await cache.get(APP);
    clock.advance(60_000);

    const described = await cache.describe(APP);

    expect(described).toEqual({
      fetchedAtMs: clock.now() - 60_000,
      expiresAtMs: clock.now() - 60_000 + 7_200_000,
    });
    expect(JSON.stringify(described)).not.toContain('SECRET-TOKEN');
  });
});

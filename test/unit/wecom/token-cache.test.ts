import { describe, expect, it } from 'vitest';
import type { TokenResponse, WecomApi } from '#lib/wecom/index.js';
import { type TokenApp, TokenCache, TokenUnavailableError, WecomApiError } from '#lib/wecom/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { InMemoryTokenStore } from '#test/helpers/unit-token-store.js';

const APP: TokenApp = { corpId: 'ww0123456789abcdef', agentId: 1000002, secret: 'app-secret' };
const LIFETIME_S = 7200;

/** A WecomApi double that hands out T1, T2, … and counts gettoken calls. */
function fakeWecom() {
  const calls: { corpId: string; secret: string }[] = [];
  const api: Pick<WecomApi, 'getToken'> = {
    async getToken(corpId, secret): Promise<TokenResponse> {
      calls.push({ corpId, secret });
      await new Promise<void>((resolve) => setImmediate(resolve));
      return { access_token: `T${calls.length}`, expires_in: LIFETIME_S };
    },
  };
  return { api, calls };
}

describe('TokenCache', () => {
  it('calls gettoken once when 50 cold containers race for the same token', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = fakeWecom();
    const containers = Array.from(
      { length: 50 },
      () => new TokenCache(store, wecom.api, { now: clock.now, sleep: clock.yieldOnly }),
    );

    const tokens = await Promise.all(containers.map((c) => c.get(APP)));

    expect(wecom.calls).toEqual([{ corpId: APP.corpId, secret: APP.secret }]);
    expect(new Set(tokens)).toEqual(new Set(['T1']));
  });

  it('shares one lookup between concurrent callers in one container', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = fakeWecom();
    const cache = new TokenCache(store, wecom.api, { now: clock.now, sleep: clock.yieldOnly });

    await Promise.all(Array.from({ length: 10 }, () => cache.get(APP)));

    expect(wecom.calls).toHaveLength(1);
    expect(store.calls.acquireLock).toBe(1);
  });

  it('answers from memory without a store call once it holds a fresh token', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = fakeWecom();
    const cache = new TokenCache(store, wecom.api, { now: clock.now, sleep: clock.yieldOnly });
    await cache.get(APP);
    const callsAfterFirst = store.total();

    clock.advance(60_000);
    const token = await cache.get(APP);

    expect(token).toBe('T1');
    expect(store.total()).toBe(callsAfterFirst);
  });

  it('uses a token another container stored without calling gettoken', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = fakeWecom();
    await store.put(APP.corpId, APP.agentId, { token: 'STORED', expiresAtMs: clock.now() + 7_000_000 });
    const cache = new TokenCache(store, wecom.api, { now: clock.now, sleep: clock.yieldOnly });

    expect(await cache.get(APP)).toBe('STORED');
    expect(wecom.calls).toHaveLength(0);
    expect(store.calls.acquireLock).toBe(0);
  });

  it('refreshes ahead of expiry, not before', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = fakeWecom();
    const refreshAheadMs = 300_000;
    const cache = new TokenCache(store, wecom.api, {
      now: clock.now,
      sleep: clock.yieldOnly,
      refreshAheadMs,
    });
    await cache.get(APP);

    clock.advance(LIFETIME_S * 1000 - refreshAheadMs - 1);
    const justBefore = await cache.get(APP);
    clock.advance(1);
    const atRefreshPoint = await cache.get(APP);

    expect(justBefore).toBe('T1');
    expect(atRefreshPoint).toBe('T2');
    expect(wecom.calls).toHaveLength(2);
    expect(store.tokens.get(`${APP.corpId}#${APP.agentId}`)?.token).toBe('T2');
  });

  it('keeps using a still-valid token while another container holds the refresh lock', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = fakeWecom();
    await store.put(APP.corpId, APP.agentId, { token: 'AGING', expiresAtMs: clock.now() + 60_000 });
    await store.acquireLock(APP.corpId, APP.agentId, 'other-container', 10_000);
    const cache = new TokenCache(store, wecom.api, { now: clock.now, sleep: clock.sleep });

    expect(await cache.get(APP)).toBe('AGING');
    expect(wecom.calls).toHaveLength(0);
  });

  it('takes over from a lock holder that died once its lease has passed, and fetches the token', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = fakeWecom();
    const leaseMs = 10_000;
    await store.acquireLock(APP.corpId, APP.agentId, 'crashed-container', leaseMs);
    const started = clock.now();
    const cache = new TokenCache(store, wecom.api, {
      now: clock.now,
      sleep: clock.sleep,
      leaseMs,
      maxWaitMs: 15_000,
    });

    const token = await cache.get(APP);

    expect(token).toBe('T1');
    expect(wecom.calls).toHaveLength(1);
    expect(clock.now() - started).toBeGreaterThan(leaseMs);
    expect(store.locks.size).toBe(0);
  });

  it('gives up with TokenUnavailableError after maxWaitMs when the holder never writes a token', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = fakeWecom();
    await store.acquireLock(APP.corpId, APP.agentId, 'slow-container', 60_000);
    const cache = new TokenCache(store, wecom.api, { now: clock.now, sleep: clock.sleep, maxWaitMs: 2_000 });

    const getting = cache.get(APP);

    await expect(getting).rejects.toBeInstanceOf(TokenUnavailableError);
    await expect(getting).rejects.toMatchObject({ code: 'token_unavailable', corpId: APP.corpId });
    expect(wecom.calls).toHaveLength(0);
  });

  it('releases the lock when gettoken fails with an error not of WeCom, which is not remembered', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    let fail = true;
    const api: Pick<WecomApi, 'getToken'> = {
      getToken: async () => {
        if (fail) throw new Error('WeCom down');
        return { access_token: 'T-after', expires_in: LIFETIME_S };
      },
    };
    const cache = new TokenCache(store, api, { now: clock.now, sleep: clock.sleep });

    await expect(cache.get(APP)).rejects.toThrow('WeCom down');
    fail = false;

    expect(store.locks.size).toBe(0);
    expect(await cache.get(APP)).toBe('T-after');
  });

  it('invalidate drops only the failing token, here and in the store', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = fakeWecom();
    const cache = new TokenCache(store, wecom.api, { now: clock.now, sleep: clock.yieldOnly });
    await cache.get(APP);

    await cache.invalidate(APP, 'SOME-OLDER-TOKEN');
    const afterStale = await cache.get(APP);
    await cache.invalidate(APP, 'T1');
    const afterFailing = await cache.get(APP);

    expect(afterStale).toBe('T1');
    expect(afterFailing).toBe('T2');
    expect(wecom.calls).toHaveLength(2);
  });

  it('does not delete a newer token another container stored when invalidating an old one', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = fakeWecom();
    const cache = new TokenCache(store, wecom.api, { now: clock.now, sleep: clock.yieldOnly });
    await cache.get(APP);
    await store.put(APP.corpId, APP.agentId, { token: 'NEWER', expiresAtMs: clock.now() + 7_000_000 });

    await cache.invalidate(APP, 'T1');
    const token = await cache.get(APP);

    expect(token).toBe('NEWER');
    expect(wecom.calls).toHaveLength(1);
  });

  it('reports every gettoken call through onFetch', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = fakeWecom();
    const fetched: TokenApp[] = [];
    const cache = new TokenCache(store, wecom.api, {
      now: clock.now,
      sleep: clock.yieldOnly,
      onFetch: (app) => fetched.push(app),
    });

    await cache.get(APP);

    expect(fetched).toEqual([APP]);
  });
});

describe('TokenCache.withToken', () => {
  const expired = () => new WecomApiError(42001, 'access_token expired', 'message/send');

  it('refreshes once on a token errcode and repeats the call with the new token', async () => {
    const clock = fakeClock();
    const store = new InMemoryTokenStore(clock.now);
    const wecom = fakeWecom();
    const cache = new TokenCache(store, wecom.api, { now: clock.now, sleep: clock.yieldOnly });
    const used: string[] = [];

    const result = await cache.withToken(APP, async (token) => {
      used.push(token);
      if (used.length === 1) throw expired();
      return 'ok';
    });

    expect(result).toBe('ok');
    expect(used).toEqual(['T1', 'T2']);
    // The rejected token is gone from the shared item too: other containers do not pick it up again.
    expect((await store.get(APP.corpId, APP.agentId)).token?.token).toBe('T2');
  });

  it('gives a token error that persists after the refresh to the caller (no second refresh)', async () => {
    const clock = fakeClock();
    const wecom = fakeWecom();
    const cache = new TokenCache(new InMemoryTokenStore(clock.now), wecom.api, {
      now: clock.now,
      sleep: clock.yieldOnly,
    });
    let calls = 0;

    const outcome = cache.withToken(APP, async () => {
      calls++;
      throw expired();
    });

    await expect(outcome).rejects.toMatchObject({ errcode: 42001 });
    expect(calls).toBe(2);
    expect(wecom.calls).toHaveLength(2);
  });

  it('passes any other error through without touching the token', async () => {
    const clock = fakeClock();
    const wecom = fakeWecom();
    const cache = new TokenCache(new InMemoryTokenStore(clock.now), wecom.api, {
      now: clock.now,
      sleep: clock.yieldOnly,
    });
    const busy = new WecomApiError(-1, 'system busy', 'message/send');

    await expect(cache.withToken(APP, async () => Promise.reject(busy))).rejects.toBe(busy);
    expect(wecom.calls).toHaveLength(1);
  });
});

import { describe, expect, it } from 'vitest';
import { TokenCache } from '#lib/wecom/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { InMemoryTokenStore } from '#test/helpers/unit-token-store.js';

const APP = { corpId: 'wwunit', agentId: 1000002, secret: 'unit-secret' };

describe('TokenCache refresh ahead of expiry', () => {
  it('uses a token WeCom hands back with little life left to its end instead of refetching on every send', async () => {
    const clock = fakeClock();
    let calls = 0;
    const issuedAt = clock.now();
    // WeCom within a token's lifetime: the same token, with the seconds it has left.
    const wecom = {
      getToken: async () => {
        calls++;
        return { access_token: 'same', expires_in: Math.ceil((issuedAt + 7_200_000 - clock.now()) / 1000) };
      },
    };
    const cache = new TokenCache(new InMemoryTokenStore(clock.now), wecom, {
      now: clock.now,
      sleep: async () => {},
    });
    await cache.get(APP);
    clock.advance(7_000_000); // 200 s left: inside the 5-minute refresh-ahead window

    for (let i = 0; i < 100; i++) {
      await cache.get(APP);
      clock.advance(1_000);
    }

    expect(calls).toBe(2); // the first fetch, and one refresh attempt that got the same token back
  });
});

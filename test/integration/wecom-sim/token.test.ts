import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WecomSimulator } from '#local/wecom-sim/index.js';
import {
  APP,
  getToken,
  gettoken,
  manualClock,
  OTHER_APP,
  send,
  startTestSimulator,
  textMessage,
} from '#test/helpers/sim-fixtures.js';

describe('WeCom simulator › gettoken', () => {
  const clock = manualClock();
  let sim: WecomSimulator;

  beforeEach(async () => {
    sim = await startTestSimulator({ clock: clock.now, tokenTtlSeconds: 7200 });
  });
  afterEach(async () => {
    await sim.stop();
  });

  it('issues an opaque token valid for 7200 seconds and counts every call', async () => {
    const answer = await gettoken(sim, APP.corpId, APP.secret);

    expect(answer).toMatchObject({ errcode: 0, errmsg: 'ok', expires_in: 7200 });
    expect(typeof answer.access_token).toBe('string');
    expect((answer.access_token as string).length).toBeLessThanOrEqual(512);
    expect(sim.stats().gettokenCalls).toBe(1);
  });

  it('answers 40013 for an unknown corpid and 40001 for a wrong secret', async () => {
    expect((await gettoken(sim, 'ww-nope', APP.secret)).errcode).toBe(40013);
    expect((await gettoken(sim, APP.corpId, 'wrong')).errcode).toBe(40001);
    expect(sim.stats()).toMatchObject({ gettokenCalls: 2, byErrcode: { '40013': 1, '40001': 1 } });
  });

  it('hands out the same token again within its lifetime, with the time it has left', async () => {
    const first = await gettoken(sim, APP.corpId, APP.secret);
    clock.advance(7000 * 1000);

    const again = await gettoken(sim, APP.corpId, APP.secret);

    expect(again.access_token).toBe(first.access_token);
    expect(again.expires_in).toBe(200);
  });

  it('issues a new token once the old one expired, and after an invalidation', async () => {
    const first = await getToken(sim);
    clock.advance(7200 * 1000);
    const second = await getToken(sim);
    sim.invalidateTokens();
    const third = await getToken(sim);

    expect(new Set([first, second, third]).size).toBe(3);
    expect((await send(sim, third, textMessage())).errcode).toBe(0);
  });

  it('answers 41001 without a token and 40014 for a token it never issued', async () => {
    expect((await send(sim, undefined, textMessage())).errcode).toBe(41001);
    expect((await send(sim, 'made-up-token', textMessage())).errcode).toBe(40014);
  });

  it('answers 42001 once the token has expired', async () => {
    const token = await getToken(sim);
    clock.advance(7200 * 1000);

    expect((await send(sim, token, textMessage())).errcode).toBe(42001);
  });

  it('answers 42001 for every token issued before invalidateTokens, but not for new ones', async () => {
    const old = await getToken(sim);
    sim.invalidateTokens();
    const fresh = await getToken(sim);

    expect((await send(sim, old, textMessage())).errcode).toBe(42001);
    expect((await send(sim, fresh, textMessage())).errcode).toBe(0);
  });

  it("answers 301002 when the agentid is not the token's app", async () => {
    const token = await getToken(sim, OTHER_APP);

    expect((await send(sim, token, textMessage({ agentid: APP.agentId }))).errcode).toBe(301002);
  });
});

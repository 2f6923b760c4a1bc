import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WecomSimulator } from '#local/wecom-sim/index.js';
import { getToken, manualClock, send, startTestSimulator, textMessage } from '#test/helpers/sim-fixtures.js';

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!condition()) throw new Error('condition not reached');
}

describe('WeCom simulator › fault injection', () => {
  let sim: WecomSimulator;
  let token: string;

  beforeEach(async () => {
    sim = await startTestSimulator();
    token = await getToken(sim);
  });
  afterEach(async () => {
    await sim.stop();
  });

  const rawSend = (signal?: AbortSignal) =>
    fetch(`${sim.url}/cgi-bin/message/send?access_token=${token}`, {
      method: 'POST',
      body: JSON.stringify(textMessage()),
      signal,
    });

  it('plays a script in order on the send path, then behaves normally', async () => {
    sim.faults.script([{ errcode: -1 }, 'ok', { errcode: 45009 }]);

    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await send(sim, token, textMessage())).errcode);

    expect(codes).toEqual([-1, 0, 45009, 0]);
    expect(sim.inbox('alice')).toHaveLength(2);
    expect(sim.stats()).toMatchObject({
      sendCalls: 4,
      rateLimited: 1,
      byErrcode: { '-1': 1, '0': 3, '45009': 1 },
    });
  });

  it('invalidates the token used when it injects 42001', async () => {
    sim.faults.script([{ errcode: 42001 }]);

    expect((await send(sim, token, textMessage())).errcode).toBe(42001);
    expect((await send(sim, token, textMessage())).errcode).toBe(42001);
    expect((await send(sim, await getToken(sim), textMessage())).errcode).toBe(0);
  });

  it('scripts faults per path, leaving the other paths alone', async () => {
    sim.faults.script([{ errcode: -1 }], { path: 'gettoken' });

    expect((await send(sim, token, textMessage())).errcode).toBe(0);
    await expect(getToken(sim)).rejects.toThrow('errcode -1');
  });

  it('answers HTTP 500 with a body that is not JSON', async () => {
    sim.faults.script(['http500']);

    const res = await rawSend();

    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).not.toContain('json');
    expect((await res.text()).startsWith('<html>')).toBe(true);
    expect(sim.inbox('alice')).toHaveLength(0);
  });

  it('resets the connection without an answer', async () => {
    sim.faults.script(['reset']);

    await expect(rawSend()).rejects.toThrow();
    expect(sim.requests().at(-1)).toMatchObject({
      path: '/cgi-bin/message/send',
      httpStatus: 0,
      errcode: null,
    });
  });

  it('holds a timeout without delivering until the client gives up', async () => {
    sim.faults.script(['timeout']);

    await expect(rawSend(AbortSignal.timeout(100))).rejects.toThrow();
    expect(sim.inbox('alice')).toHaveLength(0);
  });

  it('delivers first and then never answers on timeoutAfterDelivery', async () => {
    sim.faults.script(['timeoutAfterDelivery']);

    await expect(rawSend(AbortSignal.timeout(100))).rejects.toThrow();
    expect(sim.inbox('alice')).toHaveLength(1);
  });

  it('delivers first and then drops the connection at once on resetAfterDelivery', async () => {
    sim.faults.script(['resetAfterDelivery']);

    await expect(rawSend()).rejects.toThrow();
    expect(sim.inbox('alice')).toHaveLength(1);
    expect(sim.requests().at(-1)).toMatchObject({ httpStatus: 0, errcode: null });
  });

  it('uses up the member limits with a delivery whose answer was lost', async () => {
    await sim.stop();
    sim = await startTestSimulator({ clock: manualClock().now, limits: { perMemberPerMinute: 1 } });
    token = await getToken(sim);
    sim.faults.script(['resetAfterDelivery']);

    await expect(rawSend()).rejects.toThrow();
    expect((await send(sim, token, textMessage())).errcode).toBe(0);

    expect(sim.inbox('alice')).toHaveLength(1);
    expect(sim.drops()).toHaveLength(1);
  });

  it('loses the answers of the next N sends after delivering them, scripted with times', async () => {
    sim.faults.script(['resetAfterDelivery'], { times: 3 });

    const outcomes = [];
    for (let i = 0; i < 4; i++)
      outcomes.push(
        await rawSend().then(
          (r) => r.status,
          () => 'lost',
        ),
      );

    expect(outcomes).toEqual(['lost', 'lost', 'lost', 200]);
    expect(sim.inbox('alice')).toHaveLength(4);
  });

  it('scripts lost answers over HTTP, and loses them at a rate', async () => {
    const post = (body: unknown) =>
      fetch(`${sim.url}/__sim/faults`, { method: 'POST', body: JSON.stringify(body) }).then((r) => r.status);
    expect(await post({ script: { kinds: ['timeoutAfterDelivery'], times: 2 } })).toBe(200);
    expect(await post({ script: { kinds: ['resetAfterDelivery'], times: 0 } })).toBe(400);

    await expect(rawSend(AbortSignal.timeout(100))).rejects.toThrow();
    await expect(rawSend(AbortSignal.timeout(100))).rejects.toThrow();
    expect((await rawSend()).status).toBe(200);

    sim.faults.setRate('resetAfterDelivery', 1);
    await expect(rawSend()).rejects.toThrow();
    expect(sim.inbox('alice')).toHaveLength(4);
  });

  it('stops promptly while requests are held', async () => {
    sim.faults.script(['timeout', 'timeoutAfterDelivery']);
    const pending = [rawSend(), rawSend()].map((p) =>
      p.then(
        () => 'answered',
        () => 'failed',
      ),
    );
    await until(() => sim.stats().sendCalls === 2);

    await sim.stop();

    expect(await Promise.all(pending)).toEqual(['failed', 'failed']);
  });

  it('injects random faults at the configured rate', async () => {
    await sim.stop();
    let n = 0;
    // Deterministic "random": draws cycle 0.05, 0.15, ..., 0.95, so a rate of 0.3 hits 3 calls in 10.
    sim = await startTestSimulator({ random: () => ((n++ % 10) + 0.5) / 10 });
    token = await getToken(sim);
    sim.faults.setRate({ errcode: -1 }, 0.3);

    const codes = [];
    for (let i = 0; i < 10; i++) codes.push((await send(sim, token, textMessage())).errcode);

    expect(codes.filter((c) => c === -1)).toHaveLength(3);
    sim.faults.clear();
    expect((await send(sim, token, textMessage())).errcode).toBe(0);
  });

  it('rejects an unknown fault kind', () => {
    expect(() => sim.faults.script([{ errcode: 0 }])).toThrow('unknown fault kind');
    expect(() => sim.faults.setRate('timeout', 2)).toThrow('rate must be 0..1');
  });
});

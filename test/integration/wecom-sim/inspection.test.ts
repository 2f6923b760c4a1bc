import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WecomSimulator } from '#local/wecom-sim/index.js';
import { getToken, send, startTestSimulator, textMessage } from '#test/helpers/sim-fixtures.js';

describe('WeCom simulator › inspection API', () => {
  let sim: WecomSimulator;
  let token: string;

  beforeEach(async () => {
    sim = await startTestSimulator({ limits: { perMemberPerMinute: 1 } });
    token = await getToken(sim);
  });
  afterEach(async () => {
    await sim.stop();
  });

  const get = async (path: string) => (await fetch(`${sim.url}/__sim/${path}`)).json();
  const post = (path: string, body?: unknown) =>
    fetch(`${sim.url}/__sim/${path}`, {
      method: 'POST',
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('serves stats, inboxes and drops as JSON', async () => {
    await send(sim, token, textMessage());
    await send(sim, token, textMessage());

    expect(await get('stats')).toMatchObject({
      sendCalls: 2,
      delivered: 1,
      dropped: 1,
      byErrcode: { '0': 3 },
    });
    expect(await get('inbox/alice')).toEqual([expect.objectContaining({ msgtype: 'text' })]);
    expect(await get('drops')).toEqual([
      expect.objectContaining({ userId: 'alice', reason: 'member_minute' }),
    ]);
  });

  it('logs API requests without access tokens or secrets', async () => {
    await send(sim, token, textMessage());

    const log = (await get('requests')) as { path: string; errcode: number; httpStatus: number }[];

    expect(log.map((r) => [r.path, r.errcode, r.httpStatus])).toEqual([
      ['/cgi-bin/gettoken', 0, 200],
      ['/cgi-bin/message/send', 0, 200],
    ]);
    expect(JSON.stringify(log)).not.toContain(token);
    expect(JSON.stringify(log)).not.toContain('secret-a');
  });

  it('answers HTTP 404 for unknown paths', async () => {
    expect((await fetch(`${sim.url}/cgi-bin/nope`)).status).toBe(404);
    expect((await fetch(`${sim.url}/__sim/nope`)).status).toBe(404);
  });

  it('sets faults over HTTP and rejects unknown kinds with 400', async () => {
    expect((await post('faults', { script: { kinds: [{ errcode: -1 }, 'ok'] } })).status).toBe(200);
    expect((await send(sim, token, textMessage())).errcode).toBe(-1);

    const bad = await post('faults', { rate: { kind: 'explode', rate: 0.5 } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'SIM_FAULT_INVALID' });
  });

  it('clears faults over HTTP', async () => {
    await post('faults', { rate: { kind: { errcode: -1 }, rate: 1 } });
    await post('faults', { clear: true });

    expect((await send(sim, token, textMessage())).errcode).toBe(0);
  });

  it('changes latency, invalidates tokens and resets over HTTP', async () => {
    expect(await (await post('latency', { ms: 0 })).json()).toMatchObject({ latencyMs: 0 });
    expect((await post('latency', { ms: -1 })).status).toBe(400);

    await post('invalidate-tokens');
    expect((await send(sim, token, textMessage())).errcode).toBe(42001);

    await post('reset');
    expect(await get('stats')).toMatchObject({ gettokenCalls: 0, sendCalls: 0, byErrcode: {} });
    expect(await get('requests')).toEqual([]);
    expect((await send(sim, token, textMessage())).errcode).toBe(40014);
  });

  it('adds the configured latency before answering', async () => {
    sim.setLatency(30);

    await send(sim, token, textMessage());

    expect(sim.requests().at(-1)?.durationMs).toBeGreaterThanOrEqual(25);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorOptions, WecomSimulator } from '#local/wecom-sim/index.js';
import {
  APP,
  callFrom,
  getToken,
  gettoken,
  manualClock,
  send,
  startTestSimulator,
  textMessage,
} from '#test/helpers/sim-fixtures.js';

const HOUR = 3_600_000;
const GETTOKEN = `/cgi-bin/gettoken?corpid=${APP.corpId}&corpsecret=`;

describe('WeCom simulator › IP ban after repeated wrong secrets', () => {
  const clock = manualClock();
  let sim: WecomSimulator;

  const start = (overrides: Partial<SimulatorOptions>) =>
    startTestSimulator({ clock: clock.now, tokenTtlSeconds: 86_400, ...overrides });
  const wrongSecrets = async (n: number, from = '127.0.0.1') => {
    const codes: number[] = [];
    for (let i = 0; i < n; i++) codes.push((await callFrom(sim, from, `${GETTOKEN}wrong`)).errcode);
    return codes;
  };

  afterEach(async () => {
    await sim.stop();
  });

  it('bans the IP for an hour after N wrong secrets: every call from it answers 45009, other IPs go on', async () => {
    sim = await start({ readings: { ipBanAfter: 3 } });
    const token = await getToken(sim);

    expect(await wrongSecrets(3)).toEqual([40001, 40001, 40001]);
    expect((await gettoken(sim, APP.corpId, APP.secret)).errcode).toBe(45009);
    expect((await send(sim, token, textMessage())).errcode).toBe(45009);
    expect((await callFrom(sim, '127.0.0.2', `${GETTOKEN}${APP.secret}`)).errcode).toBe(0);
    expect(sim.stats().ipBans).toEqual({
      wrongSecretsByIp: { '127.0.0.1': 3 },
      bannedUntil: { '127.0.0.1': clock.now() + HOUR },
    });
    expect(sim.stats().callsByIp).toEqual({ '127.0.0.1': 6, '127.0.0.2': 1 });

    clock.advance(HOUR - 1);
    expect((await send(sim, token, textMessage())).errcode).toBe(45009);
    clock.advance(1);
    expect((await send(sim, token, textMessage())).errcode).toBe(0);
  });

  it('counts wrong secrets per IP within a rolling hour', async () => {
    sim = await start({ readings: { ipBanAfter: 3 } });

    await wrongSecrets(2);
    await wrongSecrets(2, '127.0.0.3');
    clock.advance(HOUR);
    await wrongSecrets(2);

    expect((await gettoken(sim, APP.corpId, APP.secret)).errcode).toBe(0);
    expect(await wrongSecrets(1)).toEqual([40001]);
    expect((await gettoken(sim, APP.corpId, APP.secret)).errcode).toBe(45009);
  });

  it('never bans under the lenient preset', async () => {
    sim = await start({ readings: 'lenient' });

    expect(new Set(await wrongSecrets(30))).toEqual(new Set([40001]));
    expect((await gettoken(sim, APP.corpId, APP.secret)).errcode).toBe(0);
  });

  it('bans after 10 wrong secrets under the strict preset', async () => {
    sim = await start({ readings: 'strict' });

    expect(new Set(await wrongSecrets(10))).toEqual(new Set([40001]));
    expect((await gettoken(sim, APP.corpId, APP.secret)).errcode).toBe(45009);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorOptions, WecomSimulator } from '#local/wecom-sim/index.js';
import {
  getToken,
  inspect,
  manualClock,
  postApi,
  send,
  sendRepeatedly,
  startTestSimulator,
  textMessage,
} from '#test/helpers/sim-fixtures.js';

const HOUR = 3_600_000;
/** 18:00 in China Standard Time; WeCom's day ends at 16:00 UTC. */
const EVENING_CST = Date.parse('2026-12-01T10:00:00Z');
const MIDNIGHT_CST = Date.parse('2026-12-01T16:00:00Z');
const users = (n: number) => textMessage({ touser: Array.from({ length: n }, (_, i) => `u${i}`).join('|') });

describe('WeCom simulator › 45009 blocks', () => {
  let clock = manualClock(EVENING_CST);
  let sim: WecomSimulator;

  const start = async (overrides: Partial<SimulatorOptions>): Promise<string> => {
    sim = await startTestSimulator({ clock: clock.now, tokenTtlSeconds: 3 * 86_400, ...overrides });
    return getToken(sim);
  };
  const codes = (token: string, n: number, body?: unknown) => sendRepeatedly(sim, token, n, body);

  afterEach(async () => {
    await sim.stop();
    clock = manualClock(EVENING_CST);
  });

  it('blocks message/send for exactly an hour after the per-app hour limit, recall stays open', async () => {
    const token = await start({ limits: { perAppPerHour: 2 } });
    const { msgid } = await send(sim, token, textMessage());

    expect(await codes(token, 2)).toEqual([0, 45009]);
    expect(sim.stats().blocks).toEqual({ 'ww-test-corp/1000002|send': EVENING_CST + HOUR });
    expect((await postApi(sim, 'recall', token, { msgid })).errcode).toBe(0);
    clock.advance(HOUR - 1);
    expect(await codes(token, 1)).toEqual([45009]);
    clock.advance(1);
    expect(await codes(token, 1)).toEqual([0]);
    expect(sim.stats().blocks).toEqual({});
  });

  it("under 'refuse', a send that does not fit the day answers 45009 and a smaller one still passes", async () => {
    const token = await start({ seats: 1, readings: { dayLimit: 'refuse' } });

    expect(await codes(token, 19, users(10))).toEqual(Array(19).fill(0));
    expect(await codes(token, 1, users(20))).toEqual([45009]);
    expect(await codes(token, 1, users(5))).toEqual([0]);
  });

  it("under 'block', passing the day's person-times blocks the app until WeCom's midnight (UTC+8)", async () => {
    // Fixed windows: with rolling ones the evening's sends would still count after midnight.
    const token = await start({ seats: 1, readings: { windows: 'fixed', dayLimit: 'block' } });

    expect(await codes(token, 19, users(10))).toEqual(Array(19).fill(0));
    expect(await codes(token, 1, users(20))).toEqual([45009]);
    expect(sim.stats().blocks).toEqual({ 'ww-test-corp/1000002|send': MIDNIGHT_CST });
    expect(await codes(token, 1, users(1))).toEqual([45009]);
    clock.advance(MIDNIGHT_CST - EVENING_CST - 1);
    expect(await codes(token, 1, users(1))).toEqual([45009]);
    clock.advance(1);
    expect(await codes(token, 1, users(20))).toEqual([0]);
    expect(sim.inbox('u0')).toHaveLength(20);
  });

  it("reaches the end of WeCom's day by moving the simulator's clock over HTTP", async () => {
    const token = await start({ seats: 1, readings: { windows: 'fixed', dayLimit: 'block' } });
    expect(await codes(token, 1, users(150))).toEqual([0]);
    expect(await codes(token, 1, users(100))).toEqual([45009]);

    const moved = await inspect(sim, 'clock', { advanceMs: MIDNIGHT_CST - EVENING_CST - 1 });
    expect(moved).toEqual({
      status: 200,
      body: { now: MIDNIGHT_CST - 1, offsetMs: MIDNIGHT_CST - EVENING_CST - 1 },
    });
    expect(await codes(token, 1, users(1))).toEqual([45009]);
    expect((await inspect(sim, 'clock', { advanceMs: 1 })).body).toMatchObject({ now: MIDNIGHT_CST });
    expect(await codes(token, 1, users(100))).toEqual([0]);
    expect(sim.stats().clockOffsetMs).toBe(MIDNIGHT_CST - EVENING_CST);
    expect((await inspect(sim, 'clock', { offsetMs: 0 })).body).toMatchObject({ offsetMs: 0 });
    expect((await inspect(sim, 'clock', { advanceMs: 'soon' })).status).toBe(400);
  });
});

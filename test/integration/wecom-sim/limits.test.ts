import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorOptions, WecomSimulator } from '#local/wecom-sim/index.js';
import {
  getToken,
  manualClock,
  send,
  sendRepeatedly,
  startTestSimulator,
  textMessage,
} from '#test/helpers/sim-fixtures.js';

const MINUTE = 1000;
const HOUR = 10_000;
const DAY = 100_000;

describe('WeCom simulator › limits', () => {
  // Start exactly at a window boundary so the fixed windows are easy to reason about.
  const clock = manualClock(DAY * 17_000);
  let sim: WecomSimulator;

  const start = async (overrides: Partial<SimulatorOptions>): Promise<string> => {
    sim = await startTestSimulator({
      clock: clock.now,
      windows: { minuteMs: MINUTE, hourMs: HOUR, dayMs: DAY },
      ...overrides,
    });
    return getToken(sim);
  };
  const sendMany = (token: string, n: number, body?: unknown) => sendRepeatedly(sim, token, n, body);

  afterEach(async () => {
    await sim.stop();
    clock.advance(DAY - (clock.now() % DAY));
  });

  it('answers 45009 past the per-app minute limit and blocks the app for one minute from then', async () => {
    const token = await start({ limits: { perAppPerMinute: 3 } });

    expect(await sendMany(token, 3)).toEqual([0, 0, 0]);
    clock.advance(MINUTE / 2);
    expect(await sendMany(token, 1)).toEqual([45009]);
    // The next fixed window has started, but the block runs a full minute from the 45009.
    clock.advance(MINUTE / 2);
    expect(await sendMany(token, 1)).toEqual([45009]);
    clock.advance(MINUTE / 2 - 1);
    expect(await sendMany(token, 1)).toEqual([45009]);
    clock.advance(1);
    expect(await sendMany(token, 1)).toEqual([0]);
    expect(sim.stats().rateLimited).toBe(3);
  });

  it('blocks for a whole hour window after the per-app hour limit', async () => {
    const token = await start({ limits: { perAppPerMinute: 100, perAppPerHour: 2 } });

    expect(await sendMany(token, 3)).toEqual([0, 0, 45009]);
    clock.advance(HOUR - 1);
    expect(await sendMany(token, 1)).toEqual([45009]);
    clock.advance(1);
    expect(await sendMany(token, 1)).toEqual([0]);
  });

  it('answers 45009 when a send would pass seats × 200 person-times for the day', async () => {
    const token = await start({ seats: 1, limits: { perMemberPerMinute: 1000, perMemberPerHour: 1000 } });
    const tenUsers = textMessage({ touser: Array.from({ length: 10 }, (_, i) => `u${i}`).join('|') });

    expect(await sendMany(token, 20, tenUsers)).toEqual(Array(20).fill(0));
    expect(await sendMany(token, 1, textMessage())).toEqual([45009]);
    clock.advance(DAY);
    expect(await sendMany(token, 1, textMessage())).toEqual([0]);
  });

  it('counts @all as seats person-times when no directory is configured', async () => {
    const token = await start({ seats: 2 });

    expect(await sendMany(token, 1, textMessage({ touser: '@all' }))).toEqual([0]);
    expect(sim.inbox('@all')).toHaveLength(1);
  });

  it('drops silently and counts the drop past 30 messages per member per minute', async () => {
    const token = await start({});

    const codes = await sendMany(token, 31, textMessage({ touser: 'alice|bob' }));

    expect(codes).toEqual(Array(31).fill(0));
    expect(sim.inbox('alice')).toHaveLength(30);
    expect(sim.inbox('bob')).toHaveLength(30);
    expect(sim.drops()).toEqual([
      expect.objectContaining({ userId: 'alice', reason: 'member_minute' }),
      expect.objectContaining({ userId: 'bob', reason: 'member_minute' }),
    ]);
    expect(sim.stats()).toMatchObject({ delivered: 60, dropped: 2 });
  });

  it('delivers again to the member in the next minute window', async () => {
    const token = await start({ limits: { perMemberPerMinute: 2 } });

    await sendMany(token, 3);
    clock.advance(MINUTE);
    await sendMany(token, 1);

    expect(sim.inbox('alice')).toHaveLength(3);
    expect(sim.stats().dropped).toBe(1);
  });

  it('drops past the per-member hour limit even when the minute limit has room', async () => {
    const token = await start({ limits: { perMemberPerMinute: 2, perMemberPerHour: 3 } });

    await sendMany(token, 2);
    clock.advance(MINUTE);
    await sendMany(token, 2);

    expect(sim.inbox('alice')).toHaveLength(3);
    expect(sim.drops()).toEqual([expect.objectContaining({ userId: 'alice', reason: 'member_hour' })]);
  });

  it('keeps member limits per app', async () => {
    const token = await start({ limits: { perMemberPerMinute: 1 } });
    const other = await getToken(sim, { corpId: 'ww-test-corp', secret: 'secret-b', agentId: 1000003 });

    await sendMany(token, 1);
    expect((await send(sim, other, textMessage({ agentid: 1000003 }))).errcode).toBe(0);

    expect(sim.inbox('alice')).toHaveLength(2);
    expect(sim.stats().dropped).toBe(0);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import type { SimulatorOptions, WecomSimulator } from '#local/wecom-sim/index.js';
import {
  getToken,
  manualClock,
  sendRepeatedly,
  startTestSimulator,
  textMessage,
} from '#test/helpers/sim-fixtures.js';

const MINUTE = 60_000;
/** Midnight UTC: a whole number of minutes, hours and days since the epoch. */
const DAY_START = Date.parse('2026-12-01T00:00:00Z');

describe('WeCom simulator › fixed or rolling windows', () => {
  const clock = manualClock(DAY_START + 10 * 3_600_000);
  let sim: WecomSimulator;

  const start = async (overrides: Partial<SimulatorOptions>): Promise<string> => {
    sim = await startTestSimulator({ clock: clock.now, ...overrides });
    return getToken(sim);
  };
  const sendMany = (token: string, n: number, body?: unknown) => sendRepeatedly(sim, token, n, body);
  /** 24 sends at hh:mm:59 and 24 at hh:mm+1:00: 48 in one second against WeCom's 30 a minute. */
  const burstAcrossMinute = async (token: string) => {
    clock.advance(MINUTE - (clock.now() % MINUTE) - 1000);
    const before = await sendMany(token, 24);
    clock.advance(1000);
    const after = await sendMany(token, 24);
    return [...before, ...after];
  };

  afterEach(async () => {
    await sim.stop();
    clock.advance(3_600_000);
  });

  it('lets 24 sends at :59 and 24 at :00 all reach the member under fixed, epoch-aligned windows', async () => {
    const token = await start({ readings: { windows: 'fixed' } });

    expect(await burstAcrossMinute(token)).toEqual(Array(48).fill(0));
    expect(sim.inbox('alice')).toHaveLength(48);
    expect(sim.drops()).toEqual([]);
  });

  it('drops 18 of them silently under rolling windows', async () => {
    const token = await start({ readings: { windows: 'rolling' } });

    // WeCom still answers errcode 0 for every one.
    expect(await burstAcrossMinute(token)).toEqual(Array(48).fill(0));
    expect(sim.inbox('alice')).toHaveLength(30);
    expect(sim.drops()).toHaveLength(18);
    expect(sim.drops().every((d) => d.userId === 'alice' && d.reason === 'member_minute')).toBe(true);
  });

  it('delivers again once the rolling minute has moved past the burst', async () => {
    const token = await start({ readings: { windows: 'rolling' } });
    await burstAcrossMinute(token);

    clock.advance(MINUTE - 1000 - 1);
    await sendMany(token, 1);
    expect(sim.drops()).toHaveLength(19);
    clock.advance(1);
    await sendMany(token, 1);
    expect(sim.inbox('alice')).toHaveLength(31);
  });

  it('drops across an offset fixed boundary but not across the epoch-aligned one', async () => {
    const token = await start({ readings: { windows: 'fixed', windowOffsetMs: 30_000 } });

    await burstAcrossMinute(token);
    expect(sim.drops()).toHaveLength(18);

    // 24 at :29 and 24 at :30 straddle the offset boundary and all pass.
    clock.advance(MINUTE + 29_000);
    await sendMany(token, 24);
    clock.advance(1000);
    await sendMany(token, 24);
    expect(sim.drops()).toHaveLength(18);
  });

  it('counts the per-member hour the same way', async () => {
    const token = await start({
      readings: { windows: 'rolling' },
      limits: { perMemberPerMinute: 1000, perMemberPerHour: 5 },
    });
    clock.advance(3_600_000 - (clock.now() % 3_600_000) - 1000);
    await sendMany(token, 3);
    clock.advance(1000);
    await sendMany(token, 3);

    expect(sim.drops()).toEqual([expect.objectContaining({ reason: 'member_hour' })]);
  });

  it('answers 45009 past the per-app minute limit across a boundary only when rolling', async () => {
    const fixed = await start({ readings: { windows: 'fixed' }, limits: { perAppPerMinute: 3 } });
    clock.advance(MINUTE - (clock.now() % MINUTE) - 1000);
    expect(await sendMany(fixed, 2)).toEqual([0, 0]);
    clock.advance(1000);
    expect(await sendMany(fixed, 2)).toEqual([0, 0]);
    await sim.stop();

    const rolling = await start({ readings: { windows: 'rolling' }, limits: { perAppPerMinute: 3 } });
    clock.advance(MINUTE - (clock.now() % MINUTE) - 1000);
    expect(await sendMany(rolling, 2)).toEqual([0, 0]);
    clock.advance(1000);
    expect(await sendMany(rolling, 2)).toEqual([0, 45009]);
  });

  it("counts the day's person-times over the last 24 hours when rolling, across WeCom's midnight", async () => {
    const tenUsers = textMessage({ touser: Array.from({ length: 10 }, (_, i) => `u${i}`).join('|') });
    const fillAcrossMidnight = async (readings: { windows: 'fixed' | 'rolling' }) => {
      // WeCom's midnight (UTC+8) is 16:00 UTC.
      clock.advance(DAY_START + 86_400_000 * Math.ceil((clock.now() - DAY_START) / 86_400_000) - clock.now());
      clock.advance(16 * 3_600_000 - 1000);
      const token = await start({ seats: 1, readings });
      const before = await sendMany(token, 15, tenUsers);
      clock.advance(1000);
      return [...before, ...(await sendMany(token, 15, tenUsers))];
    };

    expect(await fillAcrossMidnight({ windows: 'fixed' })).toEqual(Array(30).fill(0));
    await sim.stop();
    expect(await fillAcrossMidnight({ windows: 'rolling' })).toEqual([
      ...Array(20).fill(0),
      ...Array(10).fill(45009),
    ]);
  });

  it('keeps what it counted when the reading changes at runtime', async () => {
    const token = await start({ readings: { windows: 'fixed' } });
    clock.advance(MINUTE - (clock.now() % MINUTE) - 1000);
    await sendMany(token, 24);

    sim.setReadings({ windows: 'rolling' });
    clock.advance(1000);
    await sendMany(token, 24);

    expect(sim.drops()).toHaveLength(18);
  });
});

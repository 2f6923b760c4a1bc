import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_READINGS,
  LENIENT_READINGS,
  READING_PRESETS,
  STRICT_READINGS,
  type WecomSimulator,
} from '#local/wecom-sim/index.js';
import { resolveReadings } from '#local/wecom-sim/readings.js';
import { inspect, startTestSimulator } from '#test/helpers/sim-fixtures.js';

describe('WeCom simulator › readings', () => {
  let sim: WecomSimulator | undefined;
  afterEach(async () => {
    await sim?.stop();
    sim = undefined;
  });

  it('plays the strict readings by default', () => {
    expect(DEFAULT_READINGS).toEqual(STRICT_READINGS);
    expect(READING_PRESETS).toEqual({ lenient: LENIENT_READINGS, strict: STRICT_READINGS });
  });

  it('differs in every reading between the presets, the strict one being the harder for a client', () => {
    const changed = Object.keys(LENIENT_READINGS).filter(
      (k) =>
        LENIENT_READINGS[k as keyof typeof LENIENT_READINGS] !==
        STRICT_READINGS[k as keyof typeof STRICT_READINGS],
    );

    // The offset only matters for fixed windows; every other reading differs.
    expect(changed.sort()).toEqual([
      'dayLimit',
      'duplicateCheck',
      'ipBanAfter',
      'partyReach',
      'responseCodeTtlHours',
      'windows',
    ]);
    expect(STRICT_READINGS).toMatchObject({
      windows: 'rolling',
      duplicateCheck: 'strict',
      dayLimit: 'block',
      partyReach: 'subtree',
    });
  });

  it('resolves a preset name, fields on top of a preset, and fields on top of the current readings', () => {
    expect(resolveReadings('strict', LENIENT_READINGS)).toEqual(STRICT_READINGS);
    expect(resolveReadings({ preset: 'strict', ipBanAfter: 3 }, LENIENT_READINGS)).toEqual({
      ...STRICT_READINGS,
      ipBanAfter: 3,
    });
    expect(resolveReadings({ windows: 'rolling' }, LENIENT_READINGS)).toEqual({
      ...LENIENT_READINGS,
      windows: 'rolling',
    });
  });

  it('rejects unknown readings and values, naming them', () => {
    expect(() => resolveReadings('harsh', LENIENT_READINGS)).toThrow('preset must be lenient or strict');
    expect(() => resolveReadings({ windows: 'sliding' }, LENIENT_READINGS)).toThrow(
      'windows must be one of fixed, rolling',
    );
    expect(() => resolveReadings({ ipBanAfter: -1 }, LENIENT_READINGS)).toThrow('ipBanAfter');
    expect(() => resolveReadings({ userIds: 'sensitive' }, LENIENT_READINGS)).toThrow(
      'unknown reading userIds',
    );
  });

  it('starts with the readings given in its options and shows them in the stats', async () => {
    sim = await startTestSimulator({ readings: { preset: 'strict', windowOffsetMs: 250 } });

    expect(sim.readings()).toEqual({ ...STRICT_READINGS, windowOffsetMs: 250 });
    expect(sim.stats().readings).toEqual({ ...STRICT_READINGS, windowOffsetMs: 250 });
  });

  it('changes readings at runtime over HTTP, keeps them across a reset, and answers 400 to bad ones', async () => {
    sim = await startTestSimulator();

    const changed = await inspect(sim, 'readings', { preset: 'strict', ipBanAfter: 2 });
    expect(changed).toEqual({ status: 200, body: { ...STRICT_READINGS, ipBanAfter: 2 } });
    expect((await inspect(sim, 'readings', { dayLimit: 'refuse' })).body).toMatchObject({
      windows: 'rolling',
      dayLimit: 'refuse',
    });
    await inspect(sim, 'reset', {});
    expect((await inspect(sim, 'readings')).body).toMatchObject({ windows: 'rolling', ipBanAfter: 2 });
    expect((await inspect(sim, 'stats')).body.readings).toMatchObject({ windows: 'rolling' });

    const bad = await inspect(sim, 'readings', { duplicateCheck: 'maybe' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'SIM_READINGS_INVALID' });
    expect(sim.readings().duplicateCheck).toBe('strict');
  });
});

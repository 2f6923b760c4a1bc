import { afterEach, describe, expect, it } from 'vitest';
import type { SimReadings, WecomSimulator } from '#local/wecom-sim/index.js';
import {
  getToken,
  inspect,
  manualClock,
  send,
  startTestSimulator,
  textMessage,
} from '#test/helpers/sim-fixtures.js';

const flagged = (overrides: Record<string, unknown> = {}) =>
  textMessage({ enable_duplicate_check: 1, duplicate_check_interval: 600, ...overrides });

describe('WeCom simulator › duplicate check, lenient or strict', () => {
  const clock = manualClock();
  let sim: WecomSimulator;

  const start = async (duplicateCheck: SimReadings['duplicateCheck']): Promise<string> => {
    sim = await startTestSimulator({ clock: clock.now, readings: { duplicateCheck } });
    return getToken(sim);
  };
  afterEach(async () => {
    await sim.stop();
  });

  it("suppresses a flagged retry of an unflagged original only under 'lenient'", async () => {
    let token = await start('lenient');
    const original = await send(sim, token, textMessage());
    const retry = await send(sim, token, flagged());
    expect(retry).toMatchObject({ errcode: 0, msgid: original.msgid });
    expect(sim.inbox('alice')).toHaveLength(1);
    await sim.stop();

    token = await start('strict');
    await send(sim, token, textMessage());
    const strictRetry = await send(sim, token, flagged());
    expect(strictRetry.errcode).toBe(0);
    expect(sim.inbox('alice')).toHaveLength(2);
    expect(sim.duplicates()).toEqual([]);
  });

  it("suppresses a byte-identical flagged retry under 'strict', answers the original msgid, and records it", async () => {
    const token = await start('strict');
    const original = await send(sim, token, flagged());
    clock.advance(599_000);

    const retry = await send(sim, token, flagged());

    expect(retry).toMatchObject({ errcode: 0, msgid: original.msgid });
    expect(sim.inbox('alice')).toHaveLength(1);
    expect(sim.stats().duplicatesSuppressed).toBe(1);
    expect((await inspect(sim, 'duplicates')).body).toEqual([
      {
        at: clock.now(),
        agentId: 1000002,
        msgid: original.msgid,
        originalAt: clock.now() - 599_000,
        reading: 'strict',
        intervalS: 600,
      },
    ]);
  });

  it.each([
    ['lenient', 1],
    ['strict', 3],
  ] as const)(
    "under '%s', the same content with other flags or key order reaches the member %i time(s)",
    async (reading, times) => {
      const token = await start(reading);
      await send(sim, token, flagged());
      await send(sim, token, flagged({ duplicate_check_interval: 1200 }));
      const { touser, msgtype, agentid, text } = textMessage();
      await send(sim, token, {
        enable_duplicate_check: 1,
        duplicate_check_interval: 600,
        text,
        touser,
        msgtype,
        agentid,
      });

      expect(sim.inbox('alice')).toHaveLength(times);
    },
  );

  it.each(['lenient', 'strict'] as const)(
    "under '%s', compares within the later send's interval",
    async (reading) => {
      const token = await start(reading);
      await send(sim, token, flagged({ duplicate_check_interval: 60 }));
      clock.advance(59_999);
      expect(await send(sim, token, flagged({ duplicate_check_interval: 60 }))).toMatchObject({ errcode: 0 });
      expect(sim.inbox('alice')).toHaveLength(1);

      clock.advance(1);
      await send(sim, token, flagged({ duplicate_check_interval: 60 }));
      expect(sim.inbox('alice')).toHaveLength(2);
    },
  );

  it("measures from the earlier send with the later send's interval, not the earlier one's", async () => {
    const token = await start('lenient');
    await send(sim, token, flagged({ duplicate_check_interval: 14_400 }));
    clock.advance(60_000);

    await send(sim, token, flagged({ duplicate_check_interval: 60 }));

    expect(sim.inbox('alice')).toHaveLength(2);
  });

  it('switches readings at runtime without losing what it has seen', async () => {
    const token = await start('strict');
    await send(sim, token, textMessage());

    sim.setReadings({ duplicateCheck: 'lenient' });
    await send(sim, token, flagged());

    expect(sim.inbox('alice')).toHaveLength(1);
    expect(sim.duplicates()).toEqual([expect.objectContaining({ reading: 'lenient' })]);
  });
});

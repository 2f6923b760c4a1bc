import { describe, expect, it } from 'vitest';
import { STATUS } from '#lib/model/index.js';
import { processBatch } from '#lib/sender/index.js';
import { WecomApiError } from '#lib/wecom/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { queued, senderHarness, textRequest } from '#test/helpers/unit-sender.js';

const START = Date.parse('2026-12-01T02:00:07Z'); // 10:00:07 China Standard Time

function harness() {
  const clock = fakeClock(START);
  const h = senderHarness(clock.now);
  let n = 0;
  const batch = async (count: number) => {
    const ms = await Promise.all(
      Array.from({ length: count }, async () => {
        // One member per message: a member's own messages are paced (lib/quota); this is about the app's pause.
        const m = queued(`msg_${++n}`, START, textRequest({ touser: [`user${n}`] }));
        await h.store.create(m.record);
        return m;
      }),
    );
    await processBatch(
      h.deps,
      ms.map((m) => m.sqs(m.body(), 1)),
    );
    return ms;
  };
  return { clock, h, batch };
}

describe('45009: the app pauses, growing the pause while WeCom keeps refusing', () => {
  it('defers the app’s messages without calling WeCom, then lets one probe through', async () => {
    const { clock, h, batch } = harness();
    h.wecom.script.push(async () => {
      throw new WecomApiError(45009, 'api freq out of limit', 'message/send');
    });
    const [first] = await batch(1);
    const sendsAtPause = h.wecom.sends.length;

    const during = await batch(5);
    clock.advance(61_000);
    const after = await batch(5);

    expect(h.store.record(first?.record.id ?? '')?.status).toBe(STATUS.deferred);
    for (const m of during) expect(h.store.record(m.record.id)?.status).toBe(STATUS.deferred);
    // After the pause: one probe went out; it succeeded, so the others of later batches go too.
    expect(h.wecom.sends.length - sendsAtPause).toBe(1);
    expect(after.filter((m) => h.store.record(m.record.id)?.status === STATUS.sent)).toHaveLength(1);
    expect(h.pauseStore.pauses.has('ops')).toBe(false);
    await batch(3);
    expect(h.wecom.sends.length - sendsAtPause).toBe(4);
  });

  it('pauses until the end of WeCom’s day when the probes keep getting 45009', async () => {
    const { clock, h, batch } = harness();
    h.wecom.send = async (_t, body) => {
      h.wecom.sends.push(body);
      throw new WecomApiError(45009, 'api freq out of limit', 'message/send');
    };

    const untils: number[] = [];
    for (let i = 0; i < 4; i++) {
      await batch(i === 0 ? 1 : 3);
      const p = h.pauseStore.pauses.get('ops');
      if (!p) throw new Error('not paused');
      untils.push(p.untilMs);
      clock.advance(p.untilMs - clock.now() + 1);
    }

    expect(new Date(untils.at(-1) ?? 0).toISOString()).toBe('2026-12-01T16:00:00.000Z'); // midnight CST
    // One send per step: the first, then one probe at each pause's end.
    expect(h.wecom.sends).toHaveLength(4);
  });
});

describe('configuration errcodes open a circuit: messages wait for the operator, then fail', () => {
  it('holds every message after a wrong secret (40001 on gettoken), alarms per app, and calls gettoken once', async () => {
    const { h, batch } = harness();
    let gettokens = 0;
    h.wecom.getToken = async () => {
      gettokens++;
      throw new WecomApiError(40001, 'invalid credential', 'gettoken');
    };

    const ms = [...(await batch(10)), ...(await batch(10))];

    expect(gettokens).toBe(1);
    for (const m of ms) {
      const record = h.store.record(m.record.id);
      expect(record?.status).toBe(STATUS.deferred);
      expect(record?.events?.at(-1)?.detail).toMatch(/configuration error 40001.*secret is wrong/);
    }
    expect(h.deps.metrics.snapshotDimensioned()['ConfigError{app=ops}']).toBeGreaterThanOrEqual(1);
    expect(h.pauseStore.pauses.get('ops')).toMatchObject({ kind: 'config_error', errcode: 40001 });
  });

  it('fails waiting messages with the errcode and its hint once the hold ran out, still probing now and then', async () => {
    const { clock, h, batch } = harness();
    const app = h.deps.config.apps.ops;
    if (!app) throw new Error('no app');
    app.delivery = { budgetSeconds: 86_400, configErrorHoldSeconds: 600, duplicateCheckSeconds: 3600 };
    h.wecom.send = async (_t, body) => {
      h.wecom.sends.push(body);
      throw new WecomApiError(
        60020,
        'not allow to access from your ip, from ip: 203.0.113.7',
        'message/send',
      );
    };
    await batch(1);
    clock.advance(300_000);
    const held = await batch(2);
    clock.advance(301_000);

    const late = await batch(2);

    for (const m of held) expect(h.store.record(m.record.id)?.status).toBe(STATUS.deferred);
    for (const m of late) {
      expect(h.store.record(m.record.id)).toMatchObject({
        status: STATUS.failed,
        error: {
          code: 'wecom_config_error',
          wecom_errcode: 60020,
          message: expect.stringContaining('203.0.113.7'),
        },
      });
    }
  });

  it('closes the circuit when a probe goes through after the operator fixed the cause', async () => {
    const { clock, h, batch } = harness();
    let broken = true;
    h.wecom.send = async (_t, body) => {
      h.wecom.sends.push(body);
      if (broken) throw new WecomApiError(48002, 'api forbidden', 'message/send');
      return { msgid: `m${h.wecom.sends.length}` };
    };
    const [first] = await batch(1);
    broken = false; // the operator fixes the app's permissions
    clock.advance(61_000);

    const [probe] = await batch(1);

    expect(h.store.record(probe?.record.id ?? '')?.status).toBe(STATUS.sent);
    expect(h.pauseStore.pauses.has('ops')).toBe(false);
    expect(h.store.record(first?.record.id ?? '')?.status).toBe(STATUS.deferred); // comes back at its own time
  });
});

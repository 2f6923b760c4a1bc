import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WecomSimulator } from '#local/wecom-sim/index.js';
import {
  getToken,
  manualClock,
  OTHER_APP,
  postApi,
  send,
  startTestSimulator,
  textMessage,
} from '#test/helpers/sim-fixtures.js';

describe('WeCom simulator › duplicate check and recall', () => {
  const clock = manualClock();
  let sim: WecomSimulator;
  let token: string;

  beforeEach(async () => {
    sim = await startTestSimulator({ clock: clock.now, tokenTtlSeconds: 30 * 24 * 3600 });
    token = await getToken(sim);
  });
  afterEach(async () => {
    await sim.stop();
  });

  const checked = (overrides: Record<string, unknown> = {}) =>
    textMessage({ enable_duplicate_check: 1, duplicate_check_interval: 600, ...overrides });

  it('suppresses an identical message within the interval and answers the original msgid', async () => {
    const first = await send(sim, token, checked());
    clock.advance(599_000);
    const second = await send(sim, token, checked());

    expect(second).toMatchObject({ errcode: 0, msgid: first.msgid });
    expect(sim.inbox('alice')).toHaveLength(1);
    expect(sim.stats().duplicatesSuppressed).toBe(1);
  });

  it('delivers the identical message again once the interval has passed', async () => {
    await send(sim, token, checked());
    clock.advance(600_000);

    expect((await send(sim, token, checked())).errcode).toBe(0);
    expect(sim.inbox('alice')).toHaveLength(2);
  });

  it('suppresses a checked resend of a message first sent without the check, under the lenient reading', async () => {
    sim.setReadings({ duplicateCheck: 'lenient' });
    const first = await send(sim, token, textMessage());
    const resend = await send(sim, token, checked());

    expect(resend.msgid).toBe(first.msgid);
    expect(sim.inbox('alice')).toHaveLength(1);
  });

  it('delivers repeats when the check is off', async () => {
    await send(sim, token, textMessage());
    await send(sim, token, textMessage());

    expect(sim.inbox('alice')).toHaveLength(2);
  });

  it('treats different content or recipients as different messages', async () => {
    await send(sim, token, checked());
    await send(sim, token, checked({ text: { content: 'disk full' } }));
    await send(sim, token, checked({ touser: 'alice|bob' }));

    expect(sim.inbox('alice')).toHaveLength(3);
    expect(sim.stats().duplicatesSuppressed).toBe(0);
  });

  it('recalls a message within 24 hours and marks it in every inbox', async () => {
    const { msgid } = await send(sim, token, textMessage({ touser: 'alice|bob' }));
    clock.advance(23 * 3_600_000);

    expect((await postApi(sim, 'recall', token, { msgid })).errcode).toBe(0);
    expect(sim.inbox('alice')[0]?.recalled).toBe(true);
    expect(sim.inbox('bob')[0]?.recalled).toBe(true);
    expect(sim.stats().recallCalls).toBe(1);
  });

  it('answers 42052 when the message is older than 24 hours', async () => {
    const { msgid } = await send(sim, token, textMessage());
    clock.advance(24 * 3_600_000 + 1);

    expect((await postApi(sim, 'recall', token, { msgid })).errcode).toBe(42052);
    expect(sim.inbox('alice')[0]?.recalled).toBe(false);
  });

  it("answers 40035 for an unknown msgid or another app's msgid", async () => {
    const { msgid } = await send(sim, token, textMessage());
    const otherToken = await getToken(sim, OTHER_APP);

    expect((await postApi(sim, 'recall', token, { msgid: 'nope' })).errcode).toBe(40035);
    expect((await postApi(sim, 'recall', otherToken, { msgid })).errcode).toBe(40035);
  });
});

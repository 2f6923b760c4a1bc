import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '#test/helpers/cli-inprocess.js';
import { type JsonBody, startTestGateway, type TestGateway, text, waitFor } from '#test/helpers/gateway.js';
import {
  HOOKS_TLS,
  startWebhookReceiver,
  type WebhookReceiver,
  webhookResolver,
} from '#test/helpers/webhook-receiver.js';

const inSeconds = (gw: TestGateway, s: number) => new Date(gw.stack.clock.now() + s * 1000).toISOString();

/**
 * `send_at` on the local stack: near schedules through the SQS delay, far ones through the release timers'
 * emulation and a clock the test moves, and cancellation of both (docs/scheduling.md). Spread 0 so that a
 * message's release is its `send_at`.
 */
describe('scheduled sends', () => {
  let gw: TestGateway;
  let receiver: WebhookReceiver;
  const dns = webhookResolver();

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    gw = await startTestGateway({
      webhook: { allowedPorts: [receiver.port] },
      runtime: { webhookResolve: dns.resolve, webhookCa: HOOKS_TLS.cert },
      configure: (config) => {
        for (const app of Object.values(config.apps)) app.schedule = { spreadSeconds: 0 };
      },
    });
  });
  afterAll(async () => {
    await gw?.stack.stop();
    await receiver?.stop();
  });

  const inbox = (user: string) => gw.stack.simulator?.inbox(user) ?? [];

  it('holds a message a few seconds ahead as scheduled, and delivers it at its time, not before', async () => {
    const sendAt = inSeconds(gw, 3);
    const res = await gw.post('/v1/messages', text('in three seconds', 'near1', { send_at: sendAt }));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'scheduled', send_at: sendAt, release_at: sendAt });

    const before = await gw.get(`/v1/messages/${res.body.id}`);
    expect(before.body).toMatchObject({ status: 'scheduled', send_at: sendAt, scheduled_by: 'send_at' });
    expect(inbox('near1')).toEqual([]);

    const sent = await gw.waitForStatus(res.body.id, ['sent'], 15_000);
    expect(inbox('near1')).toHaveLength(1);
    // Not before its time, by the gateway's clock and by WeCom's (the simulator's receipt).
    expect(Date.parse(sent.sent_at)).toBeGreaterThanOrEqual(Date.parse(sendAt));
    expect(inbox('near1')[0]?.receivedAt ?? 0).toBeGreaterThanOrEqual(Date.parse(sendAt));
  });

  it('delivers one 20 minutes ahead at its time once the clock gets there, through a release timer', async () => {
    const sendAt = inSeconds(gw, 20 * 60);
    const res = await gw.post('/v1/messages', text('in twenty minutes', 'far1', { send_at: sendAt }));
    expect(res.body.status).toBe('scheduled');
    expect(gw.stack.timers.size()).toBe(1);
    // The list shows it scheduled, with its time, as the message's own page does.
    const listed = await gw.get('/v1/messages?app=ops&status=scheduled');
    expect(listed.body.messages).toContainEqual(
      expect.objectContaining({ id: res.body.id, status: 'scheduled', send_at: sendAt }),
    );

    // Five minutes before: the timer (which fires 5 minutes ahead) has not fired, nothing is sent.
    gw.stack.clock.advance(14 * 60_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(gw.stack.timers.fired).not.toContain(res.body.id);
    expect(inbox('far1')).toEqual([]);

    gw.stack.clock.advance(6 * 60_000 + 1_000);
    const sent = await gw.waitForStatus(res.body.id, ['sent'], 15_000);
    expect(gw.stack.timers.fired).toContain(res.body.id);
    expect(Date.parse(sent.sent_at)).toBeGreaterThanOrEqual(Date.parse(sendAt));
    expect(inbox('far1')).toHaveLength(1);
  });

  it('never delivers a scheduled message once canceled, and tells the business with message.canceled', async () => {
    const sendAt = inSeconds(gw, 30 * 60);
    const res = await gw.post(
      '/v1/messages',
      text('take me back', 'cancel1', { send_at: sendAt, callback_url: receiver.url('/canceled') }),
    );
    expect(gw.stack.timers.size()).toBe(1);

    const del = await fetch(`${gw.stack.apiUrl}/v1/messages/${res.body.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${gw.key}` },
    });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ id: res.body.id, status: 'canceled' });
    // The timer is gone: nothing is left to fire.
    expect(gw.stack.timers.size()).toBe(0);

    gw.stack.clock.advance(31 * 60_000);
    await waitFor(() => receiver.received.some((w) => w.path === '/canceled'));
    const hook = receiver.received.find((w) => w.path === '/canceled') as { json: JsonBody };
    expect(hook.json).toMatchObject({
      type: 'message.canceled',
      data: { id: res.body.id, status: 'canceled' },
    });
    await new Promise((r) => setTimeout(r, 500));
    expect((await gw.get(`/v1/messages/${res.body.id}`)).body.status).toBe('canceled');
    expect(inbox('cancel1')).toEqual([]);

    // Canceling again answers the same; a sent message is a 409 that names its status.
    const again = await fetch(`${gw.stack.apiUrl}/v1/messages/${res.body.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${gw.key}` },
    });
    expect(again.status).toBe(200);
  });

  it('schedules with `send --at` and takes it back with `cancel` from the command line', async () => {
    const env = { WECOM_GATEWAY_URL: gw.stack.apiUrl, WECOM_GATEWAY_KEY: gw.key, NO_COLOR: '1' };
    const sent = await runInProcess(
      ['send', '--app', 'ops', '--to', 'cli1', '--text', 'from the CLI', '--at', '+1h'],
      { env },
    );
    expect(sent.code, sent.stderr).toBe(0);
    const id = sent.stdout.trim();
    expect(sent.stderr).toContain('scheduled for');
    expect((await gw.get(`/v1/messages/${id}`)).body.status).toBe('scheduled');

    const canceled = await runInProcess(['cancel', id], { env });
    expect(canceled.code, canceled.stderr).toBe(0);
    expect(canceled.stdout).toBe(`${id} canceled\n`);
    const shown = await runInProcess(['status', id], { env });
    expect(shown.stdout).toContain('canceled');
    expect(shown.stdout).toContain('send at');
  });

  it('refuses a sent message with 409 naming its status', async () => {
    const res = await gw.post('/v1/messages', text('already out', 'sent1'));
    await gw.waitForStatus(res.body.id, ['sent']);
    const del = await fetch(`${gw.stack.apiUrl}/v1/messages/${res.body.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${gw.key}` },
    });
    expect(del.status).toBe(409);
    expect(((await del.json()) as JsonBody).error).toMatchObject({ code: 'not_cancelable' });
  });

  it('sends a send_at in the past at once, and refuses a bad or too distant one without storing anything', async () => {
    const past = await gw.post('/v1/messages', text('late', 'past1', { send_at: inSeconds(gw, -60) }));
    expect(past.body.status).toBe('queued');
    await gw.waitForStatus(past.body.id, ['sent']);

    for (const sendAt of ['2026-12-07T09:00:00', 'tomorrow', inSeconds(gw, 31 * 86_400)]) {
      const bad = await gw.post('/v1/messages', text('nope', 'bad1', { send_at: sendAt }));
      expect(bad.status, sendAt).toBe(400);
      expect(bad.body.error.details).toEqual([expect.objectContaining({ field: 'send_at' })]);
    }
    const listed = await gw.get('/v1/messages?app=ops&touser=bad1');
    expect(listed.body.messages).toEqual([]);
  });
});

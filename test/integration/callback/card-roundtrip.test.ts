import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_WEBHOOK_SECRET } from '#local/harness/config.js';
import { type JsonBody, startTestGateway, type TestGateway, waitFor } from '#test/helpers/gateway.js';
import { cardBody } from '#test/helpers/messages-factories.js';
import {
  HOOKS_TLS,
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
  webhookResolver,
} from '#test/helpers/webhook-receiver.js';

/**
 * The whole loop on the local stack: a template card is sent → the WeCom simulator plays the user and presses its
 * button (an encrypted callback to the gateway) → the business's webhook receiver gets a signed `wecom.event` for
 * that message, verified here with the `standardwebhooks` package → the business updates the card.
 */
let gw: TestGateway;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  gw = await startTestGateway({
    webhook: { allowedPorts: [receiver.port] },
    runtime: { webhookResolve: webhookResolver().resolve, webhookCa: HOOKS_TLS.cert },
  });
});
afterAll(async () => {
  await gw?.stack.stop();
  await receiver?.stop();
});

/** Standard Webhooks verification, as a receiver would do it: throws on a bad or missing signature. */
const verified = (hook: ReceivedWebhook) => new Webhook(TEST_WEBHOOK_SECRET).verify(hook.body, hook.headers);

async function webhookFor(pred: (hook: ReceivedWebhook) => boolean): Promise<ReceivedWebhook> {
  await waitFor(
    () => receiver.received.some(pred),
    20_000,
    () => `no such webhook among ${JSON.stringify(receiver.received.map((r) => r.json))}`,
  );
  return receiver.received.find(pred) as ReceivedWebhook;
}

const simPost = async (path: string, body: unknown) => {
  const res = await fetch(`${gw.stack.simulator?.url}/__sim/${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as JsonBody };
};

describe('template card → button press → signed wecom.event webhook → card update', () => {
  let id: string;

  it('sends the card with a task_id the gateway assigned, and tells the business it was sent', async () => {
    const card = cardBody('button_interaction', { task_id: undefined }) as Record<string, unknown>;
    const res = await gw.post('/v1/messages', {
      ...card,
      touser: 'alice',
      callback_url: receiver.url('/hooks/wecom?token=biz-secret'),
      metadata: { ticket: 'OPS-7' },
    });
    expect(res.status).toBe(202);
    id = res.body.id;

    await gw.waitForStatus(id, ['sent']);
    const sent = await webhookFor((h) => h.json.type === 'message.sent' && h.json.data.id === id);
    expect(verified(sent)).toMatchObject({ type: 'message.sent', data: { id, status: 'sent' } });
    expect(sent.path).toBe('/hooks/wecom?token=biz-secret');
    expect(sent.body).not.toContain('response_code');
    const delivered = gw.stack.simulator?.inbox('alice').at(-1)?.payload as { task_id: string };
    expect(delivered.task_id).toBe(id);
  });

  it('turns the simulated button press into a wecom.event for that message, signed for the business', async () => {
    const click = await simPost('click', { userid: 'alice', task_id: id, key: 'button_key_2' });
    expect(click).toMatchObject({
      status: 200,
      body: { status: 200, attempts: 1, eventKey: 'button_key_2' },
    });

    const hook = await webhookFor((h) => h.json.type === 'wecom.event' && h.json.data.message_id === id);

    expect(verified(hook)).toMatchObject({
      type: 'wecom.event',
      data: {
        app: 'ops',
        message_id: id,
        metadata: { ticket: 'OPS-7' },
        event: { kind: 'template_card_event', from: 'alice', event_key: 'button_key_2', task_id: id },
      },
    });
    expect(hook.headers['webhook-id']).toMatch(/^wh_/);
    // The click's response_code is the gateway's to spend, never the business's to see.
    expect(hook.body).not.toContain(click.body.responseCode);
    // A signature under another secret does not verify: the check above is not vacuous.
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(hook.body, hook.headers),
    ).toThrow();
  });

  it('updates the card with the click’s response_code, then with the send’s, then has none left', async () => {
    const first = await gw.post(`/v1/messages/${id}/card`, { button: { replace_name: 'Approved by alice' } });
    const second = await gw.post(`/v1/messages/${id}/card`, { button: { replace_name: 'Deployed' } });
    const third = await gw.post(`/v1/messages/${id}/card`, { button: { replace_name: 'again' } });

    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.body).toEqual({ id, status: 'updated' });
    expect(third).toMatchObject({ status: 409, body: { error: { code: 'no_response_code' } } });
    const entry = gw.stack.simulator?.inbox('alice').at(-1);
    expect(entry?.updates?.map((u) => ('replaceName' in u ? u.replaceName : ''))).toEqual([
      'Approved by alice',
      'Deployed',
    ]);
  });

  it('lists the WeCom event and the webhook attempts (time, status code, latency) on the message', async () => {
    const { body } = await gw.get(`/v1/messages/${id}`);

    expect(body.webhook_status).toBe('delivered');
    expect(body.wecom_events).toEqual([
      expect.objectContaining({
        message_id: id,
        event: expect.objectContaining({ event_key: 'button_key_2' }),
      }),
    ]);
    expect(body.webhook_attempts).toHaveLength(2);
    for (const attempt of body.webhook_attempts) {
      expect(attempt).toMatchObject({
        at: expect.stringMatching(/^\d{4}-/),
        status_code: 200,
        latency_ms: expect.any(Number),
        outcome: 'delivered',
        attempt: 1,
        excerpt: 'thanks',
        // The query string (it held the business's token) is not kept.
        target: `https://hooks.test:${receiver.port}/hooks/wecom`,
      });
    }
    expect(body.webhook_attempts.map((a: { type: string }) => a.type).sort()).toEqual([
      'message.sent',
      'wecom.event',
    ]);
  });

  it('refuses to update what is not a card (409) and an update without button text (400)', async () => {
    const text = await gw.post('/v1/messages', {
      app: 'ops',
      touser: 'bob',
      msgtype: 'text',
      text: { content: 'x' },
    });
    await gw.waitForStatus(text.body.id, ['sent']);

    const res = await gw.post(`/v1/messages/${text.body.id}/card`, { button: { replace_name: 'x' } });
    const bad = await gw.post(`/v1/messages/${id}/card`, { button: { replace_name: '' } });

    expect(res).toMatchObject({ status: 409, body: { error: { code: 'not_updatable' } } });
    expect(bad).toMatchObject({
      status: 400,
      body: { error: { details: [{ field: 'button.replace_name' }] } },
    });
  });
});

describe('a user writes to the app', () => {
  it('stores the message in the app’s event feed (no message to tie it to, no webhook)', async () => {
    const since = new Date().toISOString();
    const before = receiver.received.length;

    const reply = await simPost('reply', { userid: 'carol', content: 'on my way' });

    expect(reply.body.status).toBe(200);
    const { body } = await gw.get(`/v1/events?app=ops&since=${since}`);
    expect(body.events).toEqual([
      expect.objectContaining({
        id: `msg:${reply.body.msgId}`,
        message_id: null,
        event: expect.objectContaining({ kind: 'text', from: 'carol', content: 'on my way' }),
      }),
    ]);
    expect(receiver.received.length).toBe(before);
  });
});

import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JsonBody, startTestGateway, type TestGateway, text, waitFor } from '#test/helpers/gateway.js';
import {
  HOOKS_TLS,
  startWebhookReceiver,
  type WebhookReceiver,
  webhookResolver,
} from '#test/helpers/webhook-receiver.js';

/**
 * The notify function's delivery rules on the local stack, with the retry schedule shortened by option (1–2 s
 * backoff instead of 30 s–2 h; the production schedule's ≥ 24 h is a unit test of lib/webhooks).
 */
const SHORT = { baseSeconds: 1, capSeconds: 2, maxAgeSeconds: 120, maxAttempts: 100 };

async function attemptsOf(gw: TestGateway, id: string, done: (body: JsonBody) => boolean): Promise<JsonBody> {
  let body: JsonBody;
  await waitFor(
    async () => {
      body = (await gw.get(`/v1/messages/${id}`)).body;
      return done(body);
    },
    45_000,
    () => `message ${id}: ${JSON.stringify(body?.webhook_attempts)} ${body?.webhook_status}`,
  );
  return body;
}

describe('webhook retries, refusals and stops', () => {
  let gw: TestGateway;
  let receiver: WebhookReceiver;
  const dns = webhookResolver();

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    gw = await startTestGateway({
      webhook: { allowedPorts: [receiver.port] },
      runtime: { webhookResolve: dns.resolve, webhookCa: HOOKS_TLS.cert, webhookRetry: SHORT },
    });
  });
  afterAll(async () => {
    await gw?.stack.stop();
    await receiver?.stop();
  });

  const send = async (callbackUrl: string) => {
    const res = await gw.post('/v1/messages', text('webhook me', 'zhangsan', { callback_url: callbackUrl }));
    expect(res.status).toBe(202);
    return res.body.id as string;
  };

  it('keeps retrying while the receiver is down (10 s here, standing for 10 min) and delivers once it is back', async () => {
    await receiver.down();
    const id = await send(receiver.url('/down-then-up'));

    await attemptsOf(
      gw,
      id,
      (b) => b.webhook_attempts.filter((a: JsonBody) => a.outcome === 'retry').length >= 3,
    );
    await new Promise((r) => setTimeout(r, 10_000));
    await receiver.up();
    const body = await attemptsOf(gw, id, (b) => b.webhook_status === 'delivered');

    const outcomes = body.webhook_attempts.map((a: JsonBody) => a.outcome).reverse();
    expect(outcomes.at(-1)).toBe('delivered');
    expect(outcomes.slice(0, -1).every((o: string) => o === 'retry')).toBe(true);
    expect(body.webhook_attempts.at(-1)).toMatchObject({ reason: expect.stringContaining('ECONNREFUSED') });
    // Attempts are numbered by receive and share one webhook id, which the receiver uses to drop repeats.
    expect(new Set(body.webhook_attempts.map((a: JsonBody) => a.webhook_id)).size).toBe(1);
    expect(body.webhook_attempts[0].attempt).toBe(body.webhook_attempts.length);
    const got = receiver.received.filter((r) => r.json.data?.id === id);
    expect(got.map((r) => r.json.type)).toEqual(['message.sent']);
  }, 90_000);

  it('refuses a target that resolves to a private address at connect time (DNS rebinding), and records it', async () => {
    // The first lookup (ingest's check of callback_url) sees a public address; the connect-time lookup a private one.
    const id = await send('https://rebind.test/hook');

    const body = await attemptsOf(gw, id, (b) => b.webhook_status !== null);

    expect(body.webhook_status).toBe('refused');
    expect(body.webhook_attempts).toEqual([
      expect.objectContaining({
        outcome: 'refused',
        status_code: null,
        reason: expect.stringContaining('private address (10.0.0.7)'),
      }),
    ]);
    expect(dns.lookups.filter((h) => h === 'rebind.test').length).toBeGreaterThanOrEqual(2);
  });

  it('refuses a callback_url that already resolves to a private address at ingest (400, nothing queued)', async () => {
    const res = await gw.post(
      '/v1/messages',
      text('x', 'zhangsan', { callback_url: 'https://intranet.test/hook' }),
    );

    expect(res).toMatchObject({
      status: 400,
      body: {
        error: { details: [{ field: 'callback_url', message: expect.stringContaining('10.20.30.40') }] },
      },
    });
  });

  it('stops at once when the receiver answers 410 Gone', async () => {
    receiver.status = 410;
    try {
      const id = await send(receiver.url('/gone'));

      const body = await attemptsOf(gw, id, (b) => b.webhook_status !== null);

      expect(body.webhook_status).toBe('gone');
      expect(body.webhook_attempts).toEqual([
        expect.objectContaining({ outcome: 'gone', status_code: 410, excerpt: 'no (410)' }),
      ]);
    } finally {
      receiver.status = 200;
    }
  });
});

describe('a webhook whose retries run out', () => {
  let gw: TestGateway;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    receiver.status = 503;
    gw = await startTestGateway({
      webhook: { allowedPorts: [receiver.port] },
      runtime: {
        webhookResolve: webhookResolver().resolve,
        webhookCa: HOOKS_TLS.cert,
        webhookRetry: { ...SHORT, capSeconds: 1, maxAgeSeconds: 4 },
      },
    });
  });
  afterAll(async () => {
    await gw?.stack.stop();
    await receiver?.stop();
  });

  it('goes to the notify DLQ and marks the message webhook_status dead, its status untouched', async () => {
    const res = await gw.post(
      '/v1/messages',
      text('doomed', 'zhangsan', { callback_url: receiver.url('/down') }),
    );
    const id = res.body.id as string;

    const body = await attemptsOf(gw, id, (b) => b.webhook_status === 'dead');

    expect(body.status).toBe('sent');
    expect(body.webhook_attempts[0]).toMatchObject({
      outcome: 'dead',
      status_code: 503,
      reason: expect.stringMatching(/HTTP 503; gave up after \d+ attempts/),
    });
    expect(body.webhook_attempts.length).toBeGreaterThanOrEqual(2);
    const dlq = await gw.stack.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: gw.stack.resources.queueUrls['notify-dlq'],
        WaitTimeSeconds: 1,
        MessageAttributeNames: ['All'],
      }),
    );
    expect(dlq.Messages?.map((m) => JSON.parse(m.Body ?? '{}'))).toEqual([
      expect.objectContaining({ kind: 'status', messageId: id, status: 'sent' }),
    ]);
    expect(dlq.Messages?.[0]?.MessageAttributes?.reason?.StringValue).toContain('HTTP 503');
  }, 60_000);
});

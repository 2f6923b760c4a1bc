import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newDevKey } from '#local/dev-config.js';
import { runInProcess } from '#test/helpers/cli-inprocess.js';
import { type JsonBody, startTestGateway, type TestGateway, text, waitFor } from '#test/helpers/gateway.js';
import { openApiValidators, schemaErrors } from '#test/helpers/openapi.js';
import {
  HOOKS_TLS,
  startWebhookReceiver,
  type WebhookReceiver,
  webhookResolver,
} from '#test/helpers/webhook-receiver.js';

/** The notify retry schedule shortened by option (1–2 s backoff instead of 30 s–2 h). */
const SHORT = { baseSeconds: 1, capSeconds: 2, maxAgeSeconds: 120, maxAttempts: 100 };

describe('GET /v1/messages/{id}/webhooks', () => {
  let gw: TestGateway;
  let receiver: WebhookReceiver;
  const otherKey = newDevKey();

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    gw = await startTestGateway({
      apps: ['ops', 'other'],
      webhook: { allowedPorts: [receiver.port] },
      extraApiKeys: [{ name: 'other', sha256: otherKey.sha256, apps: ['other'], scopes: ['messages:read'] }],
      runtime: { webhookResolve: webhookResolver().resolve, webhookCa: HOOKS_TLS.cert, webhookRetry: SHORT },
    });
  });
  afterAll(async () => {
    await gw?.stack.stop();
    await receiver?.stop();
  });

  const deliveries = async (id: string, headers?: Record<string, string>) =>
    gw.get(`/v1/messages/${id}/webhooks`, headers);

  it('shows a delivery the receiver answered 500 and then 200: each attempt, its status code and latency', async () => {
    receiver.status = 500;
    const sent = await gw.post(
      '/v1/messages',
      text('webhook me twice', 'zhangsan', { callback_url: `${receiver.url('/status')}?token=s3cret#frag` }),
    );
    expect(sent.status).toBe(202);
    const id = sent.body.id as string;

    let body: JsonBody;
    await waitFor(
      async () => {
        body = (await deliveries(id)).body;
        return body.deliveries[0]?.status === 'retrying';
      },
      30_000,
      () => JSON.stringify(body),
    );
    const retrying = body.deliveries[0];
    receiver.status = 200;
    await waitFor(
      async () => {
        body = (await deliveries(id)).body;
        return body.deliveries[0]?.status === 'delivered';
      },
      30_000,
      () => JSON.stringify(body),
    );

    expect(retrying).toMatchObject({ next_attempt_at: expect.any(String) });
    expect(Date.parse(retrying.next_attempt_at)).toBeGreaterThan(Date.parse(retrying.attempts[0].at));
    expect(schemaErrors(openApiValidators()('WebhookDeliveries'), body)).toEqual([]);
    expect(
      schemaErrors(openApiValidators()('WebhookDeliveries'), { deliveries: [retrying], truncated: false }),
    ).toEqual([]);
    expect(body.truncated).toBe(false);
    expect(body.deliveries).toHaveLength(1);
    const [delivery] = body.deliveries;
    expect(delivery).toEqual({
      id: expect.any(String),
      event: 'message.sent',
      // As lib/notify records it: no query string, no fragment.
      target: receiver.url('/status'),
      status: 'delivered',
      attempts: [
        {
          at: expect.any(String),
          attempt: 1,
          outcome: 'retry',
          status_code: 500,
          latency_ms: expect.any(Number),
          error: 'HTTP 500',
        },
        {
          at: expect.any(String),
          attempt: 2,
          outcome: 'delivered',
          status_code: 200,
          latency_ms: expect.any(Number),
        },
      ],
    });
    // The id the receiver saw in its webhook-id header, on both attempts.
    const seen = receiver.received.filter((r) => r.json.data?.id === id).map((r) => r.headers['webhook-id']);
    expect(seen).toEqual([delivery.id, delivery.id]);

    const env = { WECOM_GATEWAY_URL: gw.stack.apiUrl, WECOM_GATEWAY_KEY: gw.key, NO_COLOR: '1' };
    const printed = await runInProcess(['messages', 'webhooks', id], { env });
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toContain(`message.sent  delivered  ${receiver.url('/status')}`);
    expect(printed.stdout).toMatch(/ {2}1\. .* HTTP 500 · \d+ ms\n/);
    expect(printed.stdout).toMatch(/ {2}2\. .* HTTP 200 · \d+ ms\n/);
    const json = await runInProcess(['messages', 'webhooks', id, '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual(body);
  }, 90_000);

  it('answers 404 for a message of an app the key may not read, and an empty list before any webhook', async () => {
    const sent = await gw.post('/v1/messages', text('no webhook'));

    expect((await deliveries(sent.body.id, { authorization: `Bearer ${otherKey.key}` })).status).toBe(404);
    expect(await deliveries(sent.body.id)).toMatchObject({
      status: 200,
      body: { deliveries: [], truncated: false },
    });
  });
});

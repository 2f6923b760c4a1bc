import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMessageId } from '#lib/ingest/ids.js';
import { validateMessageRequest } from '#lib/messages/index.js';
import { encodeQueuedMessage, newRecord, toQueuedMessage } from '#lib/model/index.js';
import { FUNCTION_ACCESS } from '#lib/resources/index.js';
import { createDocumentClient, DynamoMessageStore } from '#lib/store/index.js';
import { newDevKey } from '#local/dev-config.js';
import { TEST_CALLBACK, TEST_CORP_ID } from '#local/harness/config.js';
import { startTestGateway, type TestGateway, text, waitFor } from '#test/helpers/gateway.js';
import { cardBody } from '#test/helpers/messages-factories.js';
import { withRobot } from '#test/helpers/robots.js';
import {
  HOOKS_TLS,
  startWebhookReceiver,
  type WebhookReceiver,
  webhookResolver,
} from '#test/helpers/webhook-receiver.js';
import { sealCallback, wecomXml } from '#test/helpers/wecom-callback.js';

/**
 * Least privilege must still let the code work: every DynamoDB operation a function is seen making on the wire
 * (counted per function by the local stack) must be one that FUNCTION_ACCESS — and so the CDK stack — grants it.
 * Likewise every WeCom API a function is seen calling (the simulator logs the caller's user-agent) must be listed
 * there, since that list is what puts a function behind the trusted IP in AWS.
 * The scenario walks the paths that use the less common operations: idempotent replays, recall after WeCom
 * invalidated the token (lock, delete), retries, 45009 pauses, deferrals and first-delivery batch writes, and
 * the callback loop: a card press, its webhooks, a card update, the listings (events, messages), a callback WeCom
 * sends twice, a message's webhook deliveries, and the DLQ over HTTP (a listing that marks a record dead, a redrive).
 */
describe('IAM grants cover what the functions really call', () => {
  let gw: TestGateway;
  let receiver: WebhookReceiver;
  const admin = newDevKey();
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    gw = await startTestGateway({
      webhook: { allowedPorts: [receiver.port] },
      extraApiKeys: [{ name: 'perm-admin', sha256: admin.sha256, apps: ['ops'], scopes: ['admin'] }],
      configure: withRobot,
      runtime: {
        retry: { baseSeconds: 1, capSeconds: 1 },
        rateLimitPauseMs: 1_000,
        deferJitterSeconds: 0,
        webhookResolve: webhookResolver().resolve,
        webhookCa: HOOKS_TLS.cert,
      },
    });
  });
  afterAll(async () => {
    await gw?.stack.stop();
    await receiver?.stop();
  });

  it('observes only granted DynamoDB operations per function', async () => {
    const sim = gw.stack.simulator;
    if (!sim) throw new Error('no simulator');
    const first = await gw.post('/v1/messages', text('granted?', 'perm-1'), {
      'idempotency-key': 'perm-key-1',
    });
    await gw.post('/v1/messages', text('granted?', 'perm-1'), { 'idempotency-key': 'perm-key-1' });
    await gw.waitForStatus(first.body.id, ['sent']);

    sim.invalidateTokens();
    expect((await gw.post(`/v1/messages/${first.body.id}/recall`, {})).status).toBe(200);
    expect((await gw.get('/v1/apps/ops/reach?touser=perm-1')).status).toBe(200);

    sim.faults.script([{ errcode: -1 }, { errcode: 45009 }]);
    const retried = await gw.post('/v1/messages', text('retried then paused', 'perm-2'));
    await gw.waitForStatus(retried.body.id, ['sent'], 30_000);

    const card = await gw.post('/v1/messages', {
      ...(cardBody('button_interaction', { task_id: undefined }) as object),
      touser: 'perm-3',
      callback_url: receiver.url(),
    });
    await gw.waitForStatus(card.body.id, ['sent']);
    const click = await sim.click({ userId: 'perm-3', taskId: card.body.id });
    expect(click.status).toBe(200);
    await waitFor(() => receiver.received.some((r) => r.json.type === 'wecom.event'));
    expect(
      (await gw.post(`/v1/messages/${card.body.id}/card`, { button: { replace_name: 'ok' } })).status,
    ).toBe(200);
    expect((await gw.get(`/v1/messages/${card.body.id}`)).body.webhook_attempts.length).toBeGreaterThan(0);
    expect((await gw.get('/v1/events?app=ops')).status).toBe(200);
    // The message list: its index Queries and the BatchGetItem of the page's current state, by app and recipient.
    expect((await gw.get('/v1/messages?status=sent')).body.messages.length).toBeGreaterThan(0);
    expect((await gw.get('/v1/messages?touser=PERM-1')).body.messages.length).toBeGreaterThan(0);
    const twice = sealCallback(
      { ...TEST_CALLBACK, corpId: TEST_CORP_ID },
      wecomXml({
        FromUserName: 'perm-3',
        CreateTime: Math.floor(Date.now() / 1000),
        MsgType: 'event',
        Event: 'enter_agent',
      }),
      { timestamp: Math.floor(Date.now() / 1000) },
    );
    const callbackUrl = `${gw.stack.apiUrl}/v1/wecom/callback/ops?${new URLSearchParams(twice.query as Record<string, string>)}`;
    for (let i = 0; i < 2; i++) {
      expect((await fetch(callbackUrl, { method: 'POST', body: twice.body })).status).toBe(200);
    }

    expect((await gw.get(`/v1/messages/${card.body.id}/webhooks`)).body.deliveries.length).toBeGreaterThan(0);
    // A group robot's file: its upload, its send, its media id kept in the table; and the robot's state.
    const file = { base64: Buffer.from('granted?\n').toString('base64'), filename: 'perm.txt' };
    const posted = await gw.post('/v1/messages', { robot: 'oncall', msgtype: 'file', file });
    await gw.waitForStatus(posted.body.id, ['sent']);
    expect((await gw.get('/v1/robots/oncall')).status).toBe(200);
    // A message a crashed sender left in the DLQ (written by the test, not by a function), listed and redriven.
    const validated = validateMessageRequest(text('dead, then back', 'perm-4'));
    if (!validated.ok) throw new Error(JSON.stringify(validated.issues));
    const dead = newRecord({
      id: newMessageId(),
      app: 'ops',
      priority: 'normal',
      request: validated.value,
      apiKey: 'test',
      createdAt: new Date().toISOString(),
      expiresAt: Math.floor(Date.now() / 1000) + 86_400,
      duplicateCheckSeconds: 3600,
    });
    await new DynamoMessageStore(createDocumentClient('test'), gw.stack.env.tableName).create(dead);
    await gw.stack.sqs.send(
      new SendMessageCommand({
        QueueUrl: gw.stack.resources.queueUrls['normal-dlq'],
        MessageBody: encodeQueuedMessage(toQueuedMessage(dead)),
      }),
    );
    const asAdmin = { authorization: `Bearer ${admin.key}` };
    expect((await gw.get('/v1/dlq', asAdmin)).body.dead_letters).toEqual([
      expect.objectContaining({ id: dead.id, reconciled: true }),
    ]);
    expect((await gw.post(`/v1/dlq/${dead.id}/redrive`, {}, asAdmin)).body.outcome).toBe('redriven');
    await gw.waitForStatus(dead.id, ['sent']);

    const observed = gw.stack.dynamoRequests.counts();
    for (const fn of ['ingest', 'sender', 'callback', 'notify'] as const) {
      const granted: readonly string[] = [
        ...FUNCTION_ACCESS[fn].table,
        ...(FUNCTION_ACCESS[fn].indexes.length > 0 ? ['Query'] : []),
      ];
      expect({
        fn,
        ungranted: Object.keys(observed[fn] ?? {}).filter((op) => !granted.includes(op)),
      }).toEqual({
        fn,
        ungranted: [],
      });
    }
    // The scenario really reached the operations that are easy to forget.
    expect(observed.ingest).toHaveProperty('DeleteItem');
    expect(observed.ingest).toHaveProperty('BatchGetItem');
    expect(observed.sender).toHaveProperty('BatchWriteItem');
    expect(observed.sender).toHaveProperty('DeleteItem');
    expect(observed.callback).toHaveProperty('Query');
    expect(observed.callback).toHaveProperty('GetItem');
    expect(observed.notify).toHaveProperty('UpdateItem');
  });

  it('observes only declared WeCom calls per function, so each caller gets the trusted IP', () => {
    const sim = gw.stack.simulator;
    if (!sim) throw new Error('no simulator');
    const calls = new Map<string, Set<string>>();
    for (const r of sim.requests()) {
      const caller = r.userAgent ?? '(none)';
      calls.set(caller, (calls.get(caller) ?? new Set()).add(r.path.replace(/^\/cgi-bin\//, '')));
    }
    const declared = Object.fromEntries(
      Object.entries(FUNCTION_ACCESS).map(([fn, access]) => [
        `wecom-gateway/${fn}`,
        access.wecom as readonly string[],
      ]),
    );
    const undeclared = [...calls].flatMap(([caller, paths]) =>
      [...paths].filter((p) => !declared[caller]?.includes(p)).map((p) => `${caller} → ${p}`),
    );
    expect(undeclared).toEqual([]);
    // The scenario above made ingest call WeCom itself: its recall, the card update, the visible range, and the
    // token WeCom had invalidated.
    // And the sender posted a robot's file: its upload, then its send.
    expect([...(calls.get('wecom-gateway/sender') ?? [])]).toEqual(
      expect.arrayContaining(['webhook/send', 'webhook/upload_media']),
    );
    expect([...(calls.get('wecom-gateway/ingest') ?? [])].sort()).toEqual([
      'agent/get',
      'gettoken',
      'message/recall',
      'message/update_template_card',
    ]);
  });
});

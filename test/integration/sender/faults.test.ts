import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeQueuedMessage, toQueuedMessage } from '#lib/model/index.js';
import { createDocumentClient, DynamoMessageStore } from '#lib/store/index.js';
import { queueDepth, senderContainer } from '#local/harness/sender.js';
import { startTestGateway, type TestGateway, text, waitFor } from '#test/helpers/gateway.js';

/**
 * Retries after 1 s instead of WeCom-friendly minutes; a 45009 pause of 1.5 s instead of 60 s; configuration errors
 * probed every 2 s instead of after 1, 2, 5… minutes (long enough for a check of the open circuit on a loaded machine).
 */
const runtime = {
  retry: { baseSeconds: 1, capSeconds: 1 },
  rateLimitPauseMs: 1_500,
  configProbeMs: [2_000],
  deferJitterSeconds: 0,
  wecom: { headersTimeoutMs: 1_000, bodyTimeoutMs: 1_000 },
};
const delivery = (o: { budgetSeconds?: number; configErrorHoldSeconds?: number }) => ({
  budgetSeconds: 86_400,
  configErrorHoldSeconds: 3_600,
  duplicateCheckSeconds: 3_600,
  ...o,
});

describe('sender faults on the local stack', () => {
  let gw: TestGateway;
  const logs: string[] = [];
  const sim = () => {
    if (!gw.stack.simulator) throw new Error('no simulator');
    return gw.stack.simulator;
  };
  beforeAll(async () => {
    // One app per scenario that leaves an app paused or held, so the others are not affected.
    gw = await startTestGateway({
      runtime,
      logWrite: (line) => logs.push(line),
      apps: ['ops', 'circuit', 'held', 'budget'],
      delivery: {
        held: delivery({ configErrorHoldSeconds: 3 }),
        budget: delivery({ budgetSeconds: 12 }),
      },
    });
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });
  beforeEach(() => sim().faults.clear());

  it('retries -1 and HTTP 5xx, then delivers once', async () => {
    sim().faults.script([{ errcode: -1 }, 'http500', 'ok']);
    const { body } = await gw.post('/v1/messages', text('flaky WeCom', 'retry-user'));

    const status = await gw.waitForStatus(body.id, ['sent']);

    expect(sim().inbox('retry-user')).toHaveLength(1);
    expect(status.attempts).toBe(3);
    expect(status.events.filter((e: { type: string }) => e.type === 'retry')).toHaveLength(2);
  });

  it('pauses the app after 45009 and defers its messages without calling WeCom until the pause ends', async () => {
    sim().faults.script([{ errcode: 45009 }]);
    const first = await gw.post('/v1/messages', text('hits the limit', 'paused-1'));
    await gw.waitForStatus(first.body.id, ['deferred']);
    const callsAtPause = sim().stats().sendCalls;

    const second = await gw.post('/v1/messages', text('during the pause', 'paused-2'));
    const deferred = await gw.waitForStatus(second.body.id, ['deferred', 'sent']);

    expect(deferred.status).toBe('deferred');
    expect(sim().stats().sendCalls).toBe(callsAtPause);
    await gw.waitForStatus(first.body.id, ['sent']);
    await gw.waitForStatus(second.body.id, ['sent']);
    expect(sim().inbox('paused-1')).toHaveLength(1);
    expect(sim().inbox('paused-2')).toHaveLength(1);
  });

  it('fails a permanently rejected message with the WeCom errcode and never retries it', async () => {
    sim().faults.script([{ errcode: 40003 }]);
    const before = sim().stats().sendCalls;
    const { body } = await gw.post('/v1/messages', text('rejected', 'bad-user'));

    const status = await gw.waitForStatus(body.id, ['failed']);
    await new Promise((r) => setTimeout(r, 2_500)); // longer than a retry would take

    expect(status.error).toMatchObject({ code: 'wecom_rejected', wecom_errcode: 40003 });
    expect(sim().stats().sendCalls).toBe(before + 1);
    expect((await gw.get(`/v1/messages/${body.id}`)).body.status).toBe('failed');
  });

  it('holds a message after 60020 with the operator hint, counted as a ConfigError of the app, shows the open circuit, and sends it once fixed', async () => {
    sim().faults.script([{ errcode: 60020 }]);
    const { body } = await gw.post('/v1/messages', text('untrusted IP', 'ip-user', { app: 'circuit' }));

    const held = await gw.waitForStatus(body.id, ['deferred', 'sent', 'failed']);
    const app = await gw.get('/v1/apps/circuit');
    // The script is used up: the operator has added the IP. The next probe goes through.
    const sent = await gw.waitForStatus(body.id, ['sent', 'failed']);

    expect(held.status).toBe('deferred');
    expect(held.events.at(-1).detail).toMatch(/configuration error 60020.*trusted IP list \(企业可信IP\)/);
    expect(app.status).toBe(200);
    expect(app.body).toMatchObject({
      state: 'circuit_open',
      pause: { kind: 'config_error', errcode: 60020 },
    });
    expect(app.body.pause.hint).toMatch(/trusted IP list/);
    expect(sent.status).toBe('sent');
    expect(sim().inbox('ip-user')).toHaveLength(1);
    expect((await gw.get('/v1/apps/circuit')).body.state).toBe('active');
    // The EMF series the config-error alarm watches, and its per-app twin (flushed after the invocation).
    const emf = () => logs.filter((l) => l.includes('CloudWatchMetrics')).map((l) => JSON.parse(l));
    await waitFor(() => emf().some((m) => m.ConfigError === 1 && m.app === 'circuit'));
    const total = emf().find((m) => m.ConfigError === 1 && m.app === undefined);
    expect(total?._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: 'WecomGateway/local',
      Dimensions: [[]],
    });
    // The sender's log line names the invocation (Lambda request id, cold start) and the message.
    const paused = logs
      .map((l) => JSON.parse(l))
      .find((l) => l.message === 'WeCom configuration error: app paused' && l.messageId === body.id);
    expect(paused).toMatchObject({ errcode: 60020, coldStart: expect.any(Boolean) });
    expect(paused.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('fails waiting messages with the errcode and hint once the app was held for configErrorHoldSeconds', async () => {
    sim().faults.setRate({ errcode: 48002 }, 1);
    const { body } = await gw.post('/v1/messages', text('forbidden', 'held-user', { app: 'held' }));

    const status = await gw.waitForStatus(body.id, ['failed'], 20_000);

    expect(status.error).toMatchObject({ code: 'wecom_config_error', wecom_errcode: 48002 });
    expect(status.error.message).toMatch(/permissions/);
    expect(status.events.some((e: { type: string }) => e.type === 'deferred')).toBe(true);
  });

  it('marks a message that always fails dead once its delivery budget is used up, not after 6 receives', {
    timeout: 60_000,
  }, async () => {
    sim().faults.setRate({ errcode: -1 }, 1);
    const { body } = await gw.post(
      '/v1/messages',
      text('never goes through', 'dead-user', { app: 'budget' }),
    );

    const status = await gw.waitForStatus(body.id, ['dead'], 30_000);

    expect(status.error.code).toBe('budget_exhausted');
    // With 1 s retries a 12 s budget takes more attempts than SQS’s 6 receives, even on a loaded machine (an 8 s one
    // got only 5 there): the DLQ never saw it.
    expect(status.attempts).toBeGreaterThan(6);
    expect(await queueDepth(gw.stack, 'normal-dlq')).toBe(0);
    expect(sim().inbox('dead-user')).toHaveLength(0);
  });

  it('resends the same request after a timeout that reached WeCom, so the member sees it once', async () => {
    sim().faults.script(['timeoutAfterDelivery']);
    const suppressedBefore = sim().stats().duplicatesSuppressed;
    const { body } = await gw.post('/v1/messages', text('answer lost on the way back', 'timeout-user'));

    const status = await gw.waitForStatus(body.id, ['sent']);

    expect(sim().inbox('timeout-user')).toHaveLength(1);
    expect(sim().stats().duplicatesSuppressed - suppressedBefore).toBe(1);
    expect(status.wecom.msgid).toBe(sim().inbox('timeout-user')[0]?.msgid);
  });

  it('acknowledges a redelivered copy of a sent message without calling WeCom again', async () => {
    const { body } = await gw.post('/v1/messages', text('delivered once', 'redelivery-user'));
    await gw.waitForStatus(body.id, ['sent']);
    const db = createDocumentClient('test');
    const record = await new DynamoMessageStore(db, gw.stack.env.tableName).get(body.id);
    if (!record) throw new Error('no record');
    const before = sim().stats().sendCalls;
    // SQS at-least-once: the same message handed out again (its delete was lost), receive count 2.
    const redelivery: SQSEvent = {
      Records: [
        {
          messageId: randomUUID(),
          receiptHandle: 'stale-handle',
          body: encodeQueuedMessage(toQueuedMessage(record)),
          attributes: {
            ApproximateReceiveCount: '2',
            SentTimestamp: String(Date.now()),
            SenderId: 'local',
            ApproximateFirstReceiveTimestamp: String(Date.now()),
          },
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: gw.stack.resources.queueArns.normal,
          awsRegion: 'us-east-1',
        },
      ],
    };
    const container = await senderContainer(gw.stack, runtime);

    const result = await container.invoke(redelivery);

    expect(result.batchItemFailures).toEqual([]);
    expect(sim().stats().sendCalls).toBe(before);
    expect(sim().inbox('redelivery-user')).toHaveLength(1);
    await container.close();
    db.destroy();
  });
});

import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toQueuedMessage } from '#lib/model/index.js';
import { createDocumentClient, DynamoMessageStore } from '#lib/store/index.js';
import { queueDepth, senderContainer } from '#local/harness/sender.js';
import { startTestGateway, type TestGateway, text, waitFor } from '#test/helpers/gateway.js';

/** Retries after 1 s instead of WeCom-friendly minutes; a 45009 pause of 1.5 s instead of 60 s. */
const runtime = {
  retry: { baseSeconds: 1, capSeconds: 1 },
  rateLimitPauseMs: 1_500,
  deferJitterSeconds: 0,
  wecom: { headersTimeoutMs: 1_000, bodyTimeoutMs: 1_000 },
};

describe('sender faults on the local stack', () => {
  let gw: TestGateway;
  const logs: string[] = [];
  const sim = () => {
    if (!gw.stack.simulator) throw new Error('no simulator');
    return gw.stack.simulator;
  };
  beforeAll(async () => {
    gw = await startTestGateway({ runtime, logWrite: (line) => logs.push(line) });
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

  it('fails 60020 with an operator hint about the trusted IP list, counted as a ConfigError of the app', async () => {
    sim().faults.script([{ errcode: 60020 }]);
    const { body } = await gw.post('/v1/messages', text('untrusted IP', 'ip-user'));

    const status = await gw.waitForStatus(body.id, ['failed']);

    expect(status.error.code).toBe('wecom_config_error');
    expect(status.error.wecom_errcode).toBe(60020);
    expect(status.error.message).toMatch(/trusted IP list \(企业可信IP\)/);
    // The EMF series the config-error alarm watches, and its per-app twin (flushed after the invocation).
    const emf = () => logs.filter((l) => l.includes('CloudWatchMetrics')).map((l) => JSON.parse(l));
    await waitFor(() => emf().some((m) => m.ConfigError === 1 && m.app === 'ops'));
    const total = emf().find((m) => m.ConfigError === 1 && m.app === undefined);
    expect(total?._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: 'WecomGateway/local',
      Dimensions: [[]],
    });
    // The sender's log line names the invocation (Lambda request id, cold start) and the message.
    const rejected = logs
      .map((l) => JSON.parse(l))
      .find((l) => l.message === 'WeCom rejected the message permanently' && l.messageId === body.id);
    expect(rejected).toMatchObject({ errcode: 60020, coldStart: expect.any(Boolean) });
    expect(rejected.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('moves a message that always fails to the DLQ and marks it dead', { timeout: 60_000 }, async () => {
    sim().faults.setRate({ errcode: -1 }, 1);
    const { body } = await gw.post('/v1/messages', text('never goes through', 'dead-user'));

    const status = await gw.waitForStatus(body.id, ['dead'], 45_000);
    await waitFor(async () => (await queueDepth(gw.stack, 'normal-dlq')) === 1, 15_000);

    expect(status.error.code).toBe('retries_exhausted');
    expect(status.attempts).toBe(6);
    expect(sim().inbox('dead-user')).toHaveLength(0);
  });

  it('resends with WeCom duplicate check after a timeout that reached WeCom, so the member sees it once', async () => {
    sim().faults.script(['timeoutAfterDelivery']);
    const { body } = await gw.post('/v1/messages', text('answer lost on the way back', 'timeout-user'));

    const status = await gw.waitForStatus(body.id, ['sent']);

    expect(sim().inbox('timeout-user')).toHaveLength(1);
    expect(sim().stats().duplicatesSuppressed).toBe(1);
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
          body: JSON.stringify(toQueuedMessage(record)),
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

import type { Message } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createSenderHandler, wrapSenderHandler } from '#functions/sender/app.js';
import { Metrics } from '#lib/observability/index.js';
import { WecomApiError } from '#lib/wecom/index.js';
import { buildLambdaContext, buildSqsEvent } from '#local/events/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { queued, senderHarness, textRequest } from '#test/helpers/unit-sender.js';

const START = Date.parse('2026-12-01T08:00:07Z');
const REGION = 'us-east-1';
const queueUrls = {
  high: 'http://127.0.0.1:9324/000000000000/wecom-gateway-high',
  normal: 'http://127.0.0.1:9324/000000000000/wecom-gateway-normal',
};
const arnOf = (url: string) => `arn:aws:sqs:${REGION}:000000000000:${url.split('/').pop()}`;
const context: Context = buildLambdaContext({ functionName: 'sender', memoryMb: 512, timeoutSeconds: 30 });

/** An SQS event as the event source mapping builds it, from messages received from one lane. */
function sqsEvent(lane: 'high' | 'normal', messages: { id: string; body: string; receiveCount?: string }[]) {
  const received: Message[] = messages.map((m) => ({
    MessageId: m.id,
    ReceiptHandle: `rh-${m.id}`,
    Body: m.body,
    Attributes: {
      ApproximateReceiveCount: m.receiveCount ?? '1',
      SentTimestamp: String(START),
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: String(START),
    },
  }));
  return buildSqsEvent(received, arnOf(queueUrls[lane]), REGION);
}

function harness() {
  const clock = fakeClock(START);
  const h = senderHarness(clock.now);
  return { ...h, deps: { ...h.deps, env: { queueUrls } } };
}

describe('sender handler', () => {
  it('reports exactly the records left for a retry as batchItemFailures, on the lane they came from', async () => {
    const h = harness();
    const ok = queued('msg_ok', START);
    const busy = queued('msg_busy', START, textRequest({ touser: ['lisi'] }));
    await h.store.create(ok.record);
    await h.store.create(busy.record);
    // WeCom is busy for lisi's message only.
    h.deps.wecom = {
      send: async (token, body) =>
        body.touser === 'lisi'
          ? Promise.reject(new WecomApiError(-1, 'system busy', 'message/send'))
          : h.wecom.send(token, body),
    };

    const out = await createSenderHandler(h.deps)(
      sqsEvent('high', [
        { id: 'sqs-ok', body: JSON.stringify(ok.body()) },
        { id: 'sqs-busy', body: JSON.stringify(busy.body()) },
      ]),
    );

    expect(out).toEqual({ batchItemFailures: [{ itemIdentifier: 'sqs-busy' }] });
    expect(h.lanes.retryLanes).toEqual(['high']);
    expect(h.lanes.visibility.map((v) => v.receiptHandle)).toEqual(['rh-sqs-busy']);
  });

  it('finds the normal lane from its ARN too', async () => {
    const h = harness();
    const m = queued('msg_normal', START);
    await h.store.create(m.record);
    h.wecom.script = [async () => Promise.reject(new WecomApiError(-1, 'system busy', 'message/send'))];

    await createSenderHandler(h.deps)(sqsEvent('normal', [{ id: 'sqs-n', body: JSON.stringify(m.body()) }]));

    expect(h.lanes.retryLanes).toEqual(['normal']);
  });

  it('treats a record received before as a redelivery: it reads the record and sends nothing already sent', async () => {
    const h = harness();
    const m = queued('msg_again', START);
    await h.store.create({ ...m.record, status: 'sent' });

    const out = await createSenderHandler(h.deps)(
      sqsEvent('normal', [{ id: 'sqs-again', body: JSON.stringify(m.body()), receiveCount: '2' }]),
    );

    expect(out.batchItemFailures).toEqual([]);
    expect(h.wecom.sends).toEqual([]);
  });

  it('acknowledges a body it cannot read instead of retrying it into the DLQ', async () => {
    const h = harness();

    const out = await createSenderHandler(h.deps)(sqsEvent('normal', [{ id: 'sqs-junk', body: '{"v":9}' }]));

    expect(out.batchItemFailures).toEqual([]);
    expect(h.wecom.calls).toEqual([]);
  });

  it('writes the invocation metrics once through its middleware', async () => {
    const h = harness();
    const lines: string[] = [];
    const deps = { ...h.deps, metrics: new Metrics('sender', (line) => lines.push(line)) };
    const m = queued('msg_metrics', START);
    await h.store.create(m.record);

    await wrapSenderHandler(deps)(
      sqsEvent('normal', [{ id: 'sqs-m', body: JSON.stringify(m.body()) }]),
      context,
    );

    // One flush: the stage's series, then the app's (one EMF line per dimension set).
    const [total, byApp, ...rest] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(total).toMatchObject({ Sent: 1 });
    expect(total).not.toHaveProperty('app');
    expect(byApp).toMatchObject({ app: m.record.app, Sent: 1 });
    expect(rest).toEqual([]);
  });
});

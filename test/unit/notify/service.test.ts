import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '#lib/config/index.js';
import {
  encodeNotifyJob,
  eventNotice,
  type MessageRecord,
  type NotifyJob,
  statusNotice,
  type WebhookStatus,
} from '#lib/model/index.js';
import { type NotifyDeps, processNotifyBatch } from '#lib/notify/index.js';
import { createLogger, Metrics } from '#lib/observability/index.js';
import type { NotifyQueue } from '#lib/queue/index.js';
import type { WebhookAttempt, WebhookLog } from '#lib/store/index.js';
import type { DeliveryResult, WebhookRequest } from '#lib/webhooks/index.js';
import { generateWebhookSecret } from '#lib/webhooks/index.js';
import { messageRecord } from '#test/helpers/message-records.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

const SECRET = generateWebhookSecret();
// Now, whole seconds: the standardwebhooks package checks the timestamp against the real clock.
const NOW = Math.floor(Date.now() / 1000) * 1000;
const SENT_AT = new Date(NOW - 1000).toISOString();

function configWith(webhook: Record<string, unknown> | undefined) {
  const input = minimalConfig();
  if (webhook) (input.apps.ops as Record<string, unknown>).webhook = webhook;
  return parseConfig(input);
}

/** NotifyDeps over in-memory doubles; `answer` is what the receiver does with each attempt. */
function harness(opts: {
  record?: Partial<MessageRecord>;
  webhook?: Record<string, unknown>;
  answer?: (req: WebhookRequest) => DeliveryResult;
}) {
  const record = messageRecord({
    status: 'sent',
    sentAt: SENT_AT,
    updatedAt: SENT_AT,
    callbackUrl: 'https://hooks.example.com/wecom',
    metadata: { ticket: 'OPS-1' },
    wecom: { msgid: 'M1', response_code: 'secret-rc' },
    ...opts.record,
  });
  const requests: WebhookRequest[] = [];
  const attempts: WebhookAttempt[] = [];
  const statuses: WebhookStatus[] = [];
  const queue = {
    retries: [] as number[],
    dead: [] as { body: string; reason: string }[],
    enqueued: [] as NotifyJob[],
  };
  const notifyQueue: NotifyQueue = {
    enqueue: async (job) => void queue.enqueued.push(job),
    retryAfter: async (_handle, seconds) => void queue.retries.push(seconds),
    deadLetter: async (body, reason) => void queue.dead.push({ body, reason }),
  };
  const webhooks: WebhookLog = {
    recordAttempt: async (_id, a) => void attempts.push(a),
    setStatus: async (_id, s) => void statuses.push(s),
    listAttempts: async () => attempts,
  };
  const deps: NotifyDeps = {
    config: configWith('webhook' in opts ? opts.webhook : { secrets: [SECRET] }),
    messages: { get: async (id) => (id === record.id ? record : undefined) },
    webhooks,
    queue: notifyQueue,
    client: {
      deliver: async (req) => {
        requests.push(req);
        return opts.answer?.(req) ?? { kind: 'response', status: 200, latencyMs: 7, excerpt: 'ok' };
      },
    },
    logger: createLogger({ service: 'test' }, { write: () => undefined }),
    metrics: new Metrics('test', () => undefined),
    now: () => NOW,
    random: () => 0.5,
  };
  const job = statusNotice(record, 'send') as NotifyJob;
  const sqs = (body = encodeNotifyJob(job), receiveCount = 1, sentAtMs = NOW - 1000) => ({
    sqsMessageId: 'sqs-1',
    receiptHandle: 'rh-1',
    body,
    receiveCount,
    sentAtMs,
  });
  return { deps, record, requests, attempts, statuses, queue, job, sqs };
}

describe('processNotifyBatch', () => {
  it('posts a signed message.sent a receiver verifies, without the card response_code, and acknowledges', async () => {
    const h = harness({});

    const { failures } = await processNotifyBatch(h.deps, [h.sqs()]);

    expect(failures).toEqual([]);
    const [req] = h.requests;
    const payload = new Webhook(SECRET).verify(req?.body ?? '', req?.headers ?? {});
    expect(payload).toMatchObject({
      type: 'message.sent',
      timestamp: SENT_AT,
      data: { id: h.record.id, status: 'sent', metadata: { ticket: 'OPS-1' }, wecom: { msgid: 'M1' } },
    });
    expect(req?.body).not.toContain('secret-rc');
    expect(req?.headers['webhook-timestamp']).toBe(String(NOW / 1000));
    expect(h.attempts).toEqual([
      expect.objectContaining({
        outcome: 'delivered',
        statusCode: 200,
        latencyMs: 7,
        attempt: 1,
        excerpt: 'ok',
      }),
    ]);
    expect(h.statuses).toEqual(['delivered']);
  });

  it('keeps the webhook id across attempts and re-signs each with its own timestamp', async () => {
    const h = harness({ answer: () => ({ kind: 'response', status: 503, latencyMs: 3, excerpt: 'busy' }) });

    await processNotifyBatch(h.deps, [h.sqs(undefined, 1)]);
    h.deps.now = () => NOW + 60_000;
    await processNotifyBatch(h.deps, [h.sqs(undefined, 2)]);

    const [a, b] = h.requests;
    expect(a?.headers['webhook-id']).toBe(b?.headers['webhook-id']);
    expect(a?.headers['webhook-timestamp']).not.toBe(b?.headers['webhook-timestamp']);
    expect(a?.body).toBe(b?.body);
  });

  it('retries a 503 after a full-jitter backoff (visibility), reported as a batch item failure', async () => {
    const h = harness({ answer: () => ({ kind: 'response', status: 503, latencyMs: 3, excerpt: 'busy' }) });

    const { failures } = await processNotifyBatch(h.deps, [h.sqs(undefined, 3)]);

    expect(failures).toEqual(['sqs-1']);
    expect(h.queue.retries).toEqual([60]); // attempt 3: ceiling 30 × 2² = 120 s, jitter 0.5
    expect(h.attempts).toEqual([
      expect.objectContaining({ outcome: 'retry', statusCode: 503, reason: 'HTTP 503', retryInSeconds: 60 }),
    ]);
    expect(h.statuses).toEqual([]);
  });

  it('gives up after 24 h: the job goes to the DLQ with why, the message is marked webhook dead', async () => {
    const h = harness({
      answer: () => ({ kind: 'failed', code: 'ECONNREFUSED', message: 'refused', latencyMs: 1 }),
    });

    const { failures } = await processNotifyBatch(h.deps, [h.sqs(undefined, 33, NOW - 24 * 3600_000)]);

    expect(failures).toEqual([]);
    expect(h.queue.dead).toEqual([
      {
        body: encodeNotifyJob(h.job),
        reason: expect.stringMatching(/^ECONNREFUSED: refused; gave up after 33/),
      },
    ]);
    expect(h.statuses).toEqual(['dead']);
    expect(h.attempts[0]).toMatchObject({ outcome: 'dead' });
  });

  it('stops on 410 Gone and on an SSRF refusal, recording which', async () => {
    const gone = harness({ answer: () => ({ kind: 'response', status: 410, latencyMs: 2, excerpt: '' }) });
    const refused = harness({
      answer: () => ({
        kind: 'refused',
        reason: 'host x resolves to a private address (10.0.0.1)',
        latencyMs: 1,
      }),
    });

    await processNotifyBatch(gone.deps, [gone.sqs()]);
    await processNotifyBatch(refused.deps, [refused.sqs()]);

    expect(gone.statuses).toEqual(['gone']);
    expect(refused.statuses).toEqual(['refused']);
    expect(refused.attempts[0]).toMatchObject({
      outcome: 'refused',
      reason: expect.stringContaining('10.0.0.1'),
    });
  });

  it('never sends unsigned: an app without a secret gets a refused attempt and no request', async () => {
    const h = harness({ webhook: undefined });

    await processNotifyBatch(h.deps, [h.sqs()]);

    expect(h.requests).toEqual([]);
    expect(h.attempts[0]).toMatchObject({
      outcome: 'refused',
      reason: expect.stringContaining('webhook.secrets'),
    });
  });

  it("uses the app's default URL when the message has none, with its extra ports; drops filtered events", async () => {
    const withDefault = harness({
      record: { callbackUrl: undefined },
      webhook: { url: 'https://default.example.com/h', secrets: [SECRET], allowedPorts: [8443] },
    });
    const filtered = harness({ webhook: { secrets: [SECRET], events: ['wecom.event'] } });
    const nowhere = harness({ record: { callbackUrl: undefined } });

    await processNotifyBatch(withDefault.deps, [withDefault.sqs()]);
    const { failures } = await processNotifyBatch(filtered.deps, [filtered.sqs(), nowhere.sqs()]);

    expect(withDefault.requests[0]).toMatchObject({
      url: 'https://default.example.com/h',
      allowedPorts: [8443],
    });
    expect(failures).toEqual([]);
    expect([...filtered.requests, ...nowhere.requests]).toEqual([]);
  });

  it('keeps only the target without its query string in the attempt', async () => {
    const h = harness({ record: { callbackUrl: 'https://hooks.example.com/w?token=abc#x' } });

    await processNotifyBatch(h.deps, [h.sqs()]);

    expect(h.requests[0]?.url).toBe('https://hooks.example.com/w?token=abc#x');
    expect(h.attempts[0]?.target).toBe('https://hooks.example.com/w');
  });

  it('sends a wecom.event for an event job, id from the app and event id', async () => {
    const h = harness({});
    const job = eventNotice({
      messageId: h.record.id,
      app: 'ops',
      eventId: 'evt:abc',
      receivedAt: '2026-12-01T07:59:58.000Z',
      event: {
        kind: 'template_card_event',
        corpId: 'ww',
        from: 'alice',
        createTime: 1_790_000_000,
        eventKey: 'approve',
        taskId: h.record.id,
        cardType: 'button_interaction',
        responseCode: 'click-rc',
        selectedItems: [],
      },
    });

    await processNotifyBatch(h.deps, [h.sqs(encodeNotifyJob(job))]);

    const payload = new Webhook(SECRET).verify(h.requests[0]?.body ?? '', h.requests[0]?.headers ?? {});
    expect(payload).toMatchObject({
      type: 'wecom.event',
      data: { message_id: h.record.id, event: { event_key: 'approve' } },
    });
    expect(h.requests[0]?.body).not.toContain('click-rc');
  });

  it('drops a job of unknown shape or for a message that no longer exists, without sending', async () => {
    const h = harness({});

    const { failures } = await processNotifyBatch(h.deps, [
      h.sqs('{"v":9}'),
      h.sqs(encodeNotifyJob({ ...h.job, messageId: 'msg_gone' })),
    ]);

    expect(failures).toEqual([]);
    expect(h.requests).toEqual([]);
  });
});

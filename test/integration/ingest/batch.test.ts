import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IngestGateway, startIngestGateway, storedState } from '#test/helpers/ingest-gateway.js';
import { ascii, messageBody } from '#test/helpers/messages-factories.js';

const SENT = ['sent'];

describe('POST /v1/messages/batch', () => {
  let gw: IngestGateway;
  beforeAll(async () => {
    gw = await startIngestGateway();
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  const waitForStatus = async (id: string, statuses: string[]) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const res = await gw.get(`/v1/messages/${id}`);
      if (statuses.includes(res.body?.status)) return res.body;
      if (Date.now() > deadline)
        throw new Error(`${id} never reached ${statuses}: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('answers 207 with per-item results and delivers the valid items despite invalid ones', async () => {
    const res = await gw.post('/v1/messages/batch', {
      messages: [
        messageBody('text', { touser: 'batch-a', text: { content: 'first' } }),
        messageBody('text', { touser: 'batch-b', text: { content: ascii(2049) } }),
        messageBody('text', { app: 'billing', touser: 'batch-c' }),
        messageBody('markdown', { touser: 'batch-d', priority: 'high' }),
        42,
      ],
    });

    expect(res.status).toBe(207);
    expect(res.body.results).toEqual([
      { index: 0, id: expect.stringMatching(/^msg_/), status: 'queued' },
      {
        index: 1,
        error: {
          code: 'invalid_message',
          message: 'the message is invalid',
          details: [
            {
              field: 'text.content',
              message: '2049 bytes, max 2048; send "split": true to have it delivered in parts',
            },
          ],
        },
      },
      {
        index: 2,
        error: {
          code: 'forbidden',
          message: "app 'billing' is not configured for API key ops-key (its apps: ops)",
          details: [],
        },
      },
      { index: 3, id: expect.stringMatching(/^msg_/), status: 'queued' },
      {
        index: 4,
        error: {
          code: 'invalid_message',
          message: 'the message is invalid',
          details: [{ field: '(body)', message: 'must be a JSON object' }],
        },
      },
    ]);
    const [first, , , fourth] = res.body.results;
    const a = await waitForStatus(first.id, SENT);
    const d = await waitForStatus(fourth.id, SENT);
    expect(a.priority).toBe('normal');
    expect(d.priority).toBe('high');
    expect(gw.stack.simulator?.inbox('batch-a')).toHaveLength(1);
    expect(gw.stack.simulator?.inbox('batch-d')).toHaveLength(1);
    expect(gw.stack.simulator?.inbox('batch-b')).toHaveLength(0);
    expect(gw.stack.simulator?.inbox('batch-c')).toHaveLength(0);
  });

  it('accepts 100 items across both lanes (SendMessageBatch in chunks of 10) and delivers each once', async () => {
    const messages = Array.from({ length: 100 }, (_, i) =>
      messageBody('text', { touser: `bulk-${i}`, priority: i % 3 === 0 ? 'high' : 'normal' }),
    );

    const res = await gw.post('/v1/messages/batch', { messages });

    expect(res.status).toBe(207);
    const ids = res.body.results.map((r: { id: string }) => r.id);
    expect(new Set(ids).size).toBe(100);
    for (const id of ids) await waitForStatus(id, SENT);
    for (let i = 0; i < 100; i++) expect(gw.stack.simulator?.inbox(`bulk-${i}`)).toHaveLength(1);
  });

  it.each([
    [
      '101 items',
      { messages: Array.from({ length: 101 }, () => messageBody('text')) },
      '101 items, allowed 1-100',
    ],
    ['no items', { messages: [] }, '0 items, allowed 1-100'],
    ['no messages array', { message: [] }, 'required array'],
  ])('answers 400 for %s and stores nothing', async (_name, body, message) => {
    const before = await storedState(gw.stack);
    const res = await gw.post('/v1/messages/batch', body);
    expect(res.status).toBe(400);
    expect(res.body.error.details).toContainEqual({ field: 'messages', message });
    expect(await storedState(gw.stack)).toEqual(before);
  });

  it('answers 400 to an Idempotency-Key on a batch instead of ignoring it', async () => {
    const res = await gw.post(
      '/v1/messages/batch',
      { messages: [messageBody('text')] },
      {
        headers: { 'idempotency-key': 'batch-1' },
      },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('idempotency_not_supported');
  });
});

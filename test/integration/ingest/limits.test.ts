import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type IngestGateway,
  rawRequest,
  startIngestGateway,
  storedState,
} from '#test/helpers/ingest-gateway.js';
import { messageBody } from '#test/helpers/messages-factories.js';

describe('ingest API: body limits, content type, health and the error shape', () => {
  let gw: IngestGateway;
  beforeAll(async () => {
    gw = await startIngestGateway({ startSender: false });
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  it('answers 413 for a body over 1 MB and stores nothing', async () => {
    const before = await storedState(gw.stack);
    const body = JSON.stringify(messageBody('text', { metadata: { pad: 'x'.repeat(1024 * 1024) } }));

    const res = await gw.post('/v1/messages', body);

    expect(res.status).toBe(413);
    expect(res.body.error).toEqual({
      code: 'payload_too_large',
      message: 'request body exceeds 1048576 bytes',
      details: [],
    });
    expect(await storedState(gw.stack)).toEqual(before);
  });

  /** An mpnews WeCom accepts (content ≤ 666 KB); whether the gateway can store and queue it depends on its size. */
  const mpnews = (contentBytes: number, tag = '') =>
    messageBody('mpnews', {
      mpnews: {
        articles: [{ title: `big ${tag}`, thumb_media_id: 'MEDIA', content: 'x'.repeat(contentBytes) }],
      },
    });

  it('answers 413 naming the field for a valid message too large to store and queue, and stores nothing', async () => {
    const before = await storedState(gw.stack);

    const res = await gw.post('/v1/messages', JSON.stringify(mpnews(300_000)));

    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
    expect(res.body.error.details).toEqual([
      { field: 'mpnews.articles[0].content', message: expect.stringContaining('300000 bytes') },
    ]);
    expect(await storedState(gw.stack)).toEqual(before);
  });

  it('stores and queues large messages that fit, four of them in one batch (chunked by size for SQS)', async () => {
    const single = await gw.post('/v1/messages', JSON.stringify(mpnews(200_000, 'single')));
    const batch = await gw.post(
      '/v1/messages/batch',
      JSON.stringify({ messages: [1, 2, 3, 4].map((i) => mpnews(200_000, `batch ${i}`)) }),
    );

    expect(single.status).toBe(202);
    expect(batch.status).toBe(207);
    expect(batch.body.results.map((r: { status?: string }) => r.status)).toEqual([
      'queued',
      'queued',
      'queued',
      'queued',
    ]);
  });

  it.each([
    ['text/plain', 'hello'],
    ['application/x-www-form-urlencoded', 'app=ops'],
    ['application/xml', '<xml/>'],
  ])('answers 415 for Content-Type %s', async (contentType, body) => {
    const res = await gw.post('/v1/messages', body, { headers: { 'content-type': contentType } });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
  });

  it('answers 415 when the Content-Type is missing', async () => {
    const res = await rawRequest(
      gw.stack.apiUrl,
      'POST',
      '/v1/messages',
      { authorization: `Bearer ${gw.keys.ops}` },
      '{}',
    );
    expect(res.status).toBe(415);
  });

  it('accepts application/json with a charset', async () => {
    const res = await gw.post('/v1/messages', JSON.stringify(messageBody('text')), {
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(202);
  });

  it.each([
    ['malformed JSON', '{"app":'],
    ['an empty body', ''],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
  ])('answers 400 invalid_json for %s', async (_name, body) => {
    const res = await gw.post('/v1/messages', body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_json');
  });

  it.each([
    ['a JSON array', []],
    ['a JSON string', 'x'],
    ['null', null],
  ])('answers 400 for %s as the body', async (_name, body) => {
    const res = await gw.post('/v1/messages', JSON.stringify(body));
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: '(body)', message: 'must be a JSON object' }]);
  });

  it('answers GET /v1/health without a key', async () => {
    const res = await gw.get('/v1/health', { key: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('answers 404 in the gateway error shape for an unknown route', async () => {
    const res = await gw.get('/v2/nothing');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('answers 404 in the gateway error shape for a known path with a method it does not route, without a key', async () => {
    const res = await gw.call('DELETE', '/v1/messages', { key: null });
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({
      code: 'not_found',
      message: 'no route DELETE /v1/messages',
      details: [],
    });
  });

  it('always sends code, message and a details array', async () => {
    const res = await gw.post('/v1/messages', { app: 'ops' });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.error).sort()).toEqual(['code', 'details', 'message']);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });
});

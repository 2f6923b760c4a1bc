import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IngestGateway, startIngestGateway, storedState } from '#test/helpers/ingest-gateway.js';
import { messageBody } from '#test/helpers/messages-factories.js';

describe('ingest API auth: Bearer keys scoped to apps', () => {
  let gw: IngestGateway;
  let opsMessageId: string;
  beforeAll(async () => {
    gw = await startIngestGateway({ startSender: false });
    opsMessageId = (await gw.post('/v1/messages', messageBody('text'))).body.id;
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  it('answers 401 with a Bearer challenge and the error shape when the key is missing', async () => {
    const before = await storedState(gw.stack);
    const res = await gw.post('/v1/messages', messageBody('text'), { key: null });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.body).toEqual({
      error: { code: 'unauthorized', message: expect.stringContaining('API key'), details: [] },
    });
    expect(await storedState(gw.stack)).toEqual(before);
  });

  it.each([
    ['an unknown key', { authorization: 'Bearer wgw_dev_not-a-real-key-000000' }],
    ['another scheme', { authorization: `Basic ${Buffer.from('ops:secret').toString('base64')}` }],
    ['a bare key without Bearer', { authorization: 'wgw_dev_not-a-real-key-000000' }],
    ['an empty Bearer', { authorization: 'Bearer ' }],
  ])('answers 401 for %s', async (_name, headers) => {
    const res = await gw.call('POST', '/v1/messages', { key: null, headers, body: messageBody('text') });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });

  it('checks the key before the body: no key and a non-JSON body is 401, not 415', async () => {
    const res = await gw.call('POST', '/v1/messages', {
      key: null,
      body: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(401);
  });

  it('accepts the Bearer scheme in any case', async () => {
    const res = await gw.call('POST', '/v1/messages', {
      key: null,
      headers: { authorization: `bearer ${gw.keys.ops}` },
      body: messageBody('text'),
    });
    expect(res.status).toBe(202);
  });

  it('answers 403 when a valid key sends for an app it does not list, and stores nothing', async () => {
    const before = await storedState(gw.stack);
    const res = await gw.post('/v1/messages', messageBody('text', { app: 'ops' }), { key: gw.keys.billing });
    expect(res.status).toBe(403);
    expect(res.body.error).toEqual({
      code: 'forbidden',
      message: "app 'ops' is not configured for API key billing-key (its apps: billing)",
      details: [],
    });
    expect(await storedState(gw.stack)).toEqual(before);
  });

  it('gives the same 403 for an app that does not exist (app names cannot be probed)', async () => {
    const res = await gw.post('/v1/messages', messageBody('text', { app: 'nope' }), { key: gw.keys.billing });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe(
      "app 'nope' is not configured for API key billing-key (its apps: billing)",
    );
  });

  it('lets a key send for its own app', async () => {
    const res = await gw.post('/v1/messages', messageBody('text', { app: 'billing' }), {
      key: gw.keys.billing,
    });
    expect(res.status).toBe(202);
  });

  it('answers 403 when the key lacks the messages:write scope', async () => {
    const res = await gw.post('/v1/messages', messageBody('text'), { key: gw.keys.reader });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('messages:write');
  });

  it('lets a key read messages of its apps', async () => {
    expect((await gw.get(`/v1/messages/${opsMessageId}`)).status).toBe(200);
    expect((await gw.get(`/v1/messages/${opsMessageId}`, { key: gw.keys.reader })).status).toBe(200);
  });

  it("answers 404, not 403, when a key reads another app's message id", async () => {
    const res = await gw.get(`/v1/messages/${opsMessageId}`, { key: gw.keys.billing });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it("answers 404 when a key recalls another app's message", async () => {
    const res = await gw.call('POST', `/v1/messages/${opsMessageId}/recall`, { key: gw.keys.billing });
    expect(res.status).toBe(404);
  });

  it('answers 404 for unknown and malformed ids', async () => {
    expect((await gw.get('/v1/messages/msg_01ARZ3NDEKTSV4RRFFQ69G5FAV')).status).toBe(404);
    expect((await gw.get('/v1/messages/not-an-id')).status).toBe(404);
  });

  it('answers 401 on GET without a key', async () => {
    expect((await gw.get(`/v1/messages/${opsMessageId}`, { key: null })).status).toBe(401);
  });
});

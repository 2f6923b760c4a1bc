import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IngestGateway, startIngestGateway } from '#test/helpers/ingest-gateway.js';
import { openApiValidators, readOpenApi, schemaErrors } from '#test/helpers/openapi.js';

/** Real answers of the running gateway against the schemas of the document it serves. */
describe('GET /v1/openapi.json and the answers it describes', () => {
  let gw: IngestGateway;
  const schema = openApiValidators();
  const conforms = (name: string, body: unknown) => expect(schemaErrors(schema(name), body)).toEqual([]);
  beforeAll(async () => {
    gw = await startIngestGateway();
  });
  afterAll(() => gw?.stack.stop());

  it('serves the committed document without a key', async () => {
    const res = await gw.get('/v1/openapi.json', { key: null });

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(readOpenApi());
  });

  it('describes the 202, the status view and the recall answer of a message that went through', async () => {
    const accepted = await gw.post('/v1/messages', {
      app: 'ops',
      touser: ['zhangsan'],
      msgtype: 'text',
      text: { content: 'schema check' },
      metadata: { run: '1' },
    });
    conforms('Accepted', accepted.body);

    let status = (await gw.get(`/v1/messages/${accepted.body.id}`)).body;
    for (let i = 0; i < 200 && status.status !== 'sent'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = (await gw.get(`/v1/messages/${accepted.body.id}`)).body;
    }
    expect(status.status).toBe('sent');
    conforms('MessageStatus', status);

    const recalled = await gw.post(`/v1/messages/${accepted.body.id}/recall`, undefined);
    expect(recalled.status).toBe(200);
    conforms('Recalled', recalled.body);
  });

  it('describes a 207 with both kinds of item result', async () => {
    const res = await gw.post('/v1/messages/batch', {
      messages: [
        { app: 'ops', touser: 'a', msgtype: 'text', text: { content: 'ok' } },
        { app: 'ops', touser: 'a', msgtype: 'text', text: {} },
      ],
    });
    expect(res.status).toBe(207);
    expect(res.body.results.map((r: object) => Object.keys(r).sort())).toEqual([
      ['id', 'index', 'status'],
      ['error', 'index'],
    ]);
    conforms('BatchResults', res.body);
  });

  it.each([
    ['400', () => gw.post('/v1/messages', { app: 'ops', msgtype: 'text' })],
    ['401', () => gw.get('/v1/messages/msg_01JH8X2Q4Z6V3K9M7N5P1R0S2T', { key: 'wgw_not_a_real_key' })],
    ['404', () => gw.get('/v1/messages/msg_01JH8X2Q4Z6V3K9M7N5P1R0S2T')],
    ['415', () => gw.post('/v1/messages', 'x', { headers: { 'content-type': 'text/plain' } })],
  ])('describes the %s error envelope', async (status, call) => {
    const res = await call();
    expect(res.status).toBe(Number(status));
    conforms('Error', res.body);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitMessage } from '#lib/ingest/index.js';
import { createIngestDeps } from '#lib/runtime/index.js';
import { createDocumentClient, DynamoIdempotencyStore } from '#lib/store/index.js';
import { waitFor } from '#test/helpers/gateway.js';
import {
  type IngestGateway,
  queueDepth,
  startIngestGateway,
  storedState,
  tableItemCount,
} from '#test/helpers/ingest-gateway.js';
import { messageBody } from '#test/helpers/messages-factories.js';

const HOUR_MS = 3600_000;
let counter = 0;
const newKey = () => `idem-${process.pid}-${Date.now()}-${++counter}`;

describe('Idempotency-Key (sender off: the queues show exactly what was enqueued)', () => {
  let gw: IngestGateway;
  beforeAll(async () => {
    gw = await startIngestGateway({ startSender: false });
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  it('answers a replay with the same 202 body and stores and enqueues nothing more', async () => {
    const key = newKey();
    const first = await gw.post('/v1/messages', messageBody('text'), { headers: { 'idempotency-key': key } });
    const after = await storedState(gw.stack);

    const replay = await gw.post('/v1/messages', messageBody('text'), {
      headers: { 'idempotency-key': key },
    });

    expect(first.status).toBe(202);
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual(first.body);
    expect(await storedState(gw.stack)).toEqual(after);
  });

  it('treats the same message with keys reordered and recipients as an array as the same body', async () => {
    const key = newKey();
    const first = await gw.post(
      '/v1/messages',
      { app: 'ops', touser: 'a|b', msgtype: 'text', text: { content: 'hi' } },
      {
        headers: { 'idempotency-key': key },
      },
    );
    const replay = await gw.post(
      '/v1/messages',
      { text: { content: 'hi' }, msgtype: 'text', touser: ['a', 'b'], app: 'ops' },
      {
        headers: { 'idempotency-key': key },
      },
    );
    expect(replay.body.id).toBe(first.body.id);
  });

  it('answers 409 when the key comes back with a different body, and stores nothing', async () => {
    const key = newKey();
    await gw.post('/v1/messages', messageBody('text'), { headers: { 'idempotency-key': key } });
    const before = await storedState(gw.stack);

    const res = await gw.post('/v1/messages', messageBody('text', { text: { content: 'changed' } }), {
      headers: { 'idempotency-key': key },
    });

    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('idempotency_conflict');
    expect(await storedState(gw.stack)).toEqual(before);
  });

  it('scopes keys per API key: the same Idempotency-Key from two keys makes two messages', async () => {
    const key = newKey();
    const body = messageBody('text', { app: 'billing' });
    const billing = await gw.post('/v1/messages', body, {
      key: gw.keys.billing,
      headers: { 'idempotency-key': key },
    });
    const ops = await gw.post('/v1/messages', messageBody('text'), { headers: { 'idempotency-key': key } });
    expect(billing.status).toBe(202);
    expect(ops.status).toBe(202);
    expect(ops.body.id).not.toBe(billing.body.id);
  });

  it('stores and enqueues exactly one message when 10 duplicates arrive at once', async () => {
    const key = newKey();
    const messagesBefore = await tableItemCount(gw.stack, 'MSG#');
    const depthBefore = await queueDepth(gw.stack, 'normal');

    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        gw.post('/v1/messages', messageBody('text', { text: { content: 'race' } }), {
          headers: { 'idempotency-key': key },
        }),
      ),
    );

    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(202));
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(1);
    expect(await tableItemCount(gw.stack, 'MSG#')).toBe(messagesBefore + 1);
    expect(await queueDepth(gw.stack, 'normal')).toBe(depthBefore + 1);
  });

  it.each([
    ['129 characters', 'k'.repeat(129)],
    ['a space', 'has space'],
    ['non-ASCII', 'clé'],
  ])('answers 400 for an Idempotency-Key with %s', async (_name, key) => {
    const before = await storedState(gw.stack);
    const res = await gw.post('/v1/messages', messageBody('text'), { headers: { 'idempotency-key': key } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_idempotency_key');
    expect(await storedState(gw.stack)).toEqual(before);
  });

  it('forgets a key after idempotencyHours (24 h): a later request with it is a new message', async () => {
    // The same stores and queues as the API, with the idempotency store's clock moved forward.
    const deps = await createIngestDeps({
      env: gw.stack.env,
      config: gw.stack.config,
      logWrite: () => undefined,
    });
    const [apiKey] = gw.stack.config.apiKeys;
    if (!apiKey) throw new Error('no key');
    const later = (hours: number) => ({
      ...deps,
      idempotency: new DynamoIdempotencyStore(
        createDocumentClient('test'),
        gw.stack.env.tableName,
        () => Date.now() + hours * HOUR_MS,
      ),
    });
    try {
      const key = newKey();
      const first = await gw.post('/v1/messages', messageBody('text'), {
        headers: { 'idempotency-key': key },
      });

      const within = await submitMessage(later(23), apiKey, messageBody('text'), key);
      const expired = await submitMessage(later(25), apiKey, messageBody('text'), key);

      expect(within.id).toBe(first.body.id);
      expect(expired.id).not.toBe(first.body.id);
    } finally {
      await deps.close();
    }
  });
});

describe('Idempotency-Key (sender on: what WeCom delivers)', () => {
  let gw: IngestGateway;
  beforeAll(async () => {
    gw = await startIngestGateway();
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  it('delivers a replayed message once', async () => {
    const key = newKey();
    const body = messageBody('text', { touser: 'replay-user', text: { content: 'only once' } });
    const first = await gw.post('/v1/messages', body, { headers: { 'idempotency-key': key } });
    await waitFor(async () => (await gw.get(`/v1/messages/${first.body.id}`)).body.status === 'sent');

    const replay = await gw.post('/v1/messages', body, { headers: { 'idempotency-key': key } });
    const concurrent = await Promise.all(
      Array.from({ length: 5 }, () => gw.post('/v1/messages', body, { headers: { 'idempotency-key': key } })),
    );

    expect([replay, ...concurrent].map((r) => r.body.id)).toEqual(Array(6).fill(first.body.id));
    // Nothing new was enqueued, so there is nothing left for the sender to deliver.
    expect(await queueDepth(gw.stack, 'normal')).toBe(0);
    expect(gw.stack.simulator?.inbox('replay-user')).toHaveLength(1);
    expect(gw.stack.simulator?.stats().sendCalls).toBe(1);
  });
});

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MSG_TYPES } from '#lib/messages/index.js';
import {
  type IngestGateway,
  rawRequest,
  startIngestGateway,
  storedState,
} from '#test/helpers/ingest-gateway.js';
import { messageBody } from '#test/helpers/messages-factories.js';

/**
 * Property: whatever arrives — random or malformed bodies, headers and paths — the ingest API never answers 5xx,
 * and a rejected request (4xx) leaves both SQS lanes and the table exactly as they were. The sender is off, so
 * nothing else moves the queues; accepted requests (2xx) move the baseline.
 */
describe('ingest API fuzz (fast-check against the local stack)', () => {
  let gw: IngestGateway;
  beforeAll(async () => {
    gw = await startIngestGateway({ startSender: false });
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  const printable = (maxLength: number) => fc.string({ unit: 'grapheme-ascii', maxLength });
  const someId = 'msg_01ARZ3NDEKTSV4RRFFQ69G5FAV';

  const path = fc.oneof(
    fc.constantFrom(
      '/v1/messages',
      '/v1/messages/batch',
      '/v1/health',
      `/v1/messages/${someId}`,
      `/v1/messages/${someId}/recall`,
      '/v1/messages/',
      '/v1/messages/batch/recall',
      '/v1/messages/%ZZ',
      '/v1/messages/%00/recall',
      '/v1/messages/..%2F..%2Fetc',
      '//v1//messages',
      '/v1/messages?priority=high',
      '/V1/MESSAGES',
    ),
    fc
      .array(fc.stringMatching(/^[A-Za-z0-9._~%-]{0,12}$/), { maxLength: 5 })
      .map((parts) => `/${parts.join('/')}`),
    fc.stringMatching(/^[A-Za-z0-9._~%-]{0,20}$/).map((id) => `/v1/messages/${id}`),
  );

  const message = fc.constantFrom(...MSG_TYPES).map((t) => messageBody(t, { touser: 'fuzz' }));
  /** A valid message with one top-level field replaced by an arbitrary JSON value (or removed). */
  const mutated = fc
    .tuple(
      message,
      fc.constantFrom(
        'app',
        'touser',
        'msgtype',
        'priority',
        'metadata',
        'callback_url',
        'text',
        'safe',
        'x',
      ),
      fc.option(fc.jsonValue({ maxDepth: 3 })),
    )
    .map(([body, key, value]) => {
      const copy: Record<string, unknown> = { ...body };
      if (value === null) delete copy[key];
      else copy[key] = value;
      return copy;
    });
  const jsonBody = fc.oneof(
    message,
    mutated,
    fc.jsonValue({ maxDepth: 4 }),
    fc
      .array(fc.oneof(message, mutated, fc.jsonValue({ maxDepth: 2 })), { maxLength: 12 })
      .map((messages) => ({ messages })),
    fc.record({ messages: fc.jsonValue({ maxDepth: 2 }) }),
  );
  const body = fc.oneof(
    { weight: 5, arbitrary: jsonBody.map((v) => JSON.stringify(v)) },
    {
      weight: 1,
      arbitrary: jsonBody.map((v) => JSON.stringify(v)).map((s) => s.slice(0, Math.max(0, s.length - 3))),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1, max: 5000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1, max: 3000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );

  const wild = fc.record({
    method: fc.constantFrom('GET', 'POST', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
    path,
    authorization: fc.oneof(
      fc.constantFrom('ops', 'billing', 'reader', 'none'),
      printable(80),
      printable(40).map((s) => `Bearer ${s}`),
    ),
    contentType: fc.option(
      fc.oneof(
        fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'application/problem+json',
          'text/plain',
          'multipart/form-data',
        ),
        printable(40),
      ),
      { nil: undefined },
    ),
    idempotencyKey: fc.option(fc.oneof(fc.constantFrom('k1', 'k2', 'k3'), printable(140)), {
      nil: undefined,
    }),
    body,
  });
  /** Well-formed requests with near-valid bodies, so accepted writes (and their neighbours) are common too. */
  const plausible = fc.record({
    method: fc.constant('POST'),
    path: fc.constantFrom('/v1/messages', '/v1/messages/batch'),
    authorization: fc.constantFrom('ops', 'ops', 'ops', 'ops', 'billing'),
    contentType: fc.constant('application/json'),
    idempotencyKey: fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom('k1', 'k2', 'k3') },
    ),
    body: fc.oneof(
      { weight: 2, arbitrary: message.map((m) => JSON.stringify(m)) },
      mutated.map((m) => JSON.stringify(m)),
      fc
        .array(fc.oneof(message, mutated), { minLength: 1, maxLength: 12 })
        .map((messages) => JSON.stringify({ messages })),
    ),
  });
  const request = fc.oneof({ weight: 3, arbitrary: wild }, { weight: 2, arbitrary: plausible });

  it('never answers 5xx and changes nothing when it rejects a request', async () => {
    let baseline = await storedState(gw.stack);
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers: Record<string, string> = {};
        const keys: Record<string, string> = gw.keys;
        const key = keys[r.authorization];
        if (key) headers.authorization = `Bearer ${key}`;
        else if (r.authorization !== 'none') headers.authorization = r.authorization;
        if (r.contentType !== undefined) headers['content-type'] = r.contentType;
        if (r.idempotencyKey !== undefined) headers['idempotency-key'] = r.idempotencyKey;

        const res = await rawRequest(gw.stack.apiUrl, r.method, r.path, headers, r.body);
        const after = await storedState(gw.stack);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);

        expect(res.status, res.text).toBeLessThan(500);
        if (res.status >= 400) {
          expect(after, `${res.status} ${res.text}`).toEqual(baseline);
          expect(res.body?.error?.code, res.text).toBeTypeOf('string');
        }
        baseline = after;
      }),
      {
        numRuns: Number(process.env.FUZZ_RUNS ?? 250),
        seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31),
      },
    );
    console.info('fuzz statuses', Object.fromEntries(statuses));
    // The run must have exercised both sides of the property: accepted writes and rejections.
    expect((statuses.get(202) ?? 0) + (statuses.get(207) ?? 0)).toBeGreaterThan(0);
    expect([...statuses.keys()].some((s) => s >= 400)).toBe(true);
  });
});

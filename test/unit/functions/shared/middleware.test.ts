import middy from '@middy/core';
import type { APIGatewayProxyResultV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import {
  bearerAuth,
  flushMetrics,
  type HttpEvent,
  httpErrors,
  jsonBody,
} from '#functions/shared/middleware.js';
import { json } from '#lib/http/index.js';
import { AccessDeniedError, RetryLaterError, UnauthenticatedError } from '#lib/ingest/index.js';
import { createLogger, Metrics } from '#lib/observability/index.js';
import { StoreUnavailableError } from '#lib/store/index.js';
import { buildHttpApiEvent, buildLambdaContext } from '#local/events/index.js';

const context: Context = buildLambdaContext({ functionName: 'mw', memoryMb: 128, timeoutSeconds: 3 });

function event(routeKey: string, body = '', headers: Record<string, string> = {}): HttpEvent {
  const [method = 'GET', path = '/'] = routeKey.split(' ');
  return buildHttpApiEvent({
    method,
    rawPath: path.replace('{id}', 'msg_1'),
    rawQueryString: '',
    headers: { 'content-type': 'application/json', ...headers },
    body: Buffer.from(body),
    sourceIp: '127.0.0.1',
    routeKey,
  });
}

/** A chain like the ingest function's around a handler that echoes what it was given, or throws `fail`. */
function chain(opts: { fail?: unknown; maxBytes?: number } = {}) {
  const logs: { level: string; message: string }[] = [];
  const metricLines: string[] = [];
  const logger = createLogger({}, { write: (line) => logs.push(JSON.parse(line)) });
  const metrics = new Metrics('test', (line) => metricLines.push(line));
  const seen: (HttpEvent & { principal?: string })[] = [];
  const handler = middy<HttpEvent & { principal?: string }, APIGatewayProxyResultV2, Error, Context>(
    async (e: HttpEvent & { principal?: string }) => {
      seen.push(e);
      metrics.count('Accepted');
      if (opts.fail !== undefined) throw opts.fail;
      return json(200, { parsed: e.parsedBody ?? null, principal: e.principal ?? null });
    },
  )
    .use(flushMetrics(metrics))
    .use(httpErrors(logger))
    .use(
      bearerAuth(
        (header) => {
          if (header !== 'Bearer good-key-123') throw new UnauthenticatedError();
          return 'good-key';
        },
        (e) => e.routeKey === 'GET /v1/health',
      ),
    )
    .use(jsonBody(opts.maxBytes ?? 1024));
  const invoke = async (e: HttpEvent) => {
    const res = (await handler(e, context)) as APIGatewayProxyStructuredResultV2;
    return { status: res.statusCode, headers: res.headers ?? {}, body: JSON.parse(res.body ?? 'null') };
  };
  return { invoke, logs, metricLines, seen };
}

const auth = { authorization: 'Bearer good-key-123' };

describe('jsonBody', () => {
  it('parses the body of a route whose row in ROUTES says json', async () => {
    const c = chain();
    const res = await c.invoke(event('POST /v1/messages', '{"a":[1]}', auth));
    expect(res.body).toEqual({ parsed: { a: [1] }, principal: 'good-key' });
  });

  it('leaves alone the body of a POST route whose row says none (recall needs no body or content type)', async () => {
    const c = chain();
    const res = await c.invoke(
      event('POST /v1/messages/{id}/recall', 'not json', { ...auth, 'content-type': '' }),
    );
    expect(res).toMatchObject({ status: 200, body: { parsed: null } });
  });

  it.each([
    ['a body that is not JSON', '{"a":', {}, 400, 'invalid_json'],
    ['an empty body', '', {}, 400, 'invalid_json'],
    ['another content type', '{}', { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
    ['a body over the limit', JSON.stringify({ a: 'x'.repeat(1100) }), {}, 413, 'payload_too_large'],
  ])('refuses %s before the handler runs', async (_, body, headers, status, code) => {
    const c = chain();
    const res = await c.invoke(event('POST /v1/messages/batch', body, { ...auth, ...headers }));
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(c.seen).toEqual([]);
  });

  it('lets a route whose body is optional (a redrive) go without one, and parses one that is sent', async () => {
    const c = chain();
    const redrive = 'POST /v1/dlq/{id}/redrive';
    expect(await c.invoke(event(redrive, '', { ...auth, 'content-type': '' }))).toMatchObject({
      status: 200,
      body: { parsed: null },
    });
    expect((await c.invoke(event(redrive, '{"force":true}', auth))).body.parsed).toEqual({ force: true });
    expect((await c.invoke(event(redrive, '{"force":', auth))).body.error.code).toBe('invalid_json');
    expect((await c.invoke(event(redrive, '{}', { ...auth, 'content-type': 'text/plain' }))).status).toBe(
      415,
    );
  });

  it('accepts a JSON media type with parameters or a +json suffix', async () => {
    const c = chain();
    for (const type of ['application/json; charset=utf-8', 'application/merge-patch+json']) {
      expect(
        (await c.invoke(event('POST /v1/messages', '{}', { ...auth, 'content-type': type }))).status,
      ).toBe(200);
    }
  });
});

describe('bearerAuth', () => {
  it('answers 401 before parsing a body, and lets public routes through without a key', async () => {
    const c = chain();
    const res = await c.invoke(event('POST /v1/messages', '{"a":', { authorization: 'Bearer wrong' }));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(c.seen).toEqual([]);

    expect((await c.invoke(event('GET /v1/health'))).body).toEqual({ parsed: null, principal: null });
  });
});

describe('httpErrors', () => {
  it('answers a domain error with its status and logs nothing for a 4xx', async () => {
    const c = chain({ fail: new AccessDeniedError('API key x may not send for app y') });
    const res = await c.invoke(event('GET /v1/messages/{id}', '', auth));
    expect(res).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect(c.logs).toEqual([]);
  });

  it('warns about a domain 503 and logs an unavailable AWS service as an error, with the cause', async () => {
    const retry = chain({ fail: new RetryLaterError('could not queue the message; retry') });
    expect((await retry.invoke(event('GET /v1/messages/{id}', '', auth))).status).toBe(503);
    expect(retry.logs).toMatchObject([{ level: 'warn', message: 'request failed' }]);

    const down = chain({ fail: new StoreUnavailableError({ cause: new Error('ECONNREFUSED') }) });
    expect((await down.invoke(event('GET /v1/messages/{id}', '', auth))).status).toBe(503);
    expect(down.logs).toMatchObject([{ level: 'error', message: 'AWS service unavailable (answered 503)' }]);
    expect(JSON.stringify(down.logs)).toContain('ECONNREFUSED');
  });

  it('answers anything else with a generic 500 and keeps the details in the log only', async () => {
    const c = chain({ fail: new Error('secret internals') });
    const res = await c.invoke(event('GET /v1/messages/{id}', '', auth));
    expect(res).toEqual({
      status: 500,
      headers: expect.any(Object),
      body: { error: { code: 'internal_error', message: 'internal error', details: [] } },
    });
    expect(c.logs).toMatchObject([{ level: 'error', message: 'unhandled error' }]);
    expect(JSON.stringify(c.logs)).toContain('secret internals');
  });
});

describe('flushMetrics', () => {
  it('writes the invocation metrics once, whether the handler succeeded or failed', async () => {
    const ok = chain();
    await ok.invoke(event('GET /v1/messages/{id}', '', auth));
    const failed = chain({ fail: new Error('boom') });
    await failed.invoke(event('GET /v1/messages/{id}', '', auth));

    for (const c of [ok, failed]) {
      expect(c.metricLines).toHaveLength(1);
      expect(JSON.parse(c.metricLines[0] as string)).toMatchObject({ Accepted: 1 });
    }
  });
});

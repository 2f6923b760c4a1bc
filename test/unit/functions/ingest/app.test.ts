import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createIngestHandler, wrapIngestHandler } from '#functions/ingest/app.js';
import type { ApiKeyConfig } from '#lib/config/index.js';
import { UnauthenticatedError } from '#lib/ingest/index.js';
import { sha256Hex } from '#lib/security/index.js';
import { buildHttpApiEvent, buildLambdaContext } from '#local/events/index.js';
import { fixture, hmacHex, hookConfig } from '#test/helpers/hook-fixtures.js';
import { fakeConfig, fakeIngest, OPS_KEY, storeDown } from '#test/helpers/ingest-fakes.js';
import { messageBody } from '#test/helpers/messages-factories.js';

const context: Context = buildLambdaContext({ functionName: 'ingest', memoryMb: 512, timeoutSeconds: 10 });

function event(
  routeKey: string,
  opts: { body?: string | Buffer; headers?: Record<string, string>; id?: string } = {},
): APIGatewayProxyEventV2 {
  const [method = 'GET', path = '/'] = routeKey.split(' ');
  return buildHttpApiEvent({
    method,
    rawPath: opts.id ? path.replace('{id}', opts.id) : path,
    rawQueryString: '',
    headers: { authorization: `Bearer ${OPS_KEY}`, 'content-type': 'application/json', ...opts.headers },
    body: Buffer.from(opts.body ?? ''),
    sourceIp: '127.0.0.1',
    routeKey,
    ...(opts.id ? { pathParameters: { id: opts.id } } : {}),
  });
}

const invoke = async (deps: ReturnType<typeof fakeIngest>['deps'], e: APIGatewayProxyEventV2) => {
  const res = (await wrapIngestHandler(deps)(e, context)) as APIGatewayProxyStructuredResultV2;
  return { status: res.statusCode, headers: res.headers ?? {}, body: JSON.parse(res.body ?? 'null') };
};

describe('ingest handler with its middleware chain', () => {
  it('answers 202 for a valid message', async () => {
    const f = fakeIngest();
    const res = await invoke(
      f.deps,
      event('POST /v1/messages', { body: JSON.stringify(messageBody('text')) }),
    );
    expect(res.status).toBe(202);
  });

  it('authenticates before it looks at the body (401 beats 415 and 413)', async () => {
    const f = fakeIngest();
    const headers = { authorization: 'Bearer wrong-key-000', 'content-type': 'text/plain' };
    expect((await invoke(f.deps, event('POST /v1/messages', { body: 'x', headers }))).status).toBe(401);
    const huge = event('POST /v1/messages', { body: 'x'.repeat(1024 * 1024 + 1), headers });
    expect((await invoke(f.deps, huge)).status).toBe(401);
  });

  it('answers 413 for a body of 1 MB + 1 byte and accepts exactly 1 MB of JSON', async () => {
    const f = fakeIngest();
    const base = JSON.stringify(messageBody('text'));
    const padded = (n: number) => base.replace(/}$/, `${' '.repeat(n - Buffer.byteLength(base))}}`);
    expect((await invoke(f.deps, event('POST /v1/messages', { body: padded(1024 * 1024 + 1) }))).status).toBe(
      413,
    );
    expect((await invoke(f.deps, event('POST /v1/messages', { body: padded(1024 * 1024) }))).status).toBe(
      202,
    );
  });

  it('decodes a base64-encoded JSON body', async () => {
    const f = fakeIngest();
    const e = event('POST /v1/messages');
    e.body = Buffer.from(JSON.stringify(messageBody('text'))).toString('base64');
    e.isBase64Encoded = true;
    expect((await invoke(f.deps, e)).status).toBe(202);
  });

  it('answers 400 for invalid UTF-8 instead of replacing the bytes', async () => {
    const f = fakeIngest();
    const e = event('POST /v1/messages');
    // A base64 body keeps its bytes; a text body would already carry U+FFFD from the decoder upstream.
    e.body = Buffer.concat([Buffer.from('{"app":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]).toString(
      'base64',
    );
    e.isBase64Encoded = true;
    const res = await invoke(f.deps, e);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'invalid_json',
      message: 'request body is not valid UTF-8',
      details: [],
    });
  });

  it('answers a generic 500 for an unexpected error and logs the details', async () => {
    const f = fakeIngest();
    f.deps.messages.get = async () => {
      throw new Error('secret internals');
    };
    const res = await invoke(
      f.deps,
      event('GET /v1/messages/{id}', { id: 'msg_01ARZ3NDEKTSV4RRFFQ69G5FAV' }),
    );
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: { code: 'internal_error', message: 'internal error', details: [] } });
    expect(f.logs.join('\n')).toContain('secret internals');
  });

  it('answers 503 with Retry-After when the store reports DynamoDB unavailable, and logs it', async () => {
    const f = fakeIngest();
    f.deps.messages.get = async () => {
      throw storeDown();
    };
    const res = await invoke(
      f.deps,
      event('GET /v1/messages/{id}', { id: 'msg_01ARZ3NDEKTSV4RRFFQ69G5FAV' }),
    );
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body.error).toEqual({
      code: 'unavailable',
      message: 'a storage or queue service is unavailable right now; nothing was changed, retry',
      details: [],
    });
    expect(f.logs.join('\n')).toContain('AWS service unavailable (answered 503)');
  });

  it("answers 403 for a key without the route's scope, once the body has been parsed", async () => {
    const reader = { ...(fakeConfig().apiKeys[0] as ApiKeyConfig), scopes: ['messages:read' as const] };
    const f = fakeIngest({ config: fakeConfig({ apiKeys: [reader] }) });
    const post = (body: string) => invoke(f.deps, event('POST /v1/messages', { body }));
    expect((await post('{')).status).toBe(400);
    expect((await post(JSON.stringify(messageBody('text')))).status).toBe(403);
    expect(f.messages.calls).toEqual([]);
    const recall = event('POST /v1/messages/{id}/recall', { id: 'msg_01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    expect((await invoke(f.deps, recall)).body.error.message).toContain('lacks the messages:recall scope');
    const read = event('GET /v1/messages/{id}', { id: 'msg_01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    expect((await invoke(f.deps, read)).status).toBe(404);
  });

  it('answers health without a key', async () => {
    const f = fakeIngest();
    const res = await invoke(f.deps, event('GET /v1/health', { headers: { authorization: '' } }));
    expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it("answers what API Gateway's $default route brings (no route matched) 404 in the error shape, without a key", async () => {
    const f = fakeIngest();
    const e = event('$default', { headers: { authorization: '' } });
    e.rawPath = '/v1/messages';
    e.requestContext.http.method = 'DELETE';
    const res = await invoke(f.deps, e);
    expect(res).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found', message: 'no route DELETE /v1/messages', details: [] } },
    });
  });

  it('stamps every log line with the Lambda and API Gateway request ids, the cold-start flag and the message id', async () => {
    const f = fakeIngest();
    f.messages.get = async () => {
      throw new Error('table exploded');
    };
    const handler = wrapIngestHandler(f.deps);
    const calls = [0, 1].map(() => ({
      context: buildLambdaContext({ functionName: 'ingest', memoryMb: 512, timeoutSeconds: 10 }),
      event: event('GET /v1/messages/{id}', { id: 'msg_01ARZ3NDEKTSV4RRFFQ69G5FAV' }),
    }));

    for (const c of calls) await handler(c.event, c.context);

    const lines = f.logs.map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    calls.forEach((c, i) => {
      expect(lines[i]).toMatchObject({
        requestId: c.context.awsRequestId,
        apiRequestId: c.event.requestContext.requestId,
        coldStart: i === 0,
        messageId: 'msg_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      });
    });
    expect(calls[0]?.context.awsRequestId).not.toBe(calls[1]?.context.awsRequestId);
  });

  it('authenticates on its own when called bare, without the middleware', async () => {
    const f = fakeIngest();
    const bare = createIngestHandler(f.deps);
    const e = { ...event('GET /v1/messages/{id}', { id: 'msg_01ARZ3NDEKTSV4RRFFQ69G5FAV' }), headers: {} };
    await expect(bare(e)).rejects.toBeInstanceOf(UnauthenticatedError);
  });
});

describe('hook and push routes', () => {
  const SECRET = 'gh-secret';
  const hooks = {
    gh: { ...hookConfig({ source: 'github', secret: SECRET }), tokenSha256: sha256Hex('gh-token') },
  };
  const deps = () => fakeIngest({ config: fakeConfig({ hooks }) });
  // A push with a non-ASCII commit message: the signature covers the UTF-8 bytes.
  const body = fixture('github', 'push').replace('"message": "', '"message": "修复 ');
  const signed = {
    'x-github-event': 'push',
    'x-github-delivery': '5f1d2c3b-0000-4000-8000-000000000001',
    'x-hub-signature-256': `sha256=${hmacHex(SECRET, body)}`,
  };
  const hookEvent = (routeKey: string, path: string, headers: Record<string, string>, token = 'gh-token') =>
    buildHttpApiEvent({
      method: 'POST',
      rawPath: path,
      rawQueryString: '',
      headers,
      body: Buffer.from(body, 'utf8'),
      sourceIp: '127.0.0.1',
      routeKey,
      pathParameters: routeKey.includes('{hook}') ? { hook: 'gh', token } : { token },
    });

  it('verifies the signature over the exact bytes of a base64-encoded body, with no API key', async () => {
    const f = deps();
    // API Gateway base64-encodes bodies it does not take for text (here: no JSON content type).
    const e = hookEvent('POST /v1/hooks/{hook}/{token}', '/v1/hooks/gh/gh-token', {
      ...signed,
      'content-type': 'application/octet-stream',
    });
    expect(e.isBase64Encoded).toBe(true);

    const res = await invoke(f.deps, e);

    expect(res).toMatchObject({ status: 202, body: { status: 'queued', event: 'push' } });
    expect(f.queue.sent).toHaveLength(1);
  });

  it('serves a dedicated hook route (its own throttle on AWS) as the hook its path names', async () => {
    const f = deps();
    const e = hookEvent('POST /v1/hooks/gh/{token}', '/v1/hooks/gh/gh-token', {
      ...signed,
      'content-type': 'application/json',
    });

    expect((await invoke(f.deps, e)).status).toBe(202);
  });

  it('answers a wrong token 401 before the signature or the body is looked at', async () => {
    const f = deps();
    const e = hookEvent(
      'POST /v1/hooks/{hook}/{token}',
      '/v1/hooks/gh/x',
      { 'content-type': 'text/plain' },
      'x',
    );

    const res = await invoke(f.deps, e);

    expect([res.status, res.body.error.code]).toEqual([401, 'unauthorized']);
    expect(f.messages.calls).toEqual([]);
  });
});

import { once } from 'node:events';
import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { type ApiRoute, type ApiServer, startApiServer } from '#local/api-server.js';

const servers: ApiServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(
  routes: ApiRoute[],
  opts: { maxBodyBytes?: number; functionTimeoutSeconds?: number } = {},
) {
  const server = await startApiServer({ routes, ...opts });
  servers.push(server);
  return server;
}

const echo =
  (label: string): ApiRoute['handler'] =>
  async (event) => ({ statusCode: 200, body: JSON.stringify({ label, event }) });

async function call(url: string, init?: RequestInit) {
  const res = await fetch(url, init);
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    json: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

describe('startApiServer', () => {
  it('routes to the matching handler with routeKey and pathParameters', async () => {
    const server = await serve([
      { method: 'POST', path: '/v1/messages', handler: echo('send') },
      { method: 'GET', path: '/v1/messages/{id}', handler: echo('get') },
      { method: 'POST', path: '/v1/messages/{id}/recall', handler: echo('recall') },
    ]);

    const res = await call(`${server.url}/v1/messages/m%2F1/recall?x=1&x=2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: 'a=1' },
      body: '{"ok":true}',
    });

    const event = res.json.event as APIGatewayProxyEventV2;
    expect(res.status).toBe(200);
    expect(res.json.label).toBe('recall');
    expect(event.routeKey).toBe('POST /v1/messages/{id}/recall');
    expect(event.pathParameters).toEqual({ id: 'm/1' });
    expect(event.rawPath).toBe('/v1/messages/m%2F1/recall');
    expect(event.queryStringParameters).toEqual({ x: '1,2' });
    expect(event.body).toBe('{"ok":true}');
    expect(event.cookies).toEqual(['a=1']);
    expect(event.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(event.requestContext.http.sourceIp).toBe('127.0.0.1');
  });

  it('prefers a literal segment over a path parameter', async () => {
    const server = await serve([
      { method: 'POST', path: '/v1/messages/{id}', handler: echo('param') },
      { method: 'POST', path: '/v1/messages/batch', handler: echo('batch') },
    ]);

    expect((await call(`${server.url}/v1/messages/batch`, { method: 'POST' })).json.label).toBe('batch');
    expect((await call(`${server.url}/v1/messages/other`, { method: 'POST' })).json.label).toBe('param');
  });

  it('matches a greedy {proxy+} parameter across segments', async () => {
    const server = await serve([{ method: 'ANY', path: '/v1/wecom/{proxy+}', handler: echo('proxy') }]);

    const res = await call(`${server.url}/v1/wecom/callback/app-1`);

    expect((res.json.event as APIGatewayProxyEventV2).pathParameters).toEqual({ proxy: 'callback/app-1' });
  });

  it('answers an unknown route or method with 404 in the gateway error format', async () => {
    const server = await serve([{ method: 'GET', path: '/v1/health', handler: echo('health') }]);

    const unknownPath = await call(`${server.url}/nope`);
    const wrongMethod = await call(`${server.url}/v1/health`, { method: 'DELETE' });

    expect(unknownPath.status).toBe(404);
    expect(unknownPath.json).toEqual({
      error: { code: 'not_found', message: 'no route for GET /nope', details: [] },
    });
    expect(wrongMethod.status).toBe(404);
  });

  it('answers 500 like API Gateway when the handler throws, and reports the error', async () => {
    const errors: unknown[] = [];
    const server = await startApiServer({
      routes: [
        {
          method: 'GET',
          path: '/boom',
          handler: async () => {
            throw new Error('secret detail');
          },
        },
      ],
      onError: (err) => errors.push(err),
    });
    servers.push(server);

    const res = await call(`${server.url}/boom`);

    expect(res.status).toBe(500);
    expect(res.json).toEqual({ message: 'Internal Server Error' });
    expect(errors).toHaveLength(1);
  });

  it('answers 500 when the handler runs past the function timeout', async () => {
    const server = await serve([{ method: 'GET', path: '/slow', handler: () => new Promise(() => {}) }], {
      functionTimeoutSeconds: 0.1,
    });

    const res = await call(`${server.url}/slow`);

    expect(res.status).toBe(500);
  });

  it('maps the v2 result: plain object to 200 JSON, cookies to set-cookie', async () => {
    const server = await serve([
      { method: 'GET', path: '/plain', handler: async () => ({ hello: 'world' }) },
      {
        method: 'GET',
        path: '/cookies',
        handler: async () => ({ statusCode: 204, cookies: ['a=1', 'b=2'] }),
      },
    ]);

    const plain = await call(`${server.url}/plain`);
    const cookies = await fetch(`${server.url}/cookies`);

    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('application/json');
    expect(plain.json).toEqual({ hello: 'world' });
    expect(cookies.status).toBe(204);
    expect(cookies.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
  });

  it('rejects a body over the payload limit with 413 without calling the handler', async () => {
    let calls = 0;
    const server = await serve(
      [
        {
          method: 'POST',
          path: '/v1/messages',
          handler: async () => {
            calls++;
            return { statusCode: 202 };
          },
        },
      ],
      { maxBodyBytes: 1024 },
    );

    const declared = await call(`${server.url}/v1/messages`, { method: 'POST', body: 'x'.repeat(2048) });
    const chunked = await call(`${server.url}/v1/messages`, {
      method: 'POST',
      body: new Blob(['x'.repeat(2048)]).stream(),
      duplex: 'half',
    } as RequestInit);

    expect(declared.status).toBe(413);
    expect(declared.json).toMatchObject({ error: { code: 'payload_too_large' } });
    expect(chunked.status).toBe(413);
    expect(calls).toBe(0);
  });

  it('closes idle keep-alive connections on close()', { timeout: 3_000 }, async () => {
    const server = await startApiServer({ routes: [{ method: 'GET', path: '/x', handler: echo('x') }] });
    const agent = new Agent({ keepAlive: true, keepAliveMsecs: 60_000 });
    const req = request(`${server.url}/x`, { agent });
    req.end();
    const [res] = await once(req, 'response');
    res.resume();
    await once(res, 'end');
    const socket = req.socket as Socket;

    await server.close();

    if (!socket.destroyed) await once(socket, 'close');
    expect(socket.destroyed).toBe(true);
    agent.destroy();
  });

  it('lets an in-flight request finish during close()', async () => {
    const server = await startApiServer({
      routes: [
        {
          method: 'GET',
          path: '/slow',
          handler: async () => {
            await sleep(200);
            return { statusCode: 200, body: 'done' };
          },
        },
      ],
    });
    const pending = fetch(`${server.url}/slow`);
    await sleep(50);

    const closing = server.close();
    const res = await pending;

    expect(res.status).toBe(200);
    expect(await res.text()).toBe('done');
    await closing;
  });
});

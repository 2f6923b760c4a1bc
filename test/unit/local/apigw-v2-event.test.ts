import { describe, expect, it } from 'vitest';
import { buildHttpApiEvent, type HttpApiRequest, toHttpResponse } from '#local/events/index.js';

const request = (overrides: Partial<HttpApiRequest> = {}): HttpApiRequest => ({
  method: 'POST',
  rawPath: '/v1/messages/m-1/recall',
  rawQueryString: '',
  headers: { Host: 'api.example.com:3000', 'Content-Type': 'application/json', 'User-Agent': 'curl/8' },
  body: Buffer.from('{"a":1}'),
  sourceIp: '127.0.0.1',
  routeKey: 'POST /v1/messages/{id}/recall',
  pathParameters: { id: 'm-1' },
  now: new Date(Date.UTC(2020, 2, 12, 19, 3, 58)),
  ...overrides,
});

describe('buildHttpApiEvent', () => {
  it('builds a payload format 2.0 event with the documented request context', () => {
    const event = buildHttpApiEvent(request());

    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'POST /v1/messages/{id}/recall',
      rawPath: '/v1/messages/m-1/recall',
      rawQueryString: '',
      pathParameters: { id: 'm-1' },
      body: '{"a":1}',
      isBase64Encoded: false,
      requestContext: {
        accountId: '000000000000',
        apiId: 'local',
        domainName: 'api.example.com',
        domainPrefix: 'api',
        http: {
          method: 'POST',
          path: '/v1/messages/m-1/recall',
          protocol: 'HTTP/1.1',
          sourceIp: '127.0.0.1',
          userAgent: 'curl/8',
        },
        routeKey: 'POST /v1/messages/{id}/recall',
        stage: '$default',
        time: '12/Mar/2020:19:03:58 +0000',
        timeEpoch: Date.UTC(2020, 2, 12, 19, 3, 58),
      },
    });
    expect(event.requestContext.requestId).toMatch(/^[A-Za-z0-9+/=]{16}$/);
  });

  it('lower-cases header names and joins repeated headers with commas', () => {
    const event = buildHttpApiEvent(request({ headers: { 'X-Trace': ['a', 'b'], Accept: 'text/plain' } }));

    expect(event.headers).toEqual({ 'x-trace': 'a,b', accept: 'text/plain' });
  });

  it('moves cookies out of the headers into the cookies array', () => {
    const event = buildHttpApiEvent(request({ headers: { Cookie: ['s=1; theme=dark', 'lang=zh'] } }));

    expect(event.cookies).toEqual(['s=1', 'theme=dark', 'lang=zh']);
    expect(event.headers.cookie).toBeUndefined();
  });

  it('joins repeated query parameters with commas and decodes them', () => {
    const event = buildHttpApiEvent(request({ rawQueryString: 'p1=v1&p1=v2&p2=a%20b' }));

    expect(event.rawQueryString).toBe('p1=v1&p1=v2&p2=a%20b');
    expect(event.queryStringParameters).toEqual({ p1: 'v1,v2', p2: 'a b' });
  });

  it('base64-encodes a binary body and flags it', () => {
    const body = Buffer.from([0xff, 0x00, 0x10]);
    const event = buildHttpApiEvent(
      request({ headers: { 'content-type': 'application/octet-stream' }, body }),
    );

    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body ?? '', 'base64')).toEqual(body);
  });

  it('leaves optional fields out when the request has none', () => {
    const event = buildHttpApiEvent(
      request({
        method: 'get',
        body: Buffer.alloc(0),
        headers: {},
        pathParameters: {},
        routeKey: 'GET /v1/health',
      }),
    );

    expect(event.body).toBeUndefined();
    expect(event.cookies).toBeUndefined();
    expect(event.queryStringParameters).toBeUndefined();
    expect(event.pathParameters).toBeUndefined();
    expect(event.isBase64Encoded).toBe(false);
    expect(event.requestContext.http.method).toBe('GET');
    expect(event.requestContext.domainName).toBe('localhost');
  });
});

describe('toHttpResponse', () => {
  it('sends a string result without statusCode as a 200 JSON response', () => {
    const res = toHttpResponse('Hello from Lambda!');

    expect(res.statusCode).toBe(200);
    expect(res.headers).toEqual({ 'content-type': 'application/json' });
    expect(res.body.toString()).toBe('Hello from Lambda!');
  });

  it('serializes an object result without statusCode as the JSON body', () => {
    const res = toHttpResponse({ id: 'm-1', status: 'queued' });

    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({ id: 'm-1', status: 'queued' });
  });

  it('uses statusCode, headers and body of a structured result', () => {
    const res = toHttpResponse({ statusCode: 202, headers: { 'X-Id': 'm-1', 'Retry-After': 3 }, body: '{}' });

    expect(res).toEqual({
      statusCode: 202,
      headers: { 'x-id': 'm-1', 'retry-after': '3' },
      body: Buffer.from('{}'),
    });
  });

  it('decodes a base64 body', () => {
    const res = toHttpResponse({
      statusCode: 200,
      body: Buffer.from([1, 2, 3]).toString('base64'),
      isBase64Encoded: true,
    });

    expect(res.body).toEqual(Buffer.from([1, 2, 3]));
  });

  it('turns each cookie into its own set-cookie header', () => {
    const res = toHttpResponse({ statusCode: 204, cookies: ['a=1; Path=/', 'b=2'] });

    expect(res.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2']);
    expect(res.body.length).toBe(0);
  });

  it('rejects a result whose statusCode is not an HTTP status', () => {
    expect(() => toHttpResponse({ statusCode: 42 })).toThrow(TypeError);
  });
});

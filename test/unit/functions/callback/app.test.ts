import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { wrapCallbackHandler } from '#functions/callback/app.js';
import { parseConfig } from '#lib/config/index.js';
import { createLogger, Metrics } from '#lib/observability/index.js';
import { type CallbackDeps, createVerifiers } from '#lib/receipts/index.js';
import { StoreUnavailableError } from '#lib/store/index.js';
import { buildHttpApiEvent, buildLambdaContext } from '#local/events/index.js';
import { minimalConfig } from '#test/helpers/unit-config.js';
import { sealCallback, sealEchostr, wecomXml } from '#test/helpers/wecom-callback.js';

const context = buildLambdaContext({ functionName: 'callback', memoryMb: 512, timeoutSeconds: 5 });
const input = minimalConfig();
const creds = { ...input.apps.ops.callback, corpId: input.apps.ops.corpId };
const ts = () => Math.floor(Date.now() / 1000);

function deps(opts: { storeDown?: boolean } = {}) {
  const config = parseConfig(input);
  const stored: string[] = [];
  const d: CallbackDeps = {
    config,
    verifiers: createVerifiers(config),
    events: {
      record: async (e) => {
        if (opts.storeDown) throw new StoreUnavailableError({ cause: new Error('down') });
        stored.push(e.id);
        return { outcome: 'stored' };
      },
      markNotified: async () => undefined,
      findMessageByTask: async () => undefined,
      listByApp: async () => ({ events: [] }),
      listByMessage: async () => [],
    },
    cards: { save: async () => undefined, take: async () => false, restore: async () => undefined },
    notify: {
      enqueue: async () => undefined,
      retryAfter: async () => undefined,
      deadLetter: async () => undefined,
    },
    logger: createLogger({ service: 'test' }, { write: () => undefined }),
    metrics: new Metrics('test', () => undefined),
  };
  return { d, stored };
}

const event = (
  method: 'GET' | 'POST',
  query: Record<string, string | undefined>,
  body = '',
  contentType = 'text/xml',
) =>
  buildHttpApiEvent({
    method,
    rawPath: '/v1/wecom/callback/ops',
    rawQueryString: new URLSearchParams(query as Record<string, string>).toString(),
    headers: { 'content-type': contentType },
    body: Buffer.from(body),
    sourceIp: '127.0.0.1',
    routeKey: `${method} /v1/wecom/callback/{app}`,
    pathParameters: { app: 'ops' },
  });

const invoke = async (d: CallbackDeps, e: APIGatewayProxyEventV2) =>
  (await wrapCallbackHandler(d)(e, context)) as APIGatewayProxyStructuredResultV2;

describe('callback handler with its middleware chain', () => {
  it('answers URL verification with the bare plaintext, no JSON', async () => {
    const res = await invoke(
      deps().d,
      event('GET', sealEchostr(creds, '8472011', ts()) as Record<string, string>),
    );

    expect(res).toMatchObject({ statusCode: 200, body: '8472011' });
    expect(res.headers?.['content-type']).toMatch(/^text\/plain/);
  });

  it('stores a callback whose body API Gateway handed over base64-encoded, and answers an empty 200', async () => {
    const { d, stored } = deps();
    const xml = wecomXml({ FromUserName: 'a', CreateTime: ts(), MsgType: 'text', Content: 'x', MsgId: '7' });
    const sealed = sealCallback(creds, xml, { timestamp: ts() });
    // An unusual content type makes the HTTP API base64-encode the body.
    const e = event('POST', sealed.query as Record<string, string>, sealed.body, 'application/octet-stream');
    expect(e.isBase64Encoded).toBe(true);

    const res = await invoke(d, e);

    expect(res).toMatchObject({ statusCode: 200, body: '' });
    expect(stored).toEqual(['msg:7']);
  });

  it('maps rejections to 401/404 and an unavailable store to 503 (WeCom retries)', async () => {
    const sealed = sealCallback(
      creds,
      wecomXml({ CreateTime: ts(), MsgType: 'event', Event: 'enter_agent' }),
      {
        timestamp: ts(),
      },
    );
    const forged = { ...(sealed.query as Record<string, string>), msg_signature: 'f'.repeat(40) };
    const unknownApp = {
      ...event('POST', sealed.query as Record<string, string>, sealed.body),
      pathParameters: { app: 'nope' },
    };

    const codes = [
      (await invoke(deps().d, event('POST', forged, sealed.body))).statusCode,
      (await invoke(deps().d, unknownApp)).statusCode,
      (
        await invoke(
          deps({ storeDown: true }).d,
          event('POST', sealed.query as Record<string, string>, sealed.body),
        )
      ).statusCode,
    ];

    expect(codes).toEqual([401, 404, 503]);
  });
});

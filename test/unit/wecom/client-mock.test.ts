import { MockAgent, type MockPool } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WecomApiError, type WecomClient, WecomTransportError } from '#lib/wecom/index.js';
import { createUndiciWecomClient } from '#lib/wecom/undici.js';
import { rejectionOf } from '#test/helpers/thrown.js';

const ORIGIN = 'https://qyapi.weixin.qq.com';
const TOKEN = 'ACCESS-TOKEN-9b2f-secret';

describe('WecomClient with an undici MockPool', () => {
  let agent: MockAgent;
  let pool: MockPool;
  let wecom: WecomClient;

  beforeEach(() => {
    agent = new MockAgent();
    agent.disableNetConnect();
    pool = agent.get(ORIGIN);
    wecom = createUndiciWecomClient({ baseUrl: ORIGIN, dispatcher: pool });
  });
  afterEach(async () => {
    await agent.close();
  });

  it('parses a gettoken answer and sends corpid and corpsecret in the query', async () => {
    const paths: string[] = [];
    pool.intercept({ path: (p) => p.startsWith('/cgi-bin/gettoken'), method: 'GET' }).reply(200, (opts) => {
      paths.push(String(opts.path));
      return { errcode: 0, errmsg: 'ok', access_token: TOKEN, expires_in: 7200 };
    });

    const token = await wecom.getToken('ww123', 'app-secret');

    expect(token).toEqual({ access_token: TOKEN, expires_in: 7200 });
    expect(paths).toEqual(['/cgi-bin/gettoken?corpid=ww123&corpsecret=app-secret']);
  });

  it('parses a message/send answer and sends the token in the query and the body as JSON', async () => {
    const seen: { path: string; body: unknown; contentType: unknown }[] = [];
    pool
      .intercept({ path: (p) => p.startsWith('/cgi-bin/message/send'), method: 'POST' })
      .reply(200, (opts) => {
        const headers = opts.headers as Record<string, string>;
        seen.push({
          path: String(opts.path),
          body: JSON.parse(String(opts.body)),
          contentType: headers['content-type'],
        });
        return { errcode: 0, errmsg: 'ok', msgid: 'MSGID1', invaliduser: 'ghost' };
      });
    const body = { touser: 'alice', msgtype: 'text', agentid: 1000002, text: { content: '你好' } };

    const res = await wecom.send(TOKEN, body);

    expect(res).toMatchObject({ msgid: 'MSGID1', invaliduser: 'ghost' });
    expect(seen).toEqual([
      {
        path: `/cgi-bin/message/send?access_token=${TOKEN}`,
        body,
        contentType: 'application/json; charset=utf-8',
      },
    ]);
  });

  it('URL-encodes a token with reserved characters', async () => {
    const paths: string[] = [];
    pool
      .intercept({ path: (p) => p.startsWith('/cgi-bin/message/recall'), method: 'POST' })
      .reply(200, (opts) => {
        paths.push(String(opts.path));
        return { errcode: 0, errmsg: 'ok' };
      });

    await wecom.recall('a+b/c=&d', 'MSGID1');

    expect(paths).toEqual(['/cgi-bin/message/recall?access_token=a%2Bb%2Fc%3D%26d']);
  });

  it('keeps a path prefix of the base URL', async () => {
    const prefixed = createUndiciWecomClient({ baseUrl: `${ORIGIN}/sim/`, dispatcher: pool });
    pool
      .intercept({ path: (p) => p.startsWith('/sim/cgi-bin/gettoken'), method: 'GET' })
      .reply(200, { errcode: 0, errmsg: 'ok', access_token: TOKEN, expires_in: 7200 });

    await expect(prefixed.getToken('ww1', 's')).resolves.toEqual({ access_token: TOKEN, expires_in: 7200 });
  });

  it('throws a WecomApiError with errcode, errmsg and errclass for a non-zero errcode', async () => {
    pool
      .intercept({ path: (p) => p.startsWith('/cgi-bin/message/send'), method: 'POST' })
      .reply(200, { errcode: 45009, errmsg: 'api freq out of limit' });

    const err = await rejectionOf(wecom.send(TOKEN, { touser: 'alice' }));

    expect(err).toBeInstanceOf(WecomApiError);
    expect(err).toMatchObject({
      errcode: 45009,
      errmsg: 'api freq out of limit',
      errclass: 'rateLimited',
      api: 'message/send',
      code: 'wecom_api_error',
    });
  });

  it('classifies 42001 as a token error and keeps the token out of the message', async () => {
    pool
      .intercept({ path: (p) => p.startsWith('/cgi-bin/message/send'), method: 'POST' })
      .reply(200, { errcode: 42001, errmsg: 'access_token expired' });

    const err = (await rejectionOf(wecom.send(TOKEN, { touser: 'alice' }))) as WecomApiError;

    expect(err.errclass).toBe('token');
    expect(err.message).not.toContain(TOKEN);
    expect(String(err.stack)).not.toContain(TOKEN);
  });

  it('turns HTTP 502 into a transport error that may have reached WeCom', async () => {
    pool
      .intercept({ path: (p) => p.startsWith('/cgi-bin/message/send'), method: 'POST' })
      .reply(502, '<html>Bad Gateway</html>');

    const err = await rejectionOf(wecom.send(TOKEN, { touser: 'alice' }));

    expect(err).toBeInstanceOf(WecomTransportError);
    expect(err).toMatchObject({ inDoubt: true, transportCode: 'HTTP_502' });
    expect((err as Error).message).not.toContain(TOKEN);
  });

  it('turns a body that is not JSON into a transport error', async () => {
    pool
      .intercept({ path: (p) => p.startsWith('/cgi-bin/message/send'), method: 'POST' })
      .reply(200, 'not json at all');

    const err = await rejectionOf(wecom.send(TOKEN, { touser: 'alice' }));

    expect(err).toBeInstanceOf(WecomTransportError);
    expect(err).toMatchObject({ inDoubt: true, transportCode: 'BAD_BODY' });
  });

  it('turns a socket error into a transport error that may have reached WeCom, without the token', async () => {
    pool
      .intercept({ path: (p) => p.startsWith('/cgi-bin/message/send'), method: 'POST' })
      .replyWithError(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));

    const err = await rejectionOf(wecom.send(TOKEN, { touser: 'alice' }));

    expect(err).toBeInstanceOf(WecomTransportError);
    expect(err).toMatchObject({ inDoubt: true, transportCode: 'UND_ERR_SOCKET' });
    expect((err as Error).message).not.toContain(TOKEN);
  });
});

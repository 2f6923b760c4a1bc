import { describe, expect, it } from 'vitest';
import { REDACTED, redact } from '#lib/observability/index.js';

const TOKEN = 'TOKEN-VALUE-7f3a9c';
const SECRET = 'SECRET-VALUE-b41e';

/** True when the serialized value still contains any of the sensitive strings. */
const leaks = (value: unknown): boolean => {
  const json = JSON.stringify(value);
  return json.includes(TOKEN) || json.includes(SECRET);
};

describe('redact', () => {
  it.each([
    'secret',
    'access_token',
    'accessToken',
    'Authorization',
    'corpsecret',
    'encodingAESKey',
    'apiKey',
    'x-api-key',
    'webhookSignature',
    'password',
    'key',
    'robotKey',
    'webhookUrl',
  ])('replaces the value of a %s key', (key) => {
    const value = { [key]: SECRET, messageId: 'msg_1' };

    const out = redact(value);

    expect(out).toEqual({ [key]: REDACTED, messageId: 'msg_1' });
  });

  it('redacts secret keys at any depth, inside arrays too', () => {
    const value = { apps: [{ ops: { callback: { token: TOKEN, encodingAESKey: SECRET } } }] };

    const out = redact(value);

    expect(leaks(out)).toBe(false);
    expect(out).toEqual({ apps: [{ ops: { callback: { token: REDACTED, encodingAESKey: REDACTED } } }] });
  });

  it('redacts every element of an array held by a secret key', () => {
    const value = { tokens: [TOKEN, SECRET] };

    expect(leaks(redact(value))).toBe(false);
  });

  it('redacts an object held by a secret key, whatever its inner keys are called', () => {
    const value = {
      secret: { value: SECRET },
      headers: { Authorization: { scheme: 'Bearer', value: TOKEN } },
    };

    expect(leaks(redact(value))).toBe(false);
  });

  it.each([
    `https://qyapi.weixin.qq.com/cgi-bin/message/send?access_token=${TOKEN}`,
    `/cgi-bin/gettoken?corpid=ww1&corpsecret=${SECRET}`,
    `request failed: POST /cgi-bin/message/send?access_token=${TOKEN}&debug=1 (timeout)`,
    `"url":"https://x/cgi-bin/message/recall?ACCESS_TOKEN=${TOKEN}"`,
  ])('removes query-string secrets inside a string: %s', (text) => {
    const out = redact({ url: text }) as { url: string };

    expect(out.url).not.toContain(TOKEN);
    expect(out.url).not.toContain(SECRET);
    expect(out.url).toContain(REDACTED);
  });

  it("hides a group robot's key in its webhook URL, in text and in JSON", () => {
    const url = `https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=${SECRET}`;

    const out = redact({ message: `POST ${url} failed`, body: JSON.stringify({ key: SECRET }) });

    expect(leaks(out)).toBe(false);
    expect(JSON.stringify(out)).toContain('/cgi-bin/webhook/send?key=[redacted]');
  });

  it('keeps the rest of a URL readable', () => {
    const out = redact(`https://qyapi.weixin.qq.com/cgi-bin/message/send?access_token=${TOKEN}&debug=1`);

    expect(out).toBe(`https://qyapi.weixin.qq.com/cgi-bin/message/send?access_token=${REDACTED}&debug=1`);
  });

  it('serializes an Error with name, message and code, without its secrets', () => {
    const err = Object.assign(new TypeError(`fetch /cgi-bin/message/send?access_token=${TOKEN} failed`), {
      code: 'UND_ERR_SOCKET',
    });

    const out = redact(err) as Record<string, unknown>;

    expect(out).toMatchObject({ name: 'TypeError', code: 'UND_ERR_SOCKET' });
    expect(out.message).toBe(`fetch /cgi-bin/message/send?access_token=${REDACTED} failed`);
    expect(typeof out.stack).toBe('string');
    expect(leaks(out)).toBe(false);
  });

  it('redacts query-string secrets in the stack and the cause of an Error', () => {
    const cause = new Error(`connect to ?corpsecret=${SECRET}`);
    const err = new Error(`send ?access_token=${TOKEN}`, { cause });

    const out = redact({ err });

    expect(leaks(out)).toBe(false);
    expect(out).toMatchObject({ err: { cause: { name: 'Error' } } });
  });

  it('leaves values that are not secrets untouched', () => {
    const value = { messageId: 'msg_01', attempts: 2, ok: true, none: null, list: [1, 'a'] };

    expect(redact(value)).toEqual(value);
  });

  it('stops at a depth limit instead of overflowing on deep or cyclic structures', () => {
    const cyclic: Record<string, unknown> = { name: 'root' };
    cyclic.self = cyclic;

    expect(() => JSON.stringify(redact(cyclic))).not.toThrow();
  });
});

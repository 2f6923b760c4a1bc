import { describe, expect, it } from 'vitest';
import { type PushKeyConfig, parseConfig } from '#lib/config/index.js';
import {
  createHookFinder,
  createPushKeyMatcher,
  HookPayloadError,
  handleHook,
  parsePushParams,
  pushToMessage,
} from '#lib/hooks/index.js';
import { utf8Bytes, validateMessageRequest } from '#lib/messages/index.js';
import { sha256Hex } from '#lib/security/index.js';
import { hookConfig } from '#test/helpers/hook-fixtures.js';
import { thrown } from '#test/helpers/thrown.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

function pushKey(over: Record<string, unknown> = {}): PushKeyConfig {
  const config = parseConfig({
    ...minimalConfig(),
    pushKeys: [
      { name: 'cron', sha256: sha256Hex('SCT-sendkey-1'), app: 'ops', to: { touser: 'alice' }, ...over },
    ],
  });
  const key = config.pushKeys?.[0];
  if (!key) throw new Error('push key missing');
  return key;
}

function valid(body: Record<string, unknown>) {
  const result = validateMessageRequest(body);
  expect(result.ok ? [] : result.issues).toEqual([]);
  return body;
}

describe('parsePushParams', () => {
  it('reads ServerChan parameters from the query string', () => {
    expect(
      parsePushParams({ query: 'title=%E5%A4%87%E4%BB%BD%E5%AE%8C%E6%88%90&desp=**3**%20files&noip=1' }),
    ).toEqual({
      title: '备份完成',
      desp: '**3** files',
    });
  });

  it('reads a form body and a JSON body; the body wins over the query', () => {
    const form = parsePushParams({
      query: 'title=from-query',
      contentType: 'application/x-www-form-urlencoded; charset=utf-8',
      rawBody: 'title=from+form&short=one+line',
    });
    const json = parsePushParams({
      contentType: 'application/json',
      rawBody: '{"title":"from json","desp":"body"}',
    });

    expect(form).toEqual({ title: 'from form', short: 'one line' });
    expect(json).toEqual({ title: 'from json', desp: 'body' });
  });

  it("accepts ServerChan's older text parameter for the title", () => {
    expect(parsePushParams({ query: 'text=hello' })).toEqual({ title: 'hello' });
  });

  it('answers 400 naming title when there is none, and for bad JSON or an unknown content type', () => {
    expect(thrown(() => parsePushParams({ query: 'desp=x' }), HookPayloadError).details).toEqual([
      { field: 'title', message: 'required (query, form or JSON)' },
    ]);
    expect(
      thrown(() => parsePushParams({ contentType: 'application/json', rawBody: '{' }), HookPayloadError).code,
    ).toBe('hook_payload_invalid');
    expect(
      thrown(
        () => parsePushParams({ contentType: 'multipart/form-data; boundary=x', rawBody: '--x' }),
        HookPayloadError,
      ).details,
    ).toEqual([
      {
        field: 'content-type',
        message: 'send a query string, a form (application/x-www-form-urlencoded) or JSON',
      },
    ]);
  });
});

describe('pushToMessage', () => {
  it('sends title and desp as markdown to the key’s app and recipients', () => {
    const body = valid(pushToMessage(pushKey(), { title: '备份完成', desp: '- db: **ok**\n- files: ok' }));

    expect(body).toEqual({
      app: 'ops',
      touser: ['alice'],
      msgtype: 'markdown',
      markdown: { content: '## 备份完成\n- db: **ok**\n- files: ok' },
      priority: 'normal',
      metadata: { push: 'cron' },
    });
  });

  it('converts to text or to a textcard (short as description) through the Markdown fallback', () => {
    const text = valid(
      pushToMessage(pushKey({ msgtype: 'text' }), { title: 'Deploy', desp: '[log](https://ci.example/7)' }),
    );
    const card = valid(
      pushToMessage(pushKey({ msgtype: 'textcard' }), {
        title: 'Deploy',
        desp: '[log](https://ci.example/7)',
        short: 'v1.2 live',
      }),
    );

    expect(text.text).toEqual({ content: 'Deploy\n<a href="https://ci.example/7">log</a>' });
    expect(card.textcard).toEqual({ title: 'Deploy', description: 'v1.2 live', url: 'https://ci.example/7' });
  });

  it('keeps a 32 KB desp within the 2048-byte markdown limit', () => {
    const desp = Array.from({ length: 1000 }, (_, i) => `第${i}行日志输出`).join('\n');

    const body = valid(pushToMessage(pushKey(), { title: '日志', desp }));

    expect(utf8Bytes((body.markdown as { content: string }).content)).toBeLessThanOrEqual(2048);
  });
});

describe('token checks', () => {
  it('finds a push key by its sendkey, and nothing for another', () => {
    const find = createPushKeyMatcher([pushKey()]);

    expect(find('SCT-sendkey-1')?.name).toBe('cron');
    expect(find('SCT-sendkey-2')).toBeUndefined();
  });

  it('finds a hook only with its own name and token', () => {
    const hooks = {
      a: { ...hookConfig({ source: 'generic' }), tokenSha256: sha256Hex('token-a') },
      b: { ...hookConfig({ source: 'generic' }), tokenSha256: sha256Hex('token-b') },
    };

    const findHook = createHookFinder(hooks);

    expect(findHook('a', 'token-a')).toBe(hooks.a);
    expect(findHook('a', 'token-b')).toBeUndefined();
    expect(findHook('c', 'token-a')).toBeUndefined();
    expect(findHook('constructor', 'token-a')).toBeUndefined();
    expect(findHook('__proto__', '')).toBeUndefined();
  });
});

describe('bytes that are not UTF-8', () => {
  it('are a 400 for push parameters and hook payloads, not text with U+FFFD in it', () => {
    const latin1 = Buffer.from('title=Caf\xe9', 'latin1');

    expect(thrown(() => parsePushParams({ rawBody: latin1 }), HookPayloadError).details).toEqual([
      { field: '(body)', message: 'must be UTF-8' },
    ]);
    const hook = hookConfig({ source: 'generic' });
    const input = {
      rawBody: Buffer.from('{"title":"Caf\xe9"}', 'latin1'),
      headers: {},
      receivedAt: new Date(),
    };
    expect(thrown(() => handleHook('up', hook, input), HookPayloadError).message).toBe(
      'the body is not valid UTF-8',
    );
  });
});

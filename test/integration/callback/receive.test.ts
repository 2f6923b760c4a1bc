import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallbackQuery } from '#lib/callback/index.js';
import { TEST_CALLBACK, TEST_CORP_ID } from '#local/harness/config.js';
import { startTestGateway, type TestGateway } from '#test/helpers/gateway.js';
import {
  envelope,
  OFFICIAL,
  raw,
  type Sealed,
  sealCallback,
  sealEchostr,
  signedAround,
  wecomXml,
} from '#test/helpers/wecom-callback.js';

/**
 * WeCom's callbacks over the local HTTP API, built exactly as WeCom builds them (`@wecom/crypto` encrypt with the
 * corpId, then getSignature): URL verification, every event family stored once, and every forgery refused with
 * nothing stored.
 */
let gw: TestGateway;
const app = { ...TEST_CALLBACK, corpId: TEST_CORP_ID };

beforeAll(async () => {
  gw = await startTestGateway({ startSender: false });
});
afterAll(() => gw?.stack.stop());

const now = () => Math.floor(Date.now() / 1000);
const url = (query: CallbackQuery, name = 'ops') =>
  `${gw.stack.apiUrl}/v1/wecom/callback/${name}?${new URLSearchParams(query as Record<string, string>)}`;
/** No API key: WeCom has none. */
const post = (sealed: Sealed, name = 'ops') =>
  fetch(url(sealed.query, name), {
    method: 'POST',
    headers: { 'content-type': 'text/xml' },
    body: sealed.body,
  });

const common = (from: string, extra: Record<string, string | number | { raw: string }>) => ({
  ToUserName: app.corpId,
  FromUserName: from,
  CreateTime: now(),
  ...extra,
  AgentID: 1000002,
});

async function events(
  since = '2000-01-01T00:00:00Z',
): Promise<{ id: string; event: Record<string, unknown> }[]> {
  const res = await gw.get(`/v1/events?app=ops&since=${since}&limit=500`);
  expect(res.status).toBe(200);
  return res.body.events;
}

/** Items the callback path writes (events, and their copies in message partitions), straight from the table. */
async function storedCallbackItems(): Promise<number> {
  const out = await gw.stack.dynamo.send(
    new ScanCommand({
      TableName: gw.stack.resources.tableName,
      FilterExpression: 'begins_with(pk, :event) OR begins_with(sk, :copy)',
      ExpressionAttributeValues: { ':event': { S: 'CALLBACK#' }, ':copy': { S: 'EVENT#' } },
    }),
  );
  return out.Count ?? 0;
}

describe('GET /v1/wecom/callback/{app} (URL verification)', () => {
  it('answers the decrypted echostr as bare text/plain', async () => {
    const res = await fetch(url(sealEchostr(app, '5927413086', now())));

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe('5927413086');
  });

  it('answers 401 for a forged signature and 404 for an app that takes no callbacks', async () => {
    const query = sealEchostr(app, '5927413086', now());

    expect((await fetch(url({ ...query, msg_signature: '0'.repeat(40) }))).status).toBe(401);
    expect((await fetch(url(query, 'nope'))).status).toBe(404);
  });
});

describe('POST /v1/wecom/callback/{app}', () => {
  const message = (msgType: string, fields: Record<string, string>) =>
    wecomXml(
      common('alice', {
        MsgType: msgType,
        ...fields,
        MsgId: String(4_561_255_354_251_345_929n + BigInt(Math.floor(Math.random() * 1e9))),
      }),
    );
  const appEvent = (event: string, fields: Record<string, string | { raw: string }> = {}) =>
    wecomXml(common('alice', { MsgType: 'event', Event: event, ...fields }));

  const FAMILY = [
    ['text', message('text', { Content: '收到,马上处理' })],
    ['image', message('image', { PicUrl: 'https://p.example/1.jpg', MediaId: 'media-1' })],
    ['voice', message('voice', { MediaId: 'media-2', Format: 'amr' })],
    ['video', message('video', { MediaId: 'media-3', ThumbMediaId: 'thumb-3' })],
    [
      'location',
      message('location', { Location_X: '23.13', Location_Y: '113.26', Scale: '15', Label: 'Canton' }),
    ],
    [
      'link',
      message('link', { Title: 'Runbook', Description: 'how to', Url: 'https://r.example', PicUrl: '' }),
    ],
    ['enter_agent', appEvent('enter_agent', { EventKey: '' })],
    ['menu_click', appEvent('click', { EventKey: 'on-call' })],
    ['menu_view', appEvent('view', { EventKey: 'https://status.example' })],
    [
      'template_card_event',
      appEvent('template_card_event', {
        EventKey: 'approve',
        TaskId: 'unknown-task',
        CardType: 'vote_interaction',
        ResponseCode: 'rc-1',
        SelectedItems: raw(
          '<SelectedItem><QuestionKey><![CDATA[q1]]></QuestionKey><OptionIds><OptionId><![CDATA[o1]]></OptionId>' +
            '<OptionId><![CDATA[o2]]></OptionId></OptionIds></SelectedItem>',
        ),
      }),
    ],
    [
      'template_card_menu_event',
      appEvent('template_card_menu_event', {
        EventKey: 'mute',
        TaskId: 'unknown-task',
        CardType: 'text_notice',
        ResponseCode: 'rc-2',
      }),
    ],
    [
      'change_contact',
      wecomXml({
        ToUserName: 'ignored',
        FromUserName: 'sys',
        CreateTime: now(),
        MsgType: 'event',
        Event: 'change_contact',
        ChangeType: 'update_user',
        UserID: 'alice',
        Position: 'SRE',
      }),
    ],
  ] as const;

  it.each(FAMILY)('stores a %s callback and answers an empty 200', async (kind, xml) => {
    const before = await events();

    const res = await post(sealCallback(app, xml, { timestamp: now() }));

    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    const added = (await events()).filter((e) => !before.some((b) => b.id === e.id));
    expect(added.map((e) => e.event.kind)).toEqual([kind]);
    // The card's response_code is a single-use credential the gateway keeps to itself.
    expect(JSON.stringify(added)).not.toMatch(/rc-[12]/);
  });

  it('stores the same callback once when WeCom sends it three times', async () => {
    const sealed = sealCallback(app, appEvent('click', { EventKey: 'retry-me' }), { timestamp: now() });
    const before = await events();

    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await post(sealed)).status);

    expect(statuses).toEqual([200, 200, 200]);
    const added = (await events()).filter((e) => !before.some((b) => b.id === e.id));
    expect(added).toHaveLength(1);
  });

  it('keeps a user message apart from an identical-looking one with another MsgId', async () => {
    const before = await events();
    const xml = (id: string) =>
      wecomXml(common('bob', { MsgType: 'text', Content: 'same words', MsgId: id }));

    await post(sealCallback(app, xml('9000000000000000001'), { timestamp: now() }));
    await post(sealCallback(app, xml('9000000000000000002'), { timestamp: now() }));

    const added = (await events()).filter((e) => !before.some((b) => b.id === e.id));
    expect(added.map((e) => e.id).sort()).toEqual(['msg:9000000000000000001', 'msg:9000000000000000002']);
  });

  describe('rejects and stores nothing', () => {
    const xml = () => appEvent('click', { EventKey: `never-stored-${Math.random()}` });
    const CASES: [string, () => Sealed | { query: CallbackQuery; body: string }, number][] = [
      [
        'a forged signature',
        () => {
          const s = sealCallback(app, xml(), { timestamp: now() });
          const real = s.query.msg_signature ?? '';
          // One hex digit changed (always changed: a fixed digit would equal the real one one time in 16).
          const forged = `${real.slice(0, 39)}${real.endsWith('0') ? '1' : '0'}`;
          return { ...s, query: { ...s.query, msg_signature: forged } };
        },
        401,
      ],
      ['a stale timestamp (10 minutes old)', () => sealCallback(app, xml(), { timestamp: now() - 600 }), 401],
      [
        'another corp (receive id ≠ corpId)',
        () => sealCallback({ ...app, corpId: 'wwsomeoneelse0000' }, xml(), { timestamp: now() }),
        401,
      ],
      [
        'another app token',
        () => sealCallback({ ...app, token: 'not-our-token' }, xml(), { timestamp: now() }),
        401,
      ],
      [
        'garbage XML inside the ciphertext',
        () => sealCallback(app, '<xml><MsgType>text', { timestamp: now() }),
        400,
      ],
      [
        'a DOCTYPE (entity expansion) inside the ciphertext',
        () =>
          sealCallback(app, '<!DOCTYPE x [<!ENTITY a "aaaa">]><xml><MsgType>&a;</MsgType></xml>', {
            timestamp: now(),
          }),
        400,
      ],
      ['a ciphertext that is not WeCom’s', () => signedAround(app, 'QUJD'.repeat(11), now()), 401],
      [
        'an oversized body (1 MB)',
        () => {
          const s = sealCallback(app, xml(), { timestamp: now() });
          return {
            ...s,
            body: envelope(s.encrypt).replace('</xml>', `<Pad>${'x'.repeat(1024 * 1024)}</Pad></xml>`),
          };
        },
        413,
      ],
    ];

    const rows = CASES.map(([name, make, status]) => ({ name, make, status }));
    it.each(rows)('$name → $status', async ({ make, status }) => {
      const before = await storedCallbackItems();

      const res = await post(make() as Sealed);

      expect(res.status).toBe(status);
      expect(await storedCallbackItems()).toBe(before);
    });

    it('a correctly sealed callback for an app the gateway does not know → 404', async () => {
      const before = await storedCallbackItems();

      const res = await post(sealCallback(app, xml(), { timestamp: now() }), 'nope');

      expect(res.status).toBe(404);
      expect(await storedCallbackItems()).toBe(before);
    });
  });
});

describe('the official test vector (WeCom docs), on a gateway whose clock reads 2014', () => {
  let vectorGw: TestGateway;
  beforeAll(async () => {
    vectorGw = await startTestGateway({
      startSender: false,
      apps: ['vector'],
      runtime: { callbackClock: () => 1_409_659_700_000 },
      // The published app: its corp, token and EncodingAESKey.
      configure: (config) =>
        Object.assign(config.apps.vector ?? {}, {
          corpId: OFFICIAL.app.corpId,
          callback: { token: OFFICIAL.app.token, encodingAESKey: OFFICIAL.app.encodingAESKey },
        }),
    });
  });
  afterAll(() => vectorGw?.stack.stop());

  it('verifies the URL: echostr → 1616140317555161061', async () => {
    const query = new URLSearchParams(OFFICIAL.verify.query);

    const res = await fetch(`${vectorGw.stack.apiUrl}/v1/wecom/callback/vector?${query}`);

    expect(res.status).toBe(200);
    expect(await res.text()).toBe(OFFICIAL.verify.plaintext);
  });

  it('stores the sample message ("hello" from mycreate, MsgId 4561255354251345929)', async () => {
    const query = new URLSearchParams(OFFICIAL.post.query);

    const res = await fetch(`${vectorGw.stack.apiUrl}/v1/wecom/callback/vector?${query}`, {
      method: 'POST',
      body: envelope(OFFICIAL.post.encrypt, OFFICIAL.app.corpId, '218'),
    });

    expect(res.status).toBe(200);
    const listed = await vectorGw.get('/v1/events?app=vector&since=2000-01-01T00:00:00Z');
    expect(listed.body.events).toEqual([
      expect.objectContaining({
        id: 'msg:4561255354251345929',
        app: 'vector',
        message_id: null,
        event: expect.objectContaining({ kind: 'text', from: 'mycreate', content: 'hello' }),
      }),
    ]);
  });
});

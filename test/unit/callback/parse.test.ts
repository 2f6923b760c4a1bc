import { describe, expect, it } from 'vitest';
import { CallbackXmlError, createCallbackVerifier, parseCallbackMessage } from '#lib/callback/index.js';
import { raw, sealCallback, TEST_APP, wecomXml } from '#test/helpers/wecom-callback.js';

const T = 1_790_000_000;
const head = (from = 'alice') => ({ ToUserName: TEST_APP.corpId, FromUserName: from, CreateTime: T });
const common = { corpId: TEST_APP.corpId, from: 'alice', createTime: T, agentId: '1000002' };

/** Samples shaped like the ones on WeCom's pages (接收消息 path/90239, 事件格式 path/90240). */
const CASES: [string, string, object][] = [
  [
    'text',
    wecomXml({
      ...head(),
      MsgType: 'text',
      Content: 'this is a test',
      MsgId: raw('1234567890123456'),
      AgentID: 1000002,
    }),
    { kind: 'text', msgId: '1234567890123456', content: 'this is a test' },
  ],
  [
    'image',
    wecomXml({
      ...head(),
      MsgType: 'image',
      PicUrl: 'https://p/1.jpg',
      MediaId: 'media_id',
      MsgId: 7,
      AgentID: 1000002,
    }),
    { kind: 'image', msgId: '7', picUrl: 'https://p/1.jpg', mediaId: 'media_id' },
  ],
  [
    'voice',
    wecomXml({ ...head(), MsgType: 'voice', MediaId: 'm', Format: 'amr', MsgId: 8, AgentID: 1000002 }),
    { kind: 'voice', msgId: '8', mediaId: 'm', format: 'amr' },
  ],
  [
    'video',
    wecomXml({ ...head(), MsgType: 'video', MediaId: 'm', ThumbMediaId: 't', MsgId: 9, AgentID: 1000002 }),
    { kind: 'video', msgId: '9', mediaId: 'm', thumbMediaId: 't' },
  ],
  [
    'location',
    wecomXml({
      ...head(),
      MsgType: 'location',
      Location_X: raw('23.134521'),
      Location_Y: raw('113.358803'),
      Scale: raw('20'),
      Label: '位置信息',
      MsgId: 10,
      AgentID: 1000002,
      AppType: 'wxwork',
    }),
    {
      kind: 'location',
      msgId: '10',
      latitude: '23.134521',
      longitude: '113.358803',
      scale: '20',
      label: '位置信息',
    },
  ],
  [
    'link',
    wecomXml({
      ...head(),
      MsgType: 'link',
      Title: 'this is a title！',
      Description: 'this is a description！',
      Url: 'https://work.weixin.qq.com/',
      PicUrl: 'https://p/2.png',
      MsgId: 11,
      AgentID: 1000002,
    }),
    {
      kind: 'link',
      msgId: '11',
      title: 'this is a title！',
      description: 'this is a description！',
      url: 'https://work.weixin.qq.com/',
      picUrl: 'https://p/2.png',
    },
  ],
  [
    'enter_agent',
    wecomXml({ ...head(), MsgType: 'event', Event: 'enter_agent', EventKey: '', AgentID: 1000002 }),
    { kind: 'enter_agent', eventKey: '' },
  ],
  [
    'menu click',
    wecomXml({ ...head(), MsgType: 'event', Event: 'click', EventKey: '#sendmsg#_0_0#', AgentID: 1000002 }),
    { kind: 'menu_click', eventKey: '#sendmsg#_0_0#' },
  ],
  [
    'menu view',
    wecomXml({
      ...head(),
      MsgType: 'event',
      Event: 'view',
      EventKey: 'https://example.com/x',
      AgentID: 1000002,
    }),
    { kind: 'menu_view', eventKey: 'https://example.com/x' },
  ],
  [
    'template_card_event (vote card)',
    wecomXml({
      ...head(),
      MsgType: 'event',
      Event: 'template_card_event',
      EventKey: 'submit',
      TaskId: 'wg_01HZX',
      CardType: 'vote_interaction',
      ResponseCode: 'rc-123',
      AgentID: 1000002,
      SelectedItems: raw(
        '<SelectedItem><QuestionKey><![CDATA[q1]]></QuestionKey><OptionIds><OptionId><![CDATA[o1]]></OptionId>' +
          '<OptionId><![CDATA[o2]]></OptionId></OptionIds></SelectedItem>' +
          '<SelectedItem><QuestionKey><![CDATA[q2]]></QuestionKey><OptionIds><OptionId><![CDATA[o9]]></OptionId>' +
          '</OptionIds></SelectedItem>',
      ),
    }),
    {
      kind: 'template_card_event',
      eventKey: 'submit',
      taskId: 'wg_01HZX',
      cardType: 'vote_interaction',
      responseCode: 'rc-123',
      selectedItems: [
        { questionKey: 'q1', optionIds: ['o1', 'o2'] },
        { questionKey: 'q2', optionIds: ['o9'] },
      ],
    },
  ],
  [
    'template_card_event (button, no selections)',
    wecomXml({
      ...head(),
      MsgType: 'event',
      Event: 'template_card_event',
      EventKey: 'approve',
      TaskId: 't1',
      CardType: 'button_interaction',
      ResponseCode: 'rc',
      AgentID: 1000002,
    }),
    {
      kind: 'template_card_event',
      eventKey: 'approve',
      taskId: 't1',
      cardType: 'button_interaction',
      responseCode: 'rc',
      selectedItems: [],
    },
  ],
  [
    'template_card_menu_event',
    wecomXml({
      ...head(),
      MsgType: 'event',
      Event: 'template_card_menu_event',
      EventKey: 'action_key1',
      TaskId: 't2',
      CardType: 'text_notice',
      ResponseCode: 'rc2',
      AgentID: 1000002,
    }),
    {
      kind: 'template_card_menu_event',
      eventKey: 'action_key1',
      taskId: 't2',
      cardType: 'text_notice',
      responseCode: 'rc2',
    },
  ],
];

describe('parseCallbackMessage', () => {
  it.each(CASES)(
    'normalises a %s callback end to end (encrypted, signed, opened, parsed)',
    (_name, xml, expected) => {
      const sealed = sealCallback(TEST_APP, xml, { timestamp: T });
      const verifier = createCallbackVerifier(TEST_APP, { now: () => T * 1000 });
      expect(verifier.receive(sealed.query, sealed.body)).toEqual({ ...common, ...expected });
    },
  );

  it('keeps a contact change (update_user with extended attributes) exactly as received', () => {
    const xml = wecomXml({
      ...head('sys'),
      MsgType: 'event',
      Event: 'change_contact',
      ChangeType: 'update_user',
      UserID: 'zhangsan',
      Department: raw('1,2,3'),
      Mobile: '13800000000',
      ExtAttr: raw(
        '<Item><Name><![CDATA[爱好]]></Name><Type>0</Type><Text><Value><![CDATA[旅游]]></Value></Text></Item>',
      ),
    });
    expect(parseCallbackMessage(xml)).toEqual({
      kind: 'change_contact',
      corpId: TEST_APP.corpId,
      from: 'sys',
      createTime: T,
      changeType: 'update_user',
      fields: {
        ToUserName: TEST_APP.corpId,
        FromUserName: 'sys',
        CreateTime: String(T),
        MsgType: 'event',
        Event: 'change_contact',
        ChangeType: 'update_user',
        UserID: 'zhangsan',
        Department: '1,2,3',
        Mobile: '13800000000',
        ExtAttr: { Item: [{ Name: '爱好', Type: '0', Text: { Value: '旅游' } }] },
      },
    });
  });

  it('keeps other events and unknown message types as `unknown`, fields as received', () => {
    const location = wecomXml({
      ...head(),
      MsgType: 'event',
      Event: 'LOCATION',
      Latitude: raw('23.1'),
      Longitude: raw('113.3'),
    });
    expect(parseCallbackMessage(location)).toMatchObject({
      kind: 'unknown',
      msgType: 'event',
      event: 'LOCATION',
      fields: { Latitude: '23.1', Longitude: '113.3' },
    });
    const file = wecomXml({ ...head(), MsgType: 'file', MediaId: 'm', MsgId: 5 });
    expect(parseCallbackMessage(file)).toMatchObject({
      kind: 'unknown',
      msgType: 'file',
      fields: { MsgId: '5' },
    });
  });

  it('keeps a known kind with an unexpected shape as `unknown` instead of losing or mangling it', () => {
    const nested = wecomXml({ ...head(), MsgType: 'text', Content: raw('<b>x</b>'), MsgId: 1 });
    expect(parseCallbackMessage(nested)).toMatchObject({ kind: 'unknown', fields: { Content: { b: 'x' } } });
    const noId = wecomXml({ ...head(), MsgType: 'text', Content: 'x' });
    expect(parseCallbackMessage(noId).kind).toBe('unknown');
    const badItems = wecomXml({
      ...head(),
      MsgType: 'event',
      Event: 'template_card_event',
      SelectedItems: 'x',
    });
    expect(parseCallbackMessage(badItems).kind).toBe('unknown');
  });

  it('keeps a 64-bit MsgId to the last digit', () => {
    const xml = wecomXml({ ...head(), MsgType: 'text', Content: 'x', MsgId: raw('18446744073709551615') });
    expect(parseCallbackMessage(xml)).toMatchObject({ msgId: '18446744073709551615' });
  });

  it('keeps CDATA text exactly (spaces, markup, ampersands) and expands no entity', () => {
    const xml = wecomXml({ ...head(), MsgType: 'text', Content: '  a < b && <!DOCTYPE html> ', MsgId: 1 });
    expect(parseCallbackMessage(xml)).toMatchObject({ content: '  a < b && <!DOCTYPE html> ' });
    const escaped = wecomXml({ ...head(), MsgType: 'text', Content: raw('a &amp; b &#60;'), MsgId: 1 });
    expect(parseCallbackMessage(escaped)).toMatchObject({ content: 'a &amp; b &#60;' });
  });

  it.each([
    ['not well-formed', '<xml><MsgType>text</MsgType>'],
    ['two roots', `<xml><MsgType>text</MsgType></xml><xml></xml>`],
    ['another root element', `<msg><MsgType>text</MsgType><CreateTime>${T}</CreateTime></msg>`],
    ['no MsgType', `<xml><CreateTime>${T}</CreateTime></xml>`],
    ['no CreateTime', '<xml><MsgType>text</MsgType></xml>'],
    [
      'a prototype-polluting tag',
      `<xml><MsgType>x</MsgType><CreateTime>${T}</CreateTime><__proto__>1</__proto__></xml>`,
    ],
    [
      'deep nesting',
      `<xml><MsgType>x</MsgType><CreateTime>${T}</CreateTime>${'<a>'.repeat(40)}${'</a>'.repeat(40)}</xml>`,
    ],
    ['a comment', `<xml><!-- hi --><MsgType>x</MsgType><CreateTime>${T}</CreateTime></xml>`],
    [
      'a billion-laughs DOCTYPE',
      `<!DOCTYPE xml [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;">]><xml>&b;</xml>`,
    ],
  ])('refuses a message with %s as bad_xml', (_what, xml) => {
    let err: unknown;
    try {
      parseCallbackMessage(xml);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CallbackXmlError);
    expect((err as CallbackXmlError).part).toBe('message');
  });
});

import { describe, expect, it } from 'vitest';
import { createCallbackVerifier, dedupeKey, parseCallbackMessage } from '#lib/callback/index.js';
import { raw, sealCallback, TEST_APP, wecomXml } from '#test/helpers/wecom-callback.js';

const T = 1_790_000_000;
const key = (fields: Parameters<typeof wecomXml>[0]) =>
  dedupeKey(
    parseCallbackMessage(
      wecomXml({ ToUserName: TEST_APP.corpId, FromUserName: 'alice', CreateTime: T, ...fields }),
    ),
  );
const card = (fields: Parameters<typeof wecomXml>[0] = {}) =>
  key({
    MsgType: 'event',
    Event: 'template_card_event',
    EventKey: 'ok',
    TaskId: 't1',
    CardType: 'button_interaction',
    ...fields,
  });

describe('dedupeKey', () => {
  it('gives WeCom’s three retries of one callback one key, though each is encrypted and signed afresh', () => {
    const xml = wecomXml({
      FromUserName: 'alice',
      CreateTime: T,
      MsgType: 'event',
      Event: 'template_card_event',
      TaskId: 't1',
      EventKey: 'ok',
      ResponseCode: 'rc',
    });
    const verifier = createCallbackVerifier(TEST_APP, { now: () => (T + 20) * 1000 });
    const keys = [0, 5, 10].map((delay) => {
      const sealed = sealCallback(TEST_APP, xml, { timestamp: T + delay });
      return dedupeKey(verifier.receive(sealed.query, sealed.body));
    });
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^evt:[A-Za-z0-9_-]{43}$/);
  });

  it('keys a message by its MsgId alone', () => {
    expect(key({ MsgType: 'text', Content: 'a', MsgId: raw('4561255354251345929') })).toBe(
      'msg:4561255354251345929',
    );
    expect(key({ MsgType: 'image', MsgId: 7, FromUserName: 'bob', CreateTime: T + 1 })).toBe('msg:7');
    expect(key({ MsgType: 'file', MsgId: 8 })).toBe('msg:8'); // an unknown type with a MsgId
  });

  it('tells apart events of one member in one second by what happened', () => {
    const keys = [
      card(),
      card({ EventKey: 'no' }),
      card({ TaskId: 't2' }),
      card({ Event: 'template_card_menu_event' }),
      card({
        SelectedItems: raw(
          '<SelectedItem><QuestionKey>q</QuestionKey><OptionIds><OptionId>a</OptionId></OptionIds></SelectedItem>',
        ),
      }),
      key({ MsgType: 'event', Event: 'click', EventKey: 'a' }),
      key({ MsgType: 'event', Event: 'click', EventKey: 'b' }),
      key({ MsgType: 'event', Event: 'view', EventKey: 'a' }),
      key({ MsgType: 'event', Event: 'enter_agent', EventKey: '' }),
      key({ MsgType: 'event', Event: 'LOCATION' }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('tells apart contact changes of different users in the same second', () => {
    const change = (userId: string) =>
      key({
        FromUserName: 'sys',
        MsgType: 'event',
        Event: 'change_contact',
        ChangeType: 'update_user',
        UserID: userId,
      });
    expect(change('a')).not.toBe(change('b'));
    expect(change('a')).toBe(change('a'));
  });

  it('ignores the single-use ResponseCode (WeCom does not say a retry keeps it)', () => {
    expect(card({ ResponseCode: 'r1' })).toBe(card({ ResponseCode: 'r2' }));
  });

  it('separates the same event at another second or from another member', () => {
    expect(card()).not.toBe(card({ CreateTime: T + 1 }));
    expect(card()).not.toBe(card({ FromUserName: 'bob' }));
  });

  it('stays short whatever the EventKey holds (DynamoDB sort keys end at 1024 bytes)', () => {
    expect(card({ EventKey: 'k'.repeat(1024) }).length).toBeLessThan(64);
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { WecomSimulator } from '#local/wecom-sim/index.js';
import { APP, getToken, send, startTestSimulator, textMessage } from '#test/helpers/sim-fixtures.js';

const ids = (n: number, prefix = 'u'): string =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}`).join('|');
const article = { title: 'Release 1.2', description: 'notes', url: 'https://example.com/r' };

describe('WeCom simulator › message/send validation', () => {
  let sim: WecomSimulator;
  let token: string;

  beforeAll(async () => {
    sim = await startTestSimulator({
      limits: { perAppPerMinute: 1_000_000, perAppPerHour: 1_000_000, perMemberPerMinute: 1_000_000 },
    });
  });
  beforeEach(async () => {
    sim.reset();
    token = await getToken(sim);
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('accepts a text message, answers a msgid and puts it in the inbox', async () => {
    const answer = await send(sim, token, textMessage({ touser: 'alice|Bob' }));

    expect(answer).toMatchObject({ errcode: 0, errmsg: 'ok' });
    expect(typeof answer.msgid).toBe('string');
    expect(answer).not.toHaveProperty('invaliduser');
    expect(sim.inbox('alice')).toEqual([
      expect.objectContaining({
        msgid: answer.msgid,
        agentId: APP.agentId,
        msgtype: 'text',
        recalled: false,
      }),
    ]);
    expect(sim.inbox('bob')[0]?.payload).toEqual({ content: 'disk almost full' });
  });

  it('answers 47001 for a body that is not JSON', async () => {
    expect((await send(sim, token, '{"touser":')).errcode).toBe(47001);
  });

  it('answers 40008 for an unknown msgtype', async () => {
    expect((await send(sim, token, textMessage({ msgtype: 'sms' }))).errcode).toBe(40008);
  });

  it('answers 40056 when agentid is missing', async () => {
    expect((await send(sim, token, textMessage({ agentid: undefined }))).errcode).toBe(40056);
  });

  it('answers 44004 for empty text content', async () => {
    expect((await send(sim, token, textMessage({ text: { content: '' } }))).errcode).toBe(44004);
  });

  it('measures text content in UTF-8 bytes: 682 CJK characters fit, 683 do not', async () => {
    // 682 × 3 bytes = 2046 ≤ 2048 < 2049 = 683 × 3 bytes.
    const fits = await send(sim, token, textMessage({ text: { content: '警'.repeat(682) } }));
    const tooLong = await send(sim, token, textMessage({ text: { content: '警'.repeat(683) } }));

    expect(fits.errcode).toBe(0);
    expect(tooLong.errcode).toBe(45002);
  });

  it('limits markdown content to 2048 bytes', async () => {
    const body = { ...textMessage({ msgtype: 'markdown' }), markdown: { content: 'x'.repeat(2049) } };

    expect((await send(sim, token, body)).errcode).toBe(45002);
  });

  it('answers 40007 for an image without media_id', async () => {
    expect((await send(sim, token, textMessage({ msgtype: 'image', image: {} }))).errcode).toBe(40007);
  });

  it('enforces textcard title, description and btntxt limits', async () => {
    const card = { title: 't', description: 'd', url: 'https://example.com' };
    const base = textMessage({ msgtype: 'textcard' });

    expect((await send(sim, token, { ...base, textcard: card })).errcode).toBe(0);
    expect((await send(sim, token, { ...base, textcard: { ...card, title: 'x'.repeat(129) } })).errcode).toBe(
      45002,
    );
    expect(
      (await send(sim, token, { ...base, textcard: { ...card, description: 'x'.repeat(513) } })).errcode,
    ).toBe(45002);
    expect((await send(sim, token, { ...base, textcard: { ...card, btntxt: '查看详情页' } })).errcode).toBe(
      45002,
    );
    expect((await send(sim, token, { ...base, textcard: { title: 't' } })).errcode).toBe(40035);
  });

  it('accepts 1 to 8 news articles and answers 45008 outside that range', async () => {
    const base = textMessage({ msgtype: 'news' });

    expect((await send(sim, token, { ...base, news: { articles: Array(8).fill(article) } })).errcode).toBe(0);
    expect((await send(sim, token, { ...base, news: { articles: Array(9).fill(article) } })).errcode).toBe(
      45008,
    );
    expect((await send(sim, token, { ...base, news: { articles: [] } })).errcode).toBe(45008);
  });

  it('requires thumb_media_id and content in mpnews articles', async () => {
    const base = textMessage({ msgtype: 'mpnews' });
    const mp = { title: 't', thumb_media_id: 'm1', content: '<p>hi</p>' };

    expect((await send(sim, token, { ...base, mpnews: { articles: [mp] } })).errcode).toBe(0);
    expect((await send(sim, token, { ...base, mpnews: { articles: [{ title: 't' }] } })).errcode).toBe(40035);
  });

  it('allows at most 10 miniprogram_notice content items', async () => {
    const item = { key: 'k', value: 'v' };
    const notice = (n: number) => ({ appid: 'wx1', title: 'Meeting', content_item: Array(n).fill(item) });
    const base = textMessage({ msgtype: 'miniprogram_notice' });

    expect((await send(sim, token, { ...base, miniprogram_notice: notice(10) })).errcode).toBe(0);
    expect((await send(sim, token, { ...base, miniprogram_notice: notice(11) })).errcode).toBe(40035);
  });

  it('returns a response_code for interactive template cards only', async () => {
    const base = textMessage({ msgtype: 'template_card' });
    const interactive = await send(sim, token, {
      ...base,
      template_card: { card_type: 'button_interaction', task_id: 't1' },
    });
    const plain = await send(sim, token, { ...base, template_card: { card_type: 'text_notice' } });

    expect(typeof interactive.response_code).toBe('string');
    expect(plain).not.toHaveProperty('response_code');
  });

  it('answers 40063 for a card that calls back but has no task_id (interaction, or action_menu)', async () => {
    const base = textMessage({ msgtype: 'template_card' });
    const menu = { desc: 'more', action_list: [{ text: 'mute', key: 'mute' }] };

    const interactive = await send(sim, token, { ...base, template_card: { card_type: 'vote_interaction' } });
    const withMenu = await send(sim, token, {
      ...base,
      template_card: { card_type: 'text_notice', action_menu: menu },
    });

    expect([interactive.errcode, withMenu.errcode]).toEqual([40063, 40063]);
  });

  it('accepts 1000 users in touser and rejects 1001', async () => {
    expect((await send(sim, token, textMessage({ touser: ids(1000) }))).errcode).toBe(0);
    expect((await send(sim, token, textMessage({ touser: ids(1001) }))).errcode).toBe(40032);
  });

  it('rejects more than 100 parties or tags', async () => {
    expect((await send(sim, token, textMessage({ touser: undefined, toparty: ids(101, '') }))).errcode).toBe(
      40035,
    );
    expect((await send(sim, token, textMessage({ touser: undefined, totag: ids(101, '') }))).errcode).toBe(
      40035,
    );
  });

  it('answers 81013 when no recipient is given', async () => {
    expect((await send(sim, token, textMessage({ touser: '' }))).errcode).toBe(81013);
  });

  it('rejects a duplicate_check_interval above 14400 seconds', async () => {
    const body = textMessage({ enable_duplicate_check: 1, duplicate_check_interval: 14_401 });

    expect((await send(sim, token, body)).errcode).toBe(40035);
  });
});

describe('WeCom simulator › recipients against a directory', () => {
  let sim: WecomSimulator;
  let token: string;

  beforeAll(async () => {
    sim = await startTestSimulator({
      directory: {
        users: ['alice', 'bob', 'carol'],
        parties: ['1', '2'],
        tags: ['10'],
        unlicensedUsers: ['dave'],
        partyMembers: { '2': ['carol'] },
      },
    });
  });
  beforeEach(async () => {
    sim.reset();
    token = await getToken(sim);
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('reports unknown ids in lower case, like WeCom, and still delivers to the valid ones', async () => {
    const answer = await send(
      sim,
      token,
      textMessage({ touser: 'Alice|Mallory|dave', toparty: '2|9', totag: '99' }),
    );

    expect(answer).toMatchObject({
      errcode: 0,
      invaliduser: 'mallory',
      invalidparty: '9',
      invalidtag: '99',
      unlicenseduser: 'dave',
    });
    expect(sim.inbox('alice')).toHaveLength(1);
    expect(sim.inbox('carol')).toHaveLength(1);
    expect(sim.inbox('dave')).toHaveLength(0);
  });

  it('answers 81013 with the invalid ids when no recipient is valid', async () => {
    const answer = await send(sim, token, textMessage({ touser: 'mallory|eve' }));

    expect(answer).toMatchObject({ errcode: 81013, invaliduser: 'mallory|eve' });
    expect(answer).not.toHaveProperty('msgid');
  });

  it('delivers @all to every licensed directory member', async () => {
    expect((await send(sim, token, textMessage({ touser: '@all' }))).errcode).toBe(0);

    expect(['alice', 'bob', 'carol', 'dave'].map((u) => sim.inbox(u).length)).toEqual([1, 1, 1, 0]);
    expect(sim.stats().delivered).toBe(3);
  });
});

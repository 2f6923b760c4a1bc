import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type RobotMessageRequest, type RobotSettings, validateMessageRequest } from '#lib/messages/index.js';
import { cardBody } from '#test/helpers/messages-factories.js';

/** A 1×1 PNG, as a client would send it. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const AMR = Buffer.concat([Buffer.from('#!AMR\n'), Buffer.alloc(64, 1)]);
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

const robot = (msgtype: string, object: unknown, extra: Record<string, unknown> = {}) => ({
  robot: 'oncall',
  msgtype,
  [msgtype]: object,
  ...extra,
});

function valid(body: unknown, settings?: RobotSettings): RobotMessageRequest {
  const result = validateMessageRequest(body, { robot: () => settings });
  if (!result.ok) expect.fail(JSON.stringify(result.issues));
  if (result.value.robot === undefined) expect.fail('expected a robot message');
  return result.value;
}

function issues(body: unknown) {
  const result = validateMessageRequest(body);
  if (result.ok) expect.fail('expected issues');
  return result.issues;
}

describe("a robot's message", () => {
  it('takes text with mentions by userid and by mobile, @all included', () => {
    const req = valid(
      robot('text', {
        content: 'db-1 down',
        mentioned_list: ['wangqing', '@all'],
        mentioned_mobile_list: ['13800001111'],
      }),
    );

    expect(req).toMatchObject({ robot: 'oncall', priority: 'normal', msgtype: 'text' });
    expect(req.content.mentioned_list).toEqual(['wangqing', '@all']);
  });

  it("allows markdown up to the robot's 4,096 bytes, twice an app's", () => {
    expect(valid(robot('markdown', { content: 'a'.repeat(4096) })).msgtype).toBe('markdown');
    expect(issues(robot('markdown', { content: 'a'.repeat(4097) }))).toEqual([
      {
        field: 'markdown.content',
        message: '4097 bytes, max 4096; send "split": true to have it delivered in parts',
      },
    ]);
  });

  it('takes markdown_v2 with a table, and refuses colour and mentions it would show as text', () => {
    const table = '| host | disk |\n| :-- | --: |\n| db-1 | 91% |';

    expect(valid(robot('markdown_v2', { content: table })).content).toEqual({ content: table });
    expect(issues(robot('markdown_v2', { content: '<font color="warning">hot</font> <@zhangsan>' }))).toEqual(
      [
        {
          field: 'markdown_v2.content',
          message: 'markdown_v2 shows no <font color>: send msgtype markdown for colour',
        },
      ],
    );
  });

  it("fills an image's md5 from its bytes, and refuses one that does not match", () => {
    const base64 = PNG.toString('base64');

    expect(valid(robot('image', { base64 })).content).toEqual({ base64, md5: md5(PNG) });
    expect(issues(robot('image', { base64, md5: '0'.repeat(32) }))).toEqual([
      { field: 'image.md5', message: 'does not match the image: the md5 of its raw bytes differs' },
    ]);
  });

  it('refuses an image that is not a JPG or PNG', () => {
    expect(issues(robot('image', { base64: Buffer.from('GIF89a-not-allowed').toString('base64') }))).toEqual([
      { field: 'image.base64', message: 'must be a JPG or PNG image' },
    ]);
  });

  it('takes news of 1-8 articles, each with a url', () => {
    const article = { title: '中秋节礼品领取', url: 'https://work.weixin.qq.com' };

    expect(valid(robot('news', { articles: [article] })).msgtype).toBe('news');
    expect(issues(robot('news', { articles: Array(9).fill(article) }))).toEqual([
      { field: 'news.articles', message: '9 articles, max 8' },
    ]);
    expect(issues(robot('news', { articles: [{ title: 't' }] }))).toEqual([
      { field: 'news.articles[0].url', message: 'required' },
    ]);
  });

  it('takes a file as bytes and a name, and a voice only as AMR', () => {
    const file = { base64: Buffer.from('report line 1\n').toString('base64'), filename: 'report.txt' };

    expect(valid(robot('file', file)).content).toEqual(file);
    expect(valid(robot('voice', { base64: AMR.toString('base64') })).msgtype).toBe('voice');
    expect(issues(robot('voice', { base64: PNG.toString('base64') }))).toEqual([
      { field: 'voice.base64', message: 'must be an AMR recording' },
    ]);
  });

  it('takes the two notice cards, and names an interaction card as an app’s', () => {
    const { app: _a, touser: _t, ...card } = cardBody('text_notice');
    const { task_id: _id, action_menu: _menu, ...template } = card.template_card as Record<string, unknown>;
    const notice = { ...card, template_card: template };
    const { app: _b, touser: _u, ...button } = cardBody('button_interaction');

    expect(valid({ ...notice, robot: 'oncall' }).msgtype).toBe('template_card');
    expect(issues({ ...button, robot: 'oncall' })[0]).toEqual({
      field: 'template_card.card_type',
      message:
        'not for a robot: template_card.card_type is for apps (card_type button_interaction; robots take text_notice, news_notice)',
    });
  });
});

describe('the wrong channel', () => {
  it("names an app's recipients and flags on a robot, and the channel that takes them", () => {
    const body = robot('text', { content: 'x' }, { touser: 'zhangsan', enable_duplicate_check: 1 });

    expect(issues(body)).toEqual([
      {
        field: 'touser',
        message:
          'not for a robot: touser is for apps (a robot posts to its group chat; mention people with text.mentioned_list or <@userid> in markdown)',
      },
      {
        field: 'enable_duplicate_check',
        message:
          "not for a robot: enable_duplicate_check is for apps (a robot's webhook has no duplicate check)",
      },
    ]);
  });

  it('names an app-only msgtype on a robot, and markdown_v2 on an app', () => {
    expect(issues(robot('textcard', { title: 't', description: 'd', url: 'https://x.y' }))[0]).toEqual({
      field: 'msgtype',
      message:
        'not for a robot: msgtype is for apps (msgtype textcard; robots take text, markdown, markdown_v2, image, news, file, voice, template_card)',
    });
    expect(
      issues({ app: 'ops', touser: 'a', msgtype: 'markdown_v2', markdown_v2: { content: 'x' } })[0],
    ).toEqual({
      field: 'msgtype',
      message: 'not for an app: msgtype is for robots (msgtype markdown_v2; apps take markdown)',
    });
  });

  it('refuses a body that names both an app and a robot', () => {
    expect(issues({ ...robot('text', { content: 'x' }), app: 'ops', touser: 'a' })).toEqual([
      {
        field: 'robot',
        message: 'give app (a message to members) or robot (a post to its group chat), not both',
      },
    ]);
  });
});

describe("a robot's settings", () => {
  it('mention its default users in text and markdown that name nobody, never in markdown_v2', () => {
    const settings = { mentions: { users: ['zhangsan', '@all'], mobiles: ['13800001111'] } };

    expect(valid(robot('text', { content: 'x' }), settings).content).toEqual({
      content: 'x',
      mentioned_list: ['zhangsan', '@all'],
      mentioned_mobile_list: ['13800001111'],
    });
    expect(valid(robot('markdown', { content: '**x**' }), settings).content).toEqual({
      content: '**x**\n<@zhangsan>',
    });
    expect(valid(robot('markdown_v2', { content: 'x' }), settings).content).toEqual({ content: 'x' });
    expect(valid(robot('text', { content: 'x', mentioned_list: ['lisi'] }), settings).content).toEqual({
      content: 'x',
      mentioned_list: ['lisi'],
    });
  });

  it('split long markdown_v2 at the robot’s limit, keeping a table whole in each part', () => {
    const rows = Array.from({ length: 200 }, (_, i) => `| host-${i} | ${'x'.repeat(20)} |`).join('\n');
    const content = `| host | note |\n| --- | --- |\n${rows}`;

    const req = valid(robot('markdown_v2', { content }, { split: true }));

    expect(req.segments?.length).toBeGreaterThan(1);
    for (const segment of req.segments ?? []) {
      const part = String(segment.content.content);
      expect(Buffer.byteLength(part)).toBeLessThanOrEqual(4096);
      expect(part).toContain('| host | note |\n| --- | --- |');
    }
    expect(req.content).toEqual({ content });
  });
});

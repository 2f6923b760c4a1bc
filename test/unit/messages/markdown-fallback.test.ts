import { describe, expect, it } from 'vitest';
import { utf8Bytes } from '#lib/messages/fit.js';
import { validateMessageRequest } from '#lib/messages/index.js';
import { convertMarkdown, markdownToText, markdownToTextCard } from '#lib/messages/markdown-fallback.js';

/** The converted message must pass the same validation as a user's POST /v1/messages. */
function expectValid(message: { msgtype: string } & Record<string, unknown>) {
  const result = validateMessageRequest({ app: 'ops', touser: 'zhangsan', ...message });
  expect(result.ok ? [] : result.issues).toEqual([]);
}

// The example of WeCom's markdown message doc (发送应用消息 › markdown消息), as senders write it.
const WECOM_EXAMPLE = [
  '您的会议室已经预定，稍后会同步到`邮箱`',
  '>**事项详情**',
  '>事　项：<font color="info">开会</font>',
  '>组织者：@miglioguan',
  '>',
  '>会议室：<font color="info">广州TIT 1楼 301</font>',
  '>日　期：<font color="warning">2018年5月18日</font>',
  '>时　间：<font color="comment">上午9:00-11:00</font>',
  '>',
  '>请准时参加会议。',
  '>',
  '>如需修改会议信息，请点击：[修改会议信息](https://work.weixin.qq.com)',
].join('\n');

describe('markdownToText', () => {
  it("converts WeCom's own markdown example to readable text with the link kept as <a href>", () => {
    expect(markdownToText(WECOM_EXAMPLE)).toMatchInlineSnapshot(`
      "您的会议室已经预定，稍后会同步到邮箱
      | 事项详情
      | 事　项：开会
      | 组织者：@miglioguan
      |
      | 会议室：广州TIT 1楼 301
      | 日　期：2018年5月18日
      | 时　间：上午9:00-11:00
      |
      | 请准时参加会议。
      |
      | 如需修改会议信息，请点击：<a href="https://work.weixin.qq.com">修改会议信息</a>"
    `);
  });

  it('writes links as "title (url)" when asked, and a bare url once when title and url are the same', () => {
    const out = markdownToText('[docs](https://d.example/x) and [https://d.example/y](https://d.example/y)', {
      links: 'plain',
    });

    expect(out).toBe('docs (https://d.example/x) and https://d.example/y');
  });

  it('drops heading, bold, code and colour markers but keeps their text', () => {
    const out = markdownToText('# Build **failed**\n`main` is <font color="warning">red</font> \\*now\\*');

    expect(out).toBe('Build failed\nmain is red *now*');
  });

  it('turns lists into bullets, keeps numbering, and drops code fences but not their content', () => {
    const out = markdownToText('- one\n* two\n3. three\n```\nraw **code**\n```\n---');

    expect(out).toBe('• one\n• two\n3. three\nraw **code**\n——————');
  });

  it('keeps an image as its alt text with its link', () => {
    expect(markdownToText('![chart](https://g.example/p.png)', { links: 'plain' })).toBe(
      'chart (https://g.example/p.png)',
    );
  });

  it('collapses runs of blank lines and trims blank lines at the ends', () => {
    expect(markdownToText('\n\n# a\n\n\n\nb\n\n')).toBe('a\n\nb');
  });

  it('stays within 2048 bytes for long CJK input, dropping whole lines with a count', () => {
    const md = Array.from(
      { length: 120 },
      (_, i) => `> 第${i}台主机：<font color="warning">磁盘已满</font>`,
    ).join('\n');

    const out = markdownToText(md);

    expect(utf8Bytes(out)).toBeLessThanOrEqual(2048);
    expect(out).toMatch(/\n… \d+ more lines$/);
    expect(out.split('\n')[0]).toBe('| 第0台主机：磁盘已满');
    expectValid({ msgtype: 'text', text: { content: out } });
  });

  it('never splits an <a href> tag when cutting', () => {
    const md = Array.from(
      { length: 60 },
      (_, i) => `[host ${i}](https://grafana.example/d/${'x'.repeat(20)}/${i})`,
    ).join('\n');

    const out = markdownToText(md);

    for (const l of out.split('\n').slice(0, -1)) expect(l).toMatch(/^<a href="[^"]+">host \d+<\/a>$/);
  });
});

describe('markdownToTextCard', () => {
  it('takes the title from the first heading, the url from the first link, and plain text as description', () => {
    const out = markdownToTextCard(
      '# Build failed\nmain @ 1a2b3c by **alice**\n[Open run](https://ci.example/runs/7) · [Logs](https://ci.example/l)',
      { btntxt: '查看' },
    );

    expect(out).toEqual({
      msgtype: 'textcard',
      textcard: {
        title: 'Build failed',
        description: 'main @ 1a2b3c by alice\nOpen run · Logs',
        url: 'https://ci.example/runs/7',
        btntxt: '查看',
      },
    });
    expectValid(out);
  });

  it('uses the first line as title when there is no heading', () => {
    const out = markdownToTextCard('Deploy done\n[Open](https://d.example)');

    expect(out).toMatchObject({ textcard: { title: 'Deploy done', description: 'Open' } });
  });

  it('falls back to text when there is no http(s) link to click', () => {
    const out = convertMarkdown({ content: '# Note\nno links here, only [a relative one](/x)' }, 'textcard');

    expect(out).toEqual({
      msgtype: 'text',
      text: { content: 'Note\nno links here, only <a href="/x">a relative one</a>' },
    });
  });

  it('respects the textcard byte limits for long CJK titles and descriptions, and btntxt characters', () => {
    const md = `# ${'数据库主从延迟告警'.repeat(10)}\n${'描述文字。'.repeat(200)}\n[详情](https://x.example)`;

    const out = markdownToTextCard(md, { btntxt: '查看详情页面' });

    if (out.msgtype !== 'textcard') throw new Error('expected a textcard');
    expect(utf8Bytes(out.textcard.title)).toBeLessThanOrEqual(128);
    expect(utf8Bytes(out.textcard.description)).toBeLessThanOrEqual(512);
    expect(out.textcard.btntxt).toBe('查看详情');
    expectValid(out);
  });
});

describe('validateMessageRequest: markdown_fallback', () => {
  const body = (extra: Record<string, unknown> = {}) => ({
    app: 'ops',
    touser: 'zhangsan',
    msgtype: 'markdown',
    markdown: { content: '# Deploy done\nv1.2 is live: [release notes](https://r.example/1.2)' },
    ...extra,
  });
  const appDefault = (mode: 'text' | 'textcard') => ({
    markdownFallback: (app: string) => (app === 'ops' ? mode : undefined),
  });

  it("converts markdown with the app's default mode", () => {
    const result = validateMessageRequest(body(), appDefault('text'));

    expect(result.ok && { msgtype: result.value.msgtype, content: result.value.content }).toEqual({
      msgtype: 'text',
      content: { content: 'Deploy done\nv1.2 is live: <a href="https://r.example/1.2">release notes</a>' },
    });
  });

  it("lets the message's markdown_fallback override the app: textcard, or none to keep markdown", () => {
    const card = validateMessageRequest(body({ markdown_fallback: 'textcard' }), appDefault('text'));
    const kept = validateMessageRequest(body({ markdown_fallback: 'none' }), appDefault('text'));

    expect(card.ok && card.value.msgtype).toBe('textcard');
    expect(card.ok && card.value.content).toEqual({
      title: 'Deploy done',
      description: 'v1.2 is live: release notes',
      url: 'https://r.example/1.2',
    });
    expect(kept.ok && kept.value.msgtype).toBe('markdown');
  });

  it('leaves markdown alone without any fallback, and other msgtypes alone whatever is set', () => {
    const plain = validateMessageRequest(body());
    const text = validateMessageRequest(
      { app: 'ops', touser: 'a', msgtype: 'text', text: { content: '**x**' }, markdown_fallback: 'textcard' },
      appDefault('textcard'),
    );

    expect(plain.ok && plain.value.msgtype).toBe('markdown');
    expect(text.ok && text.value).toMatchObject({ msgtype: 'text', content: { content: '**x**' } });
  });

  it('rejects an unknown mode, naming the field', () => {
    const result = validateMessageRequest(body({ markdown_fallback: 'html' }));

    expect(result.ok ? [] : result.issues).toEqual([
      { field: 'markdown_fallback', message: 'must be one of text, textcard, none' },
    ]);
  });
});

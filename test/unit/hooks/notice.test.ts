import { describe, expect, it } from 'vitest';
import { type Notice, renderNotice } from '#lib/hooks/index.js';
import { line, text, utf8Bytes, validateMessageRequest } from '#lib/messages/index.js';

const notice = (over: Partial<Notice> = {}): Notice => ({
  source: 'Test',
  tone: 'alert',
  badge: 'FAILED',
  title: '数据库主从复制延迟超过阈值，请立即处理以免影响线上业务的读写一致性和可用性'.repeat(2),
  summary: 'summary',
  fields: Array.from({ length: 9 }, (_, i) => ({
    key: `Field number ${i}`,
    value: `value ${i} `.repeat(10),
  })),
  items: Array.from({ length: 40 }, (_, i) => [
    line('paragraph', [text(`第${i}项`, { bold: true })]),
    line('paragraph', [text('细节'.repeat(20))]),
  ]),
  itemNoun: 'items',
  links: Array.from({ length: 6 }, (_, i) => ({ text: `Link ${i}`, url: `https://x.example/${i}` })),
  ...over,
});

function valid(rendered: ReturnType<typeof renderNotice>) {
  const result = validateMessageRequest({ app: 'ops', touser: 'a', ...rendered });
  expect(result.ok ? [] : result.issues).toEqual([]);
  return rendered;
}

describe('renderNotice', () => {
  it('keeps a template card within WeCom list limits: 6 horizontal items, 3 jumps, the first link as card action', () => {
    const out = valid(renderNotice(notice(), 'template_card'));
    if (out.msgtype !== 'template_card') throw new Error('expected a card');
    const card = out.template_card as Record<string, { length?: number; title?: string }>;

    expect(card.horizontal_content_list?.length).toBe(6);
    expect(card.jump_list?.length).toBe(3);
    expect(card.card_action).toEqual({ type: 1, url: 'https://x.example/0' });
    expect([...String(card.main_title?.title)]).toHaveLength(64);
    expect(String(card.main_title?.title).endsWith('…')).toBe(true);
    expect(utf8Bytes(String(card.sub_title_text))).toBeLessThanOrEqual(336);
    expect(String(card.sub_title_text)).toMatch(/… \d+ more items$/);
  });

  it('keeps markdown, text and textcard within their byte limits for long CJK content', () => {
    const md = valid(renderNotice(notice(), 'markdown'));
    const tx = valid(renderNotice(notice(), 'text'));
    const tc = valid(renderNotice(notice(), 'textcard'));

    if (md.msgtype !== 'markdown' || tx.msgtype !== 'text' || tc.msgtype !== 'textcard')
      throw new Error('type');
    expect(utf8Bytes(md.markdown.content)).toBeLessThanOrEqual(2048);
    expect(utf8Bytes(tx.text.content)).toBeLessThanOrEqual(2048);
    expect(utf8Bytes(tc.textcard.title)).toBeLessThanOrEqual(128);
    expect(utf8Bytes(tc.textcard.description)).toBeLessThanOrEqual(512);
    expect(md.markdown.content).toMatch(/… \d+ more items<\/font>\n\[Link 0\]/);
  });

  it('sends a card without any http(s) link as markdown, and a textcard as text', () => {
    const n = notice({ links: [{ text: 'relative', url: '/x' }] });

    expect(valid(renderNotice(n, 'template_card')).msgtype).toBe('markdown');
    expect(valid(renderNotice(n, 'textcard')).msgtype).toBe('text');
  });
});

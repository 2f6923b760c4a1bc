import { describe, expect, it } from 'vitest';
import { fitBlocks, fitLines, truncateChars, truncateUtf8, utf8Bytes } from '#lib/messages/fit.js';

describe('truncateUtf8', () => {
  it('returns text within the limit unchanged, however close to it', () => {
    const s = '磁'.repeat(10); // 30 bytes
    expect(truncateUtf8(s, 30)).toBe(s);
  });

  it('never cuts a CJK character in half and ends with an ellipsis', () => {
    const cut = truncateUtf8('告警：磁盘已满', 12);

    expect(cut).toBe('告警：…');
    expect(utf8Bytes(cut)).toBeLessThanOrEqual(12);
  });

  it('keeps an emoji with its modifiers whole or not at all', () => {
    const family = '👨‍👩‍👧‍👦'; // one grapheme, 25 bytes
    expect(truncateUtf8(`ok ${family} done`, 20)).toBe('ok…');
    expect(truncateUtf8(`ok ${family} done`, 31)).toBe(`ok ${family}…`);
  });
});

describe('truncateChars', () => {
  it('counts graphemes, not UTF-16 units', () => {
    expect(truncateChars('👍🏽👍🏽👍🏽', 3)).toBe('👍🏽👍🏽👍🏽');
    expect(truncateChars('查看详情页面', 4, '')).toBe('查看详情');
    expect(truncateChars('abcdef', 4)).toBe('abc…');
  });
});

describe('fitBlocks', () => {
  const blocks = Array.from({ length: 10 }, (_, i) => [`**alert ${i}**`, `description of alert ${i}`]);
  const more = (n: number) => (n > 0 ? `… ${n} more alerts` : undefined);

  it('keeps everything, and no "more" line, when it all fits', () => {
    const out = fitBlocks({ head: ['## title'], blocks, tail: ['[link](https://x.example)'], more }, 2048);

    expect(out.split('\n')).toHaveLength(1 + 20 + 1);
    expect(out).not.toContain('more alerts');
  });

  it('drops whole blocks from the end and counts them in the "more" line, before the tail', () => {
    const out = fitBlocks({ head: ['## title'], blocks, tail: ['tail line'], more }, 200);

    const lines = out.split('\n');
    expect(utf8Bytes(out)).toBeLessThanOrEqual(200);
    expect(lines.at(-1)).toBe('tail line');
    const kept = lines.filter((l) => l.startsWith('**alert')).length;
    expect(lines.at(-2)).toBe(`… ${10 - kept} more alerts`);
    // Every kept alert is complete: its description follows it.
    for (let i = 0; i < kept; i++) expect(lines).toContain(`description of alert ${i}`);
    expect(kept).toBeGreaterThan(0);
  });

  it('uses the whole budget: one byte less drops one more block', () => {
    const full = fitBlocks({ head: ['h'], blocks, more }, 10_000);
    const exact = fitBlocks({ head: ['h'], blocks, more }, utf8Bytes(full));

    expect(exact).toBe(full);
    expect(fitBlocks({ head: ['h'], blocks, more }, utf8Bytes(full) - 1)).toContain('… 1 more alerts');
  });

  it('drops the tail before the head when only one of them fits', () => {
    const out = fitBlocks({ head: ['head'], blocks: [], tail: ['x'.repeat(50)], more }, 20);

    expect(out).toBe('head');
  });

  it('cuts the text as a whole when the head alone is over the limit', () => {
    const out = fitBlocks({ head: ['标题'.repeat(100)], blocks, more }, 64);

    expect(utf8Bytes(out)).toBeLessThanOrEqual(64);
    expect(out.endsWith('…')).toBe(true);
  });

  it('adds a "more" line for items the vendor already dropped even when all blocks fit', () => {
    const out = fitBlocks({ head: ['h'], blocks: [['a']], more: (n) => `… ${n + 5} more alerts` }, 2048);

    expect(out).toBe('h\na\n… 5 more alerts');
  });
});

describe('fitLines', () => {
  it('drops lines from the end with a line count, within the byte limit, for CJK text', () => {
    const text = Array.from({ length: 200 }, (_, i) => `第${i}行：磁盘使用率超过百分之九十`).join('\n');

    const out = fitLines(text, 2048);

    expect(utf8Bytes(out)).toBeLessThanOrEqual(2048);
    const lines = out.split('\n');
    expect(lines.at(-1)).toBe(`… ${200 - (lines.length - 1)} more lines`);
    expect(lines[0]).toBe('第0行：磁盘使用率超过百分之九十');
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8Bytes } from '#lib/messages/fit.js';
import { type SplitPart, splitContent } from '#lib/messages/split.js';

const segmenter = new Intl.Segmenter();

/** Words of every kind a long message has: CJK, emoji (with modifiers and joiners), combining marks, ASCII, URLs. */
const wordArb = fc.oneof(
  fc.constantFrom('告警', '磁盘已满', '部署完成', '服务', '（生产）', '：', '。'),
  fc.constantFrom('👍🏽', '👨‍👩‍👧‍👦', '🇨🇳', '❤️', 'é', 'ñ', 'ё̈', '각'),
  fc.stringMatching(/^[a-z]{1,12}$/),
  fc.constantFrom('https://example.com/a/very/long/path?with=query&and=more', 'x'.repeat(300)),
  // Chinese has no spaces: a long run of it is one "word", cut between graphemes.
  fc
    .array(fc.constantFrom('告警', '👨‍👩‍👧‍👦', 'é', '🇨🇳', '👍🏽', 'ё̈'), { minLength: 20, maxLength: 200 })
    .map((g) => g.join('')),
);
const lineArb = fc.array(wordArb, { minLength: 0, maxLength: 30 }).map((w) => w.join(' '));
const fenceArb = fc
  .record({
    lang: fc.constantFrom('', 'js', 'python'),
    lines: fc.array(
      lineArb.map((l) => `  ${l}`),
      { minLength: 1, maxLength: 40 },
    ),
  })
  .map(({ lang, lines }) => `\`\`\`${lang}\n${lines.join('\n')}\n\`\`\`\n`);
const tableArb = fc
  .array(fc.tuple(wordArb, wordArb), { minLength: 1, maxLength: 40 })
  .map((rows) => `| a | b |\n|---|---|\n${rows.map(([a, b]) => `| ${a} | ${b} |`).join('\n')}\n`);
const blockArb = fc.oneof(
  { weight: 4, arbitrary: lineArb.map((l) => `${l}\n`) },
  { weight: 1, arbitrary: fc.constant('\n') },
  { weight: 1, arbitrary: fenceArb },
  { weight: 1, arbitrary: tableArb },
);
const contentArb = fc.array(blockArb, { minLength: 1, maxLength: 60 }).map((b) => b.join(''));
const maxBytesArb = fc.constantFrom(96, 200, 512, 2048);

const split = (content: string, maxBytes: number, format: 'text' | 'markdown' = 'markdown') =>
  splitContent(content, { maxBytes, maxParts: 10_000, format });

function partsOf(content: string, maxBytes: number, format: 'text' | 'markdown' = 'markdown'): SplitPart[] {
  const r = split(content, maxBytes, format);
  if (r.kind === 'whole') return [{ content: r.content, body: r.content }];
  if (r.kind === 'too-many-parts') throw new Error(`too many parts: ${r.needed}`);
  return r.parts;
}

/** Half of a UTF-16 pair: a character cut in two (TextEncoder would send U+FFFD). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const fenceLines = (s: string) => s.split('\n').filter((l) => /^ {0,3}```/.test(l)).length;

describe('splitContent', () => {
  it('keeps every part within the limit, markers included, and the bodies joined are the content', () => {
    fc.assert(
      fc.property(
        contentArb,
        maxBytesArb,
        fc.constantFrom('text' as const, 'markdown' as const),
        (c, max, f) => {
          const parts = partsOf(c, max, f);
          for (const p of parts) expect(utf8Bytes(p.content)).toBeLessThanOrEqual(max);
          expect(parts.map((p) => p.body).join('')).toBe(c);
          if (parts.length > 1)
            parts.forEach((p, i) => {
              expect(p.content.startsWith(`(${i + 1}/${parts.length})\n`)).toBe(true);
              expect(p.content).toContain(p.body);
            });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('never cuts a character, and cuts a grapheme only when it alone is larger than a part', () => {
    fc.assert(
      fc.property(contentArb, maxBytesArb, (c, max) => {
        const parts = partsOf(c, max);
        const boundaries = new Set([...segmenter.segment(c)].map((g) => g.index));
        let offset = 0;
        for (const p of parts) {
          expect(LONE_SURROGATE.test(p.content)).toBe(false);
          expect(boundaries.has(offset)).toBe(true);
          offset += p.body.length;
        }
      }),
      { numRuns: 150 },
    );
  });

  it('keeps code fences balanced in every part, and a block that fits a part in one part', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fenceArb,
            tableArb,
            lineArb.map((l) => `${l}\n`),
          ),
          { minLength: 1, maxLength: 30 },
        ),
        maxBytesArb,
        (blocks, max) => {
          // A blank line between blocks: two tables side by side would be one table.
          const c = blocks.join('\n');
          const parts = partsOf(c, max);
          for (const p of parts) expect(fenceLines(p.content) % 2, p.content).toBe(0);
          // Room for the widest marker a split of this content could need.
          const room = max - utf8Bytes(`(${parts.length}/${parts.length})\n`);
          for (const b of blocks)
            if ((b.startsWith('```') || b.startsWith('|')) && utf8Bytes(b) <= room)
              expect(parts.some((p) => p.body.includes(b))).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('opens a code block again with its info string, and repeats a table’s header, in the next part', () => {
    const code = `\`\`\`python\n${Array.from({ length: 120 }, (_, i) => `print(${i})`).join('\n')}\n\`\`\`\n`;
    const parts = partsOf(code, 256);
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts.slice(1)) expect(p.content.split('\n')[1]).toBe('```python');
    for (const p of parts.slice(0, -1)) expect(p.content.endsWith('```')).toBe(true);

    const table = `| host | state |\n|---|---|\n${Array.from({ length: 60 }, (_, i) => `| web-${i} | down |`).join('\n')}\n`;
    const rows = partsOf(table, 256);
    expect(rows.length).toBeGreaterThan(2);
    for (const p of rows)
      expect(p.content.split('\n').slice(1, 3)).toEqual(['| host | state |', '|---|---|']);
  });

  it('closes and reopens a long code block of CRLF content, and puts a tag in every marker', () => {
    const code = `\`\`\`js\r\n${Array.from({ length: 80 }, (_, i) => `console.log(${i});`).join('\r\n')}\r\n\`\`\`\r\n`;
    const r = splitContent(code, { maxBytes: 512, maxParts: 100, format: 'markdown', tag: '9f2c' });
    if (r.kind !== 'parts') throw new Error(r.kind);
    expect(r.parts.length).toBeGreaterThan(2);
    r.parts.forEach((p, i) => {
      expect(p.content.startsWith(`(${i + 1}/${r.parts.length} · 9f2c)\n`)).toBe(true);
      expect(fenceLines(p.content) % 2, p.content).toBe(0);
      expect(utf8Bytes(p.content)).toBeLessThanOrEqual(512);
    });
    expect(r.parts.map((p) => p.body).join('')).toBe(code);
  });

  it('cuts after a paragraph before it cuts after a line', () => {
    const paragraph = (n: number) => `${'段落'.repeat(n)}\n${'第二行'.repeat(n)}\n\n`;
    // 903 bytes a paragraph: two fit a part of 2,048, three do not; the cut comes after the second.
    const parts = partsOf(paragraph(60) + paragraph(60) + paragraph(60), 2048, 'text');
    expect(parts.map((p) => p.body)).toEqual([paragraph(60) + paragraph(60), paragraph(60)]);
  });

  it('leaves content that fits as it is, and refuses more parts than allowed', () => {
    expect(split('短消息', 2048)).toEqual({ kind: 'whole', content: '短消息' });
    const long = '日志行 '.repeat(2100); // 21,000 bytes: more than 10 parts of 2,048
    expect(splitContent(long, { maxBytes: 2048, maxParts: 10, format: 'text' })).toMatchObject({
      kind: 'too-many-parts',
    });
    const seven = 'x'.repeat(7000);
    const r = splitContent(seven, { maxBytes: 2048, maxParts: 10, format: 'text' });
    expect(r.kind === 'parts' && r.parts.map((p) => p.content.slice(0, 6))).toEqual([
      '(1/4)\n',
      '(2/4)\n',
      '(3/4)\n',
      '(4/4)\n',
    ]);
  });
});

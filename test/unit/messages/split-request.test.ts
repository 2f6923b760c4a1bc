import { describe, expect, it } from 'vitest';
import { type SplitSettings, utf8Bytes, validateMessageRequest } from '#lib/messages/index.js';

const paragraphs = (n: number) =>
  Array.from({ length: n }, (_, i) => `第${i + 1}段：${'磁盘告警 '.repeat(40)}`).join('\n\n');
const LONG = paragraphs(12); // ~7,000 bytes

const body = (extra: Record<string, unknown>, msgtype: 'text' | 'markdown' = 'text', content = LONG) => ({
  app: 'ops',
  touser: 'zhangsan|lisi',
  msgtype,
  [msgtype]: { content },
  ...extra,
});

const settings = (s: Partial<SplitSettings>) => (): SplitSettings => ({
  byDefault: false,
  maxParts: 10,
  ...s,
});

describe('split on request', () => {
  it('turns over-long text into ordered parts within WeCom’s limit, keeping the whole content on the record', () => {
    expect(utf8Bytes(LONG)).toBeGreaterThan(6_000);
    const r = validateMessageRequest(body({ split: true }));
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    const segments = r.value.segments ?? [];
    expect(segments.length).toBeGreaterThanOrEqual(4);
    segments.forEach((s, i) => {
      expect(s.msgtype).toBe('text');
      const content = String(s.content.content);
      expect(utf8Bytes(content)).toBeLessThanOrEqual(2048);
      expect(content).toMatch(new RegExp(`^\\(${i + 1}/${segments.length} · [0-9a-f]{4}\\)\n`));
    });
    expect(r.value.content).toEqual({ content: LONG });
  });

  it('without split answers how long the content is and that split exists', () => {
    const r = validateMessageRequest(body({}));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues).toEqual([
      {
        field: 'text.content',
        message: `${utf8Bytes(LONG)} bytes, max 2048; send "split": true to have it delivered in parts`,
      },
    ]);
  });

  it('follows the app’s default, which a message can turn off', () => {
    const byDefault = { split: settings({ byDefault: true }) };
    const on = validateMessageRequest(body({}), byDefault);
    expect(on.ok && on.value.segments?.length).toBeGreaterThan(1);
    const off = validateMessageRequest(body({ split: false }), byDefault);
    expect(off.ok).toBe(false);
  });

  it('refuses content that needs more parts than the cap, naming both', () => {
    const r = validateMessageRequest(body({ split: true }), { split: settings({ maxParts: 3 }) });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues[0]?.field).toBe('text.content');
    expect(r.issues[0]?.message).toMatch(/would need \d+ parts, more than the cap of 3$/);
  });

  it('leaves content that fits alone: no parts', () => {
    const r = validateMessageRequest(body({ split: true }, 'text', 'short'));
    expect(r.ok && r.value.segments).toBeUndefined();
  });

  it('converts each part of split markdown with the markdown fallback, as a hand-built message', () => {
    const markdown = `# 值班日志\n\n${paragraphs(10)}`;
    const r = validateMessageRequest(body({ split: true, markdown_fallback: 'text' }, 'markdown', markdown));
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    const segments = r.value.segments ?? [];
    expect(segments.length).toBeGreaterThan(1);
    expect(segments.every((s) => s.msgtype === 'text')).toBe(true);
    expect(String(segments[0]?.content.content)).toMatch(/^\(1\/\d+ · [0-9a-f]{4}\)\n值班日志\n/);
    const kept = validateMessageRequest(body({ split: true }, 'markdown', markdown));
    expect(kept.ok && kept.value.segments?.every((s) => s.msgtype === 'markdown')).toBe(true);
  });

  it('loses nothing of split markdown that falls back, though its links grow when converted', () => {
    // 6 KB of lines with links: converted part by part, each part would outgrow 2,048 bytes and be cut.
    const lines = Array.from(
      { length: 60 },
      (_, i) => `- 构建 ${i} 失败 [日志](https://ci.example.com/runs/${i}/log)`,
    );
    for (const fallback of ['text', 'textcard'] as const) {
      const r = validateMessageRequest(
        body({ split: true, markdown_fallback: fallback }, 'markdown', lines.join('\n')),
      );
      if (!r.ok) throw new Error(JSON.stringify(r.issues));
      const segments = r.value.segments ?? [];
      expect(segments.length).toBeGreaterThan(1);
      const sent = segments.map((s) => String(s.content.content)).join('\n');
      expect(segments.every((s) => s.msgtype === 'text')).toBe(true);
      expect(sent).not.toMatch(/more lines?/);
      for (let i = 0; i < 60; i++) expect(sent).toContain(`href="https://ci.example.com/runs/${i}/log"`);
      for (const s of segments) expect(utf8Bytes(String(s.content.content))).toBeLessThanOrEqual(2048);
    }
  });

  it('marks the parts of two messages that begin alike differently, and of identical ones alike', () => {
    const parts = (content: string) => {
      const r = validateMessageRequest(body({ split: true }, 'text', content));
      return r.ok ? (r.value.segments ?? []).map((s) => s.content.content) : [];
    };
    const a = parts(`${LONG}\n\n告警 A 结束`);
    const b = parts(`${LONG}\n\n告警 B 结束`);
    expect(a.length).toBe(b.length);
    // WeCom's duplicate check would drop b's first part if it were a's, byte for byte.
    expect(a[0]).not.toBe(b[0]);
    expect(parts(`${LONG}\n\n告警 A 结束`)).toEqual(a);
  });

  it('still validates the rest of the message', () => {
    const r = validateMessageRequest({ ...body({ split: true }), touser: undefined });
    expect(r.ok).toBe(false);
  });
});

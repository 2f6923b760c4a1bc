/**
 * A small model of WeCom-flavoured Markdown (发送应用消息 › markdown消息, https://developer.work.weixin.qq.com/document/path/90236):
 * headings `#`…`######`, `**bold**`, `[text](url)`, `` `code` ``, `> quote`, `<font color="info|comment|warning">`.
 * Hooks build messages in it; the Markdown fallback parses into it. Serializers turn it into WeCom `markdown`, into
 * `text` (where `<a href>` is the only markup WeCom renders, per the text example of the same page) or into plain
 * text (textcard, template card fields).
 */

export type FontColor = 'info' | 'comment' | 'warning';

export type Inline =
  | { kind: 'text'; text: string; bold?: boolean; code?: boolean; color?: FontColor }
  | { kind: 'link'; text: string; url: string };

export type LineKind = 'heading' | 'paragraph' | 'quote' | 'bullet' | 'ordered' | 'rule' | 'blank';

export interface Line {
  kind: LineKind;
  /** Heading level 1–6, or the number of an ordered item. */
  level?: number;
  inlines: Inline[];
}

export const text = (
  s: string,
  style: Omit<Extract<Inline, { kind: 'text' }>, 'kind' | 'text'> = {},
): Inline => ({
  kind: 'text',
  text: s,
  ...style,
});
export const link = (label: string, url: string): Inline => ({ kind: 'link', text: label, url });
export const line = (kind: LineKind, inlines: Inline[], level?: number): Line =>
  level === undefined ? { kind, inlines } : { kind, level, inlines };

// ---------------------------------------------------------------------------------------------------------------
// Serializers

/** In link text `]` would end the label early; in a URL `)` and spaces would end the link. */
const mdLinkText = (s: string) => s.replace(/\[/g, '［').replace(/\]/g, '］');
const mdUrl = (u: string) => u.replace(/\)/g, '%29').replace(/ /g, '%20');

function inlineMarkdown(i: Inline): string {
  if (i.kind === 'link') return `[${mdLinkText(i.text)}](${mdUrl(i.url)})`;
  let s = i.text;
  if (i.code) s = `\`${s.replace(/`/g, "'")}\``;
  if (i.bold && s.trim() !== '') s = `**${s}**`;
  if (i.color) s = `<font color="${i.color}">${s}</font>`;
  return s;
}

const PREFIX_MD: Record<LineKind, (l: Line) => string> = {
  heading: (l) => `${'#'.repeat(Math.min(6, Math.max(1, l.level ?? 1)))} `,
  paragraph: () => '',
  quote: () => '> ',
  bullet: () => '- ',
  ordered: (l) => `${l.level ?? 1}. `,
  rule: () => '',
  blank: () => '',
};

/** One line of WeCom markdown. */
export function toMarkdownLine(l: Line): string {
  if (l.kind === 'rule') return '---';
  return PREFIX_MD[l.kind](l) + l.inlines.map(inlineMarkdown).join('');
}

export type LinkStyle = 'anchor' | 'plain' | 'none';

const escapeAttr = (u: string) => u.replace(/"/g, '%22');

function inlineText(i: Inline, links: LinkStyle): string {
  if (i.kind === 'text' || links === 'none') return i.text;
  const label = i.text === '' ? i.url : i.text;
  if (links === 'anchor') return `<a href="${escapeAttr(i.url)}">${label}</a>`;
  return label === i.url ? i.url : `${label} (${i.url})`;
}

const PREFIX_TEXT: Record<LineKind, (l: Line) => string> = {
  heading: () => '',
  paragraph: () => '',
  quote: () => '| ',
  bullet: () => '• ',
  ordered: (l) => `${l.level ?? 1}. `,
  rule: () => '',
  blank: () => '',
};

/**
 * One line of readable text: markers removed, links as `<a href>` (text messages), `title (url)` or the title
 * alone (textcard descriptions, which render no links).
 */
export function toTextLine(l: Line, links: LinkStyle = 'anchor'): string {
  if (l.kind === 'rule') return '——————';
  const body = l.inlines.map((i) => inlineText(i, links)).join('');
  return (PREFIX_TEXT[l.kind](l) + body).trimEnd();
}

/** The first http(s) link of some lines, for a textcard's or a card's click target. */
export function firstLink(lines: readonly Line[]): { text: string; url: string } | undefined {
  for (const l of lines) {
    for (const i of l.inlines) {
      if (i.kind === 'link' && /^https?:\/\/\S/i.test(i.url)) return { text: i.text, url: i.url };
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Parser

const INLINE =
  /\*\*(.+?)\*\*|`([^`\n]+)`|!?\[([^\]\n]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)|<font\s+color\s*=\s*["']?(info|comment|warning)["']?\s*>(.*?)<\/font>|<@([^>\s]+)>|<\/?[a-z][^>]*>|\\([\\`*_[\]()#>!-])/gis;

/** Inline markup of one line: bold, code, links (and images, kept as links), font colors, mentions, escapes. */
export function parseInlines(s: string, inherited: { bold?: boolean; color?: FontColor } = {}): Inline[] {
  const out: Inline[] = [];
  const push = (i: Inline) => {
    const last = out.at(-1);
    if (
      i.kind === 'text' &&
      last?.kind === 'text' &&
      last.bold === i.bold &&
      last.code === i.code &&
      last.color === i.color
    ) {
      last.text += i.text;
    } else out.push(i);
  };
  const plain = (t: string) => {
    if (t !== '') push({ kind: 'text', text: t, ...inherited });
  };
  let at = 0;
  for (const m of s.matchAll(INLINE)) {
    plain(s.slice(at, m.index));
    at = m.index + m[0].length;
    const [, bold, code, label, url, color, colored, mention, escaped] = m;
    if (bold !== undefined) for (const i of parseInlines(bold, { ...inherited, bold: true })) push(i);
    else if (code !== undefined) push({ kind: 'text', text: code, code: true, ...inherited });
    else if (url !== undefined) push({ kind: 'link', text: label ?? '', url });
    else if (color !== undefined)
      for (const i of parseInlines(colored ?? '', { ...inherited, color: color as FontColor })) push(i);
    else if (mention !== undefined) plain(`@${mention}`);
    else if (escaped !== undefined) plain(escaped);
    // Any other HTML-like tag: dropped, its content (matched separately) stays.
  }
  plain(s.slice(at));
  return out;
}

/** Block syntax, tried in order on a trimmed, non-blank line outside code fences. */
const BLOCKS: readonly { re: RegExp; make: (m: RegExpExecArray) => Line }[] = [
  { re: /^(#{1,6})\s+(.*?)\s*#*$/, make: (m) => line('heading', parseInlines(m[2] ?? ''), m[1]?.length) },
  { re: /^([-*_])(\s*\1){2,}$/, make: () => line('rule', []) },
  { re: /^>+\s?(.*)$/, make: (m) => line('quote', parseInlines(m[1] ?? '')) },
  { re: /^[-*+]\s+(.*)$/, make: (m) => line('bullet', parseInlines(m[1] ?? '')) },
  { re: /^(\d{1,9})[.)]\s+(.*)$/, make: (m) => line('ordered', parseInlines(m[2] ?? ''), Number(m[1])) },
];

function parseBlock(trimmed: string): Line {
  for (const { re, make } of BLOCKS) {
    const m = re.exec(trimmed);
    if (m) return make(m);
  }
  return line('paragraph', parseInlines(trimmed));
}

/**
 * Parses WeCom-flavoured Markdown into lines. Also accepts what people paste from elsewhere — lists, numbered
 * lists, rules, fenced code (fences dropped, content kept verbatim), `*italic*`/`_italic_` (kept as written) — so
 * the fallback reads well whatever the sender wrote.
 */
export function parseMarkdown(md: string): Line[] {
  const out: Line[] = [];
  let fenced = false;
  for (const raw of md.replace(/\r\n?/g, '\n').split('\n')) {
    const trimmed = raw.trim();
    if (/^(```|~~~)/.test(trimmed)) fenced = !fenced;
    else if (fenced) out.push(line('paragraph', [text(raw)]));
    else out.push(trimmed === '' ? line('blank', []) : parseBlock(trimmed));
  }
  return out;
}

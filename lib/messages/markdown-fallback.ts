import { ELLIPSIS, fitBlocks, truncateChars, truncateUtf8, utf8Bytes } from './fit.js';
import { LIMITS } from './limits.js';
import { firstLink, type LinkStyle, parseMarkdown, toTextLine } from './rich-text.js';

/**
 * WeCom renders `markdown` only in the WeCom client: members who read their messages in the WeChat plugin (微信插件)
 * see "暂不支持此消息类型" instead (wecom-api-notes.md §2.2). WeCom does not say who reads where, so an app (or one
 * message) can ask for a fallback that renders everywhere: `text`, or a `textcard` with a link button.
 */
export type MarkdownFallback = 'text' | 'textcard';

export interface FallbackOptions {
  /** How links appear in `text`: `<a href>` (default; WeCom text renders it) or `title (url)`. */
  links?: Exclude<LinkStyle, 'none'>;
  /** textcard button text, ≤ 4 characters; WeCom shows 详情 when absent. */
  btntxt?: string;
}

export type FallbackMessage =
  | { msgtype: 'text'; text: { content: string } }
  | { msgtype: 'textcard'; textcard: { title: string; description: string; url: string; btntxt?: string } };

const moreLines = (n: number) => (n > 0 ? `${ELLIPSIS} ${n} more line${n === 1 ? '' : 's'}` : undefined);

/** Drops leading and trailing blank lines and runs of more than one blank line. */
function tidy(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const l of lines) {
    if (l.trim() === '' && (out.length === 0 || out.at(-1)?.trim() === '')) continue;
    out.push(l);
  }
  while (out.length > 0 && out.at(-1)?.trim() === '') out.pop();
  return out;
}

function fitText(lines: readonly string[], maxBytes: number): string {
  return fitBlocks({ head: [], blocks: tidy(lines).map((l) => [l]), more: moreLines }, maxBytes);
}

/**
 * Converts WeCom markdown to `text.content` (≤ `maxBytes`, 2048 by default): markers dropped, headings and quotes
 * kept as lines, links kept. Whole lines are dropped from the end, with a `… N more lines` line, when the result is
 * too long; with `maxBytes` Infinity nothing is dropped (content that is split into parts afterwards).
 *
 * @example markdownToText('## Disk full\n> host: **db-1**\n[Grafana](https://g.example/d/1)')
 * // 'Disk full\n| host: db-1\n<a href="https://g.example/d/1">Grafana</a>'
 */
export function markdownToText(
  markdown: string,
  options: FallbackOptions = {},
  maxBytes: number = LIMITS.text.maxContentBytes,
): string {
  const lines = parseMarkdown(markdown).map((l) => toTextLine(l, options.links ?? 'anchor'));
  const fitLinesOf = (ls: readonly string[]) =>
    Number.isFinite(maxBytes) ? fitText(ls, maxBytes) : tidy(ls).join('\n');
  const converted = fitLinesOf(lines);
  // Markup with no text at all (an empty <font> tag): better the source than an empty message WeCom rejects.
  return converted.trim() === '' ? fitLinesOf(markdown.split('\n')) : converted;
}

const isUsableUrl = (url: string) => utf8Bytes(url) <= LIMITS.textcard.maxUrlBytes;

/**
 * Converts WeCom markdown to a textcard: the title is the first heading (else the first line), the description the
 * rest as plain text (textcard descriptions render no links; the first link becomes the card's url and button).
 * Without any http(s) link there is nothing to click, so the result is a `text` message instead.
 *
 * @example markdownToTextCard('# Build failed\nmain @ 1a2b3c\n[Open run](https://ci.example/runs/7)')
 * // { msgtype: 'textcard', textcard: { title: 'Build failed', description: 'main @ 1a2b3c\nOpen run', url: 'https://ci.example/runs/7' } }
 */
export function markdownToTextCard(markdown: string, options: FallbackOptions = {}): FallbackMessage {
  const parsed = parseMarkdown(markdown);
  const target = firstLink(parsed);
  if (!target || !isUsableUrl(target.url)) {
    return { msgtype: 'text', text: { content: markdownToText(markdown, options) } };
  }
  let titleIndex = parsed.findIndex((l) => l.kind === 'heading');
  if (titleIndex < 0) titleIndex = parsed.findIndex((l) => l.kind !== 'blank');
  const titleLine = parsed[titleIndex];
  const title = titleLine ? toTextLine(titleLine, 'none').trim() : '';
  const rest = parsed.filter((_, index) => index !== titleIndex);
  const description = fitText(
    rest.map((l) => toTextLine(l, 'none')),
    LIMITS.textcard.maxDescriptionBytes,
  );
  const btntxt =
    options.btntxt === undefined
      ? undefined
      : truncateChars(options.btntxt, LIMITS.textcard.maxBtnTxtChars, '');
  return {
    msgtype: 'textcard',
    textcard: {
      title: truncateUtf8(title || target.text || target.url, LIMITS.textcard.maxTitleBytes),
      // WeCom requires a non-empty description.
      description: description || title || target.url,
      url: target.url,
      ...(btntxt ? { btntxt } : {}),
    },
  };
}

/**
 * The fallback of one markdown message: what an app's or a message's `markdown_fallback` asks for.
 *
 * @example convertMarkdown({ content: '# Hi' }, 'text') // { msgtype: 'text', text: { content: 'Hi' } }
 */
export function convertMarkdown(
  markdown: { content: string },
  mode: MarkdownFallback,
  options: FallbackOptions = {},
): FallbackMessage {
  return mode === 'text'
    ? { msgtype: 'text', text: { content: markdownToText(markdown.content, options) } }
    : markdownToTextCard(markdown.content, options);
}

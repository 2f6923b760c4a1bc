import { type Child, h } from '../shared/dom.js';
import { safeHref } from '../shared/links.js';

const link = (href: string, label: string): HTMLAnchorElement =>
  h('a', { href, target: '_blank', rel: 'noopener noreferrer', class: 'wr-link' }, label);

/**
 * A text message's content as the client shows it: line breaks kept (by CSS), `<a href="…">` tags (which WeCom
 * allows in text, 发送应用消息 › 文本消息) and bare http(s) URLs as links, everything else literally.
 */
export function renderTextContent(content: string): HTMLElement {
  const out = h('div', { class: 'wr-text', 'data-testid': 'text-content' });
  const pattern =
    /<a\s+href=(["'])([^"'<>]*)\1\s*>([^<]*)<\/a>|(https?:\/\/[^\s<>"'（）【】，。、；！？]+)/gi;
  let last = 0;
  for (const m of content.matchAll(pattern)) {
    out.append(content.slice(last, m.index));
    last = m.index + m[0].length;
    const [whole, , tagHref, tagLabel, bare] = m;
    const href = safeHref(tagHref ?? bare ?? '');
    // A tag with a link that is not http(s) stays visible as the text that was sent.
    if (href === undefined || (bare !== undefined && !/^https?:/i.test(bare))) out.append(whole);
    else out.append(link(href, bare ?? (tagLabel || href)));
  }
  out.append(content.slice(last));
  return out;
}

const FONT_CLASSES = new Set(['info', 'comment', 'warning']);

/**
 * The markdown subset of app messages (发送应用消息 › markdown消息): `#`–`######` headings, `**bold**`,
 * `[text](url)`, `` `code` `` on one line, `> quote` and `<font color="info|comment|warning">`. Anything else —
 * lists, tables, images, other HTML — is shown literally, as the client does.
 */
export function renderMarkdownContent(content: string): HTMLElement {
  const out = h('div', { class: 'wr-markdown', 'data-testid': 'markdown-content' });
  for (const line of content.split('\n')) {
    const heading = /^(#{1,6}) (.*)$/.exec(line);
    const quote = /^> ?(.*)$/.exec(line);
    if (heading?.[1] && heading[2] !== undefined) {
      out.append(
        h(
          'div',
          {
            class: `wr-md-h wr-md-h${heading[1].length}`,
            role: 'heading',
            'aria-level': String(heading[1].length),
          },
          ...inline(heading[2]),
        ),
      );
    } else if (quote?.[1] !== undefined) {
      out.append(h('blockquote', { class: 'wr-md-quote' }, ...inline(quote[1])));
    } else {
      out.append(h('div', { class: 'wr-md-line' }, ...(line === '' ? ['\u200b'] : inline(line))));
    }
  }
  return out;
}

/** Inline markdown of one line. Bold and font content is itself inline markdown; code and link labels are text. */
function inline(s: string): Child[] {
  const pattern =
    /\*\*(.+?)\*\*|\[([^\]\n]+)\]\(([^)\s]+)\)|`([^`\n]+)`|<font\s+color=(["'])([a-z]+)\5\s*>(.*?)<\/font>/gi;
  const out: Child[] = [];
  let last = 0;
  for (const m of s.matchAll(pattern)) {
    const [whole, bold, label, url, code, , color, colored] = m;
    let node: Child;
    if (bold !== undefined) node = h('strong', {}, ...inline(bold));
    else if (label !== undefined && url !== undefined) {
      const href = safeHref(url);
      node = href !== undefined && /^https?:/i.test(url) ? link(href, label) : undefined;
    } else if (code !== undefined) node = h('code', { class: 'wr-md-code' }, code);
    else if (color !== undefined && FONT_CLASSES.has(color.toLowerCase()) && colored !== undefined)
      node = h(
        'span',
        { class: `wr-font-${color.toLowerCase()}`, 'data-font': color.toLowerCase() },
        ...inline(colored),
      );
    // Not part of the subset (a javascript: link, an unknown colour): the source stays visible.
    if (node === undefined) continue;
    out.push(s.slice(last, m.index), node);
    last = m.index + whole.length;
  }
  out.push(s.slice(last));
  return out.filter((c) => c !== '');
}

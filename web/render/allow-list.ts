import { h } from '../shared/dom.js';
import { safeHref } from '../shared/links.js';

/**
 * What HTML a field may carry: the tags kept (with the attributes each may keep), and the classes allowed. Any
 * other element is unwrapped (its text stays, as text) unless it is one whose content is code or a document of
 * its own, which is dropped with its content.
 */
export interface HtmlPolicy {
  tags: Readonly<Record<string, readonly string[]>>;
  /** Allowed values of `class`, for the tags that keep it. */
  classes?: ReadonlySet<string>;
}

/** Elements whose content is never text a reader should see. */
const DROPPED = new Set([
  'script',
  'style',
  // What defuse() renames <style> to.
  'x-style',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'template',
  'noscript',
  'svg',
  'math',
  'link',
  'meta',
  'base',
  'head',
  'title',
  'form',
  'input',
  'button',
  'select',
  'textarea',
  'video',
  'audio',
  'source',
  'track',
  'canvas',
]);

/**
 * `html` copied through the policy into fresh elements of this document. The string is parsed by DOMParser into
 * an inert document (its scripts never run and its images never load); nothing of it is adopted as is, so no
 * attribute the policy does not name (an `on…` handler, `style`, `srcset`) can reach the page.
 *
 * @example sanitize('<div class="gray">2016年9月26日</div><script>x()</script>', TEXTCARD_POLICY)
 */
export function sanitize(html: string, policy: HtmlPolicy): DocumentFragment {
  const parsed = new DOMParser().parseFromString(defuse(html), 'text/html');
  const out = document.createDocumentFragment();
  copyChildren(parsed.body, out, policy);
  return out;
}

/**
 * Renames `on…` and `style` attributes and `<style>` tags before parsing. Not a safety measure (the copy below
 * keeps none of them whatever the parse): Chromium checks an inert document's inline handlers and styles against
 * the page's CSP and reports each as a violation, which would drown out real ones. A tag this misses is only
 * reported, never run.
 */
const defuse = (html: string): string =>
  html.replace(/<\/?[a-z](?:[^>"']|"[^"]*"|'[^']*')*>/gi, (tag) =>
    tag
      .replace(/^<(\/?)style\b/i, '<$1x-style')
      // A slash right after the tag name separates like a space (`<svg/onload=…>`); elsewhere it may be in a URL.
      .replace(/^(<[a-z][\w-]*)\//i, '$1 ')
      .replace(/([\s"'])(on[a-z-]*|style)(?=\s*=|[\s/>])/gi, '$1x-$2'),
  );

function copyChildren(from: Node, to: Node, policy: HtmlPolicy): void {
  for (const child of Array.from(from.childNodes)) {
    if (child.nodeType === Node.TEXT_NODE) {
      to.appendChild(document.createTextNode(child.textContent ?? ''));
      continue;
    }
    if (child.nodeType !== Node.ELEMENT_NODE) continue;
    const el = child as Element;
    const tag = el.localName;
    if (DROPPED.has(tag)) continue;
    if (tag === 'img') {
      to.appendChild(imagePlaceholder(el.getAttribute('alt') ?? ''));
      continue;
    }
    const allowed = policy.tags[tag];
    if (allowed === undefined) {
      copyChildren(el, to, policy);
      continue;
    }
    const copy = document.createElement(tag);
    for (const name of allowed) {
      const value = el.getAttribute(name);
      if (value === null) continue;
      if (name === 'href') {
        const href = safeHref(value);
        if (href === undefined) continue;
        copy.setAttribute('href', href);
        copy.setAttribute('target', '_blank');
        copy.setAttribute('rel', 'noopener noreferrer');
      } else if (name === 'class') {
        const kept = value.split(/\s+/).filter((c) => policy.classes?.has(c));
        if (kept.length > 0) copy.setAttribute('class', kept.map((c) => `wr-html-${c}`).join(' '));
      } else if (/^\d{1,3}$/.test(value)) {
        // Only numeric attributes (colspan, rowspan) are named besides href and class.
        copy.setAttribute(name, value);
      }
    }
    copyChildren(el, copy, policy);
    to.appendChild(copy);
  }
}

/**
 * Content images are not fetched: the page's CSP allows only its own images, and fetching one would tell the
 * sender that (and when) the inbox was opened.
 */
export function imagePlaceholder(label: string, extraClass = ''): HTMLElement {
  return h(
    'span',
    { class: `wr-img ${extraClass}`.trim(), role: 'img', 'aria-label': label || '图片' },
    label ? `[图片] ${label}` : '图片',
  );
}

/** textcard `description` (发送应用消息 › 文本卡片消息 特殊说明): `<br>` and three div colours only. */
export const TEXTCARD_POLICY: HtmlPolicy = {
  tags: { div: ['class'], br: [] },
  classes: new Set(['gray', 'normal', 'highlight']),
};

/** mpnews `content`: the text structure of an article; no styles, no classes, no embedded media. */
export const MPNEWS_POLICY: HtmlPolicy = {
  tags: {
    p: [],
    br: [],
    div: [],
    section: [],
    span: [],
    strong: [],
    b: [],
    em: [],
    i: [],
    u: [],
    s: [],
    del: [],
    sub: [],
    sup: [],
    h1: [],
    h2: [],
    h3: [],
    h4: [],
    h5: [],
    h6: [],
    blockquote: [],
    pre: [],
    code: [],
    hr: [],
    ul: [],
    ol: [],
    li: [],
    a: ['href'],
    table: [],
    thead: [],
    tbody: [],
    tr: [],
    td: ['colspan', 'rowspan'],
    th: ['colspan', 'rowspan'],
  },
};

import {
  ELLIPSIS,
  type FontColor,
  fitBlocks,
  LIMITS,
  type Line,
  type LinkStyle,
  line,
  link,
  ROBOT_LIMITS,
  text,
  toMarkdownLine,
  toTextLine,
  truncateChars,
  truncateUtf8,
  utf8Bytes,
} from '#lib/messages/index.js';

/**
 * What every source turns a payload into, and the one place that decides how it looks as WeCom markdown, text, a
 * textcard or a template card — so all sources truncate, colour and link the same way.
 */

export type Tone = 'alert' | 'warning' | 'ok' | 'info';

export interface NoticeLink {
  text: string;
  url: string;
}

export interface NoticeField {
  key: string;
  value: string;
}

export interface Notice {
  /** Vendor name shown on the card: `Alertmanager`, `GitHub`. */
  source: string;
  tone: Tone;
  /** Short status shown before the title: `FIRING:2`, `merged`, `failed`. */
  badge?: string;
  title: string;
  summary?: string;
  /** Key facts: repository, branch, severity. The first six become a card's horizontal content. */
  fields: NoticeField[];
  /** Repeated entries (alerts, commits, failed jobs); the first line of each is its title. Dropped whole when long. */
  items: Line[][];
  /** Entries the vendor itself left out (Alertmanager truncatedAlerts, GitLab commits beyond 20). */
  hiddenItems?: number;
  /** Plural noun for the "… N more" line. */
  itemNoun: string;
  /** The first is the main target (card click, textcard button); only http(s) URLs. */
  links: NoticeLink[];
}

/** A notice factory for one vendor: sources without repeated entries leave items empty. */
export const noticeFrom =
  (source: string) =>
  (n: Omit<Notice, 'source' | 'items' | 'itemNoun'> & Partial<Notice>): Notice => ({
    source,
    items: [],
    itemNoun: 'items',
    ...n,
  });

export type RenderedMessage =
  | { msgtype: 'markdown'; markdown: { content: string } }
  | { msgtype: 'markdown_v2'; markdown_v2: { content: string } }
  | { msgtype: 'text'; text: { content: string } }
  | { msgtype: 'textcard'; textcard: { title: string; description: string; url: string } }
  | { msgtype: 'template_card'; template_card: Record<string, unknown> };

const TONE_COLOR: Record<Tone, FontColor> = {
  alert: 'warning',
  warning: 'warning',
  ok: 'info',
  info: 'comment',
};
/** template_card source.desc_color: 0 grey, 1 black, 2 red, 3 green. */
const TONE_CARD_COLOR: Record<Tone, number> = { alert: 2, warning: 2, ok: 3, info: 0 };

/**
 * Display lengths WeCom recommends for template card text ("建议不超过N个字", 发送应用消息 › 模板卡片消息); the client
 * cuts longer text on screen, so the gateway cuts first, at a character boundary with an ellipsis.
 */
// Titles get about twice the recommendation: a cut title loses the very words that say what happened.
const CARD_TEXT = { title: 64, desc: 88, keyname: 10, value: 30, jumpTitle: 13, subTitleBytes: 336 } as const;

export const isHttpUrl = (url: string | null | undefined): url is string =>
  typeof url === 'string' && /^https?:\/\/[^\s]+$/i.test(url) && URL.canParse(url);

const headline = (n: Notice): string => (n.badge ? `[${n.badge}] ${n.title}` : n.title);

function moreText(n: Notice, dropped: number): string | undefined {
  const count = dropped + (n.hiddenItems ?? 0);
  return count > 0 ? `${ELLIPSIS} ${count} more ${n.itemNoun}` : undefined;
}

interface Parts {
  head: Line[];
  tail: Line[];
}

function parts(n: Notice): Parts {
  const color = TONE_COLOR[n.tone];
  const title = n.badge
    ? line('heading', [text(`[${n.badge}]`, { color }), text(` ${n.title}`)], 2)
    : line('heading', [text(n.title)], 2);
  const head = [title];
  if (n.summary) head.push(line('quote', [text(n.summary)]));
  for (const f of n.fields)
    head.push(line('quote', [text(`${f.key}:`, { bold: true }), text(` ${f.value}`)]));
  const links = n.links.filter((l) => isHttpUrl(l.url));
  const tail: Line[] = [];
  if (links.length > 0) {
    const inlines = links.flatMap((l, i) =>
      i === 0 ? [link(l.text, l.url)] : [text(' · '), link(l.text, l.url)],
    );
    tail.push(line('paragraph', inlines));
  }
  return { head, tail };
}

function fitSerialized(n: Notice, serialize: (l: Line) => string, maxBytes: number): string {
  const { head, tail } = parts(n);
  return fitBlocks(
    {
      head: head.map(serialize),
      blocks: n.items.map((item) => item.map(serialize)),
      tail: tail.map(serialize),
      more: (dropped) => {
        const more = moreText(n, dropped);
        return more === undefined
          ? undefined
          : serialize(line('paragraph', [text(more, { color: 'comment' })]));
      },
    },
    maxBytes,
  );
}

/** WeCom markdown; `maxBytes` 2,048 for an app (the default), 4,096 for a group robot. */
export function toMarkdown(n: Notice, maxBytes: number = LIMITS.markdown.maxContentBytes): string {
  return fitSerialized(n, toMarkdownLine, maxBytes);
}

/** markdown_v2 has no colour: the same line with its text plain. */
const uncoloured = (l: Line): Line => ({
  ...l,
  inlines: l.inlines.map((i) => (i.kind === 'text' && i.color ? { ...i, color: undefined } : i)),
});
/** A table cell: one line, its pipes escaped. */
const cell = (s: string) =>
  s
    .replace(/\|/g, '\\|')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
const inlineV2 = (l: Line) => toMarkdownLine({ ...uncoloured(l), kind: 'paragraph' });

/**
 * A group robot's markdown_v2 (4,096 bytes): the title and summary as in markdown, the fields and the entries as
 * tables — an alert per row, its first line in the first column and the rest beside it — and the links after them.
 * No colour (markdown_v2 has none): the badge says the state.
 */
export function toMarkdownV2(n: Notice): string {
  const { head, tail } = parts(n);
  const title = head[0] ? [toMarkdownLine(uncoloured(head[0]))] : [];
  const summary = n.summary ? [`> ${n.summary}`] : [];
  const fields =
    n.fields.length > 0
      ? ['', '| | |', '| :-- | :-- |', ...n.fields.map((f) => `| **${cell(f.key)}** | ${cell(f.value)} |`)]
      : [];
  const rows = n.items.map((item) => {
    const [first, ...rest] = item;
    const detail = rest
      .map((l) => cell(inlineV2(l)))
      .filter(Boolean)
      .join(' · ');
    return [`| ${first ? cell(inlineV2(first)) : ''} | ${detail} |`];
  });
  const table = rows.length > 0 ? ['', `| ${n.itemNoun} | |`, '| :-- | :-- |'] : [];
  // A blank line ends the table: a line after it would be read as one more row.
  const after = (lines: string[]) => (lines.length > 0 ? ['', ...lines] : []);
  return fitBlocks(
    {
      head: [...title, ...summary, ...fields, ...table],
      blocks: rows,
      tail: after(tail.map((l) => toMarkdownLine(uncoloured(l)))),
      more: (dropped) => {
        const more = moreText(n, dropped);
        return more === undefined ? undefined : `\n*${more}*`;
      },
    },
    ROBOT_LIMITS.markdown_v2.maxContentBytes,
  );
}

export function toText(n: Notice, links: LinkStyle = 'anchor'): string {
  return fitSerialized(n, (l) => toTextLine(l, links), LIMITS.text.maxContentBytes);
}

/** Plain text without links: a textcard description renders none, and "Source · Silence" alone means nothing. */
const withoutLinks = (l: Line): string =>
  toTextLine({ ...l, inlines: l.inlines.filter((i) => i.kind !== 'link') }, 'none')
    .replace(/(\s*·\s*)+$/, '')
    .replace(/^(\s*·\s*)+/, '')
    .replace(/(\s·\s*){2,}/g, ' · ');

function toTextCard(n: Notice, url: string): RenderedMessage {
  const plain = (l: Line) => toTextLine(l, 'none');
  const lines: Line[] = [];
  if (n.summary) lines.push(line('paragraph', [text(n.summary)]));
  for (const f of n.fields) lines.push(line('paragraph', [text(`${f.key}: ${f.value}`)]));
  const description = fitBlocks(
    {
      head: lines.map(plain),
      blocks: n.items.map((item) => item.map(withoutLinks).filter((l) => l.trim() !== '')),
      more: (dropped) => moreText(n, dropped),
    },
    LIMITS.textcard.maxDescriptionBytes,
  );
  return {
    msgtype: 'textcard',
    textcard: {
      title: truncateUtf8(headline(n), LIMITS.textcard.maxTitleBytes),
      description: description || n.title,
      url,
    },
  };
}

function toTemplateCard(n: Notice, primary: NoticeLink, others: NoticeLink[]): RenderedMessage {
  const card: Record<string, unknown> = {
    card_type: 'text_notice',
    source: { desc: n.badge ? `${n.source} · ${n.badge}` : n.source, desc_color: TONE_CARD_COLOR[n.tone] },
    main_title: {
      title: truncateChars(n.title, CARD_TEXT.title),
      ...(n.summary ? { desc: truncateChars(n.summary, CARD_TEXT.desc) } : {}),
    },
  };
  if (n.items.length > 0) {
    card.sub_title_text = fitBlocks(
      {
        head: [],
        blocks: n.items.map((item) => item.slice(0, 1).map((l) => toTextLine(l, 'none'))),
        more: (dropped) => moreText(n, dropped),
      },
      CARD_TEXT.subTitleBytes,
    );
  }
  const fields = n.fields.slice(0, LIMITS.templateCard.maxHorizontalContent);
  if (fields.length > 0) {
    card.horizontal_content_list = fields.map((f) => ({
      keyname: truncateChars(f.key, CARD_TEXT.keyname),
      value: truncateChars(f.value, CARD_TEXT.value),
    }));
  }
  const jumps = others.slice(0, LIMITS.templateCard.maxJumps);
  if (jumps.length > 0) {
    card.jump_list = jumps.map((l) => ({
      type: 1,
      title: truncateChars(l.text, CARD_TEXT.jumpTitle),
      url: l.url,
    }));
  }
  card.card_action = { type: 1, url: primary.url };
  return { msgtype: 'template_card', template_card: card };
}

/**
 * Renders a notice as the requested message type, within WeCom's limits. A textcard or a template card needs a
 * link to click: without one the notice is sent as markdown (template card) or text (textcard) instead.
 *
 * @example renderNotice(notice, 'template_card')
 */
export function renderNotice(
  n: Notice,
  msgtype: RenderedMessage['msgtype'],
  opts: { markdownBytes?: number } = {},
): RenderedMessage {
  const [primary, ...others] = n.links.filter((l) => isHttpUrl(l.url));
  switch (msgtype) {
    case 'markdown_v2':
      return { msgtype: 'markdown_v2', markdown_v2: { content: toMarkdownV2(n) } };
    case 'template_card':
      return primary ? toTemplateCard(n, primary, others) : renderNotice(n, 'markdown', opts);
    case 'textcard':
      return primary && utf8Bytes(primary.url) <= LIMITS.textcard.maxUrlBytes
        ? toTextCard(n, primary.url)
        : renderNotice(n, 'text');
    case 'text':
      return { msgtype: 'text', text: { content: toText(n) } };
    default:
      return { msgtype: 'markdown', markdown: { content: toMarkdown(n, opts.markdownBytes) } };
  }
}

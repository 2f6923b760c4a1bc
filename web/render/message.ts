/**
 * Message renderers shared by the simulator inbox and the operator console's preview: a WeCom message body shown
 * as the WeCom client shows it. Content is attacker-controlled, so text is only ever set as text, and the HTML
 * WeCom allows (textcard descriptions, mpnews articles) goes through an allow-list (./allow-list.ts).
 *
 * @example
 * import { renderMessage } from '../render/message.js';
 * import '../render/message.css';
 * list.append(renderMessage({ msgtype: 'text', text: { content: '告警 https://grafana.example/d/1' } }));
 */
import { type Child, h } from '../shared/dom.js';
import { safeHref } from '../shared/links.js';
import { imagePlaceholder, MPNEWS_POLICY, sanitize, TEXTCARD_POLICY } from './allow-list.js';
import { isKnownCardType, renderTemplateCard } from './template-card.js';
import { renderMarkdownContent, renderTextContent } from './text.js';
import { type Json, list, type MessageBody, obj, type RenderOptions, str } from './types.js';

export { renderMarkdownContent, renderTextContent } from './text.js';
export type { CardAction, MessageBody, MessageState, RenderOptions } from './types.js';

/** textcard's button text: "默认为'详情'， 不超过4个文字，超过自动截断" (发送应用消息 › 文本卡片消息). */
const TEXTCARD_BTN_MAX = 4;

type Renderer = (content: Json, options: RenderOptions, body: MessageBody) => HTMLElement | undefined;

const RENDERERS: Record<string, Renderer> = {
  text: (c) => renderTextContent(str(c.content)),
  markdown: (c) => renderMarkdownContent(str(c.content)),
  // A group robot's markdown_v2 through the markdown renderer: its tables and lists show as the lines the robot
  // sent, which is what clients before 4.1.36 show too.
  markdown_v2: (c) => renderMarkdownContent(str(c.content)),
  textcard: (c) => renderTextcard(c),
  news: (c) => renderArticles(list(c.articles), 'news'),
  mpnews: (c) => renderArticles(list(c.articles), 'mpnews'),
  template_card: (c, options) => (isKnownCardType(c.card_type) ? renderTemplateCard(c, options) : undefined),
  image: (c) => h('div', { class: 'wr-media' }, imagePlaceholder(str(c.media_id))),
  voice: (c) => h('div', { class: 'wr-media' }, `[语音] ${str(c.media_id)}`),
  file: (c) => h('div', { class: 'wr-media wr-file' }, `[文件] ${str(c.media_id)}`),
  video: (c) =>
    h(
      'div',
      { class: 'wr-media' },
      h('div', { class: 'wr-card-title' }, `[视频] ${str(c.title)}`),
      h('div', { class: 'wr-card-desc' }, str(c.description)),
    ),
  miniprogram_notice: (c) =>
    h(
      'div',
      { class: 'wr-card' },
      h('div', { class: 'wr-card-title' }, str(c.title)),
      h('div', { class: 'wr-card-desc' }, str(c.description)),
      h(
        'dl',
        { class: 'wr-card-hlist' },
        ...list(c.content_item).flatMap((i) => [h('dt', {}, str(i.key)), h('dd', {}, str(i.value))]),
      ),
      h('div', { class: 'wr-card-action' }, `小程序 ${str(c.appid)}`),
    ),
};

/**
 * One message as a bubble: `body` is what the gateway sends to WeCom (`{msgtype, text|markdown|…}`). A type the
 * client would not know is shown as labelled JSON; a recalled message as the client's placeholder.
 *
 * @example renderMessage(body, { onCardAction: (a) => click(msgid, a), state: { replaceName: '已处理' } })
 */
export function renderMessage(body: MessageBody, options: RenderOptions = {}): HTMLElement {
  const msgtype = str(body.msgtype);
  const state = options.state ?? {};
  const root = h('article', {
    class: `wr-msg wr-msg-${msgtype.replace(/[^a-z_]/gi, '')}${body.safe ? ' wr-safe' : ''}`,
    'data-testid': 'message',
    'data-msgtype': msgtype,
  });
  if (state.recalled) {
    root.classList.add('wr-recalled');
    root.append(
      h('div', { class: 'wr-recalled-note', 'data-testid': 'recalled' }, '此消息已撤回 (recalled)'),
    );
    return root;
  }
  const badges: Child[] = [];
  if (body.safe)
    badges.push(
      h(
        'span',
        { class: 'wr-badge wr-badge-safe', 'data-testid': 'safe' },
        body.safe === 2 ? '仅企业内分享' : '保密消息',
      ),
    );
  if (state.replaced)
    badges.push(h('span', { class: 'wr-badge', 'data-testid': 'card-replaced' }, '卡片已更新 (updated)'));
  if (state.replaceName)
    badges.push(h('span', { class: 'wr-badge', 'data-testid': 'card-updated' }, '按钮已更新 (updated)'));
  if (badges.length > 0) root.append(h('div', { class: 'wr-badges' }, ...badges));
  const renderer = RENDERERS[msgtype];
  const content = obj(body[msgtype]);
  const shown = renderer?.(content, options, body) ?? unknownBlock(body);
  root.append(shown);
  return root;
}

function unknownBlock(body: MessageBody): HTMLElement {
  const msgtype = str(body.msgtype);
  const cardType = msgtype === 'template_card' ? str(obj(body.template_card).card_type) : '';
  const label = cardType ? `template_card ${cardType}` : msgtype || '(no msgtype)';
  return h(
    'div',
    { class: 'wr-unknown', 'data-testid': 'unknown-message' },
    h('div', { class: 'wr-unknown-label' }, `不支持的消息类型: ${label}`),
    h('pre', { class: 'wr-json' }, JSON.stringify(body, null, 2)),
  );
}

function renderTextcard(c: Json): HTMLElement {
  const btn = [...(str(c.btntxt) || '详情')].slice(0, TEXTCARD_BTN_MAX).join('');
  const href = safeHref(str(c.url));
  const footer =
    href && /^https?:/i.test(str(c.url))
      ? h(
          'a',
          {
            class: 'wr-textcard-btn',
            href,
            target: '_blank',
            rel: 'noopener noreferrer',
            'data-testid': 'textcard-button',
          },
          btn,
        )
      : h('span', { class: 'wr-textcard-btn', 'data-testid': 'textcard-button' }, btn);
  return h(
    'div',
    { class: 'wr-card wr-textcard', 'data-testid': 'textcard' },
    h('div', { class: 'wr-card-title', 'data-testid': 'textcard-title' }, str(c.title)),
    h(
      'div',
      { class: 'wr-textcard-desc', 'data-testid': 'textcard-description' },
      sanitize(str(c.description), TEXTCARD_POLICY),
    ),
    footer,
  );
}

/** news and mpnews: the first article as a cover with its title over it, the others as rows with a thumbnail. */
function renderArticles(articles: Json[], type: 'news' | 'mpnews'): HTMLElement {
  const root = h('div', { class: `wr-card wr-articles wr-${type}`, 'data-testid': 'articles' });
  articles.forEach((a, i) => {
    const title = str(a.title);
    const url = type === 'news' ? str(a.url) : str(a.content_source_url);
    const href = /^https?:/i.test(url) ? safeHref(url) : undefined;
    const titleEl = href
      ? h('a', { href, target: '_blank', rel: 'noopener noreferrer', class: 'wr-article-title' }, title)
      : h('span', { class: 'wr-article-title' }, title);
    const hasPic = type === 'news' ? str(a.picurl) !== '' : str(a.thumb_media_id) !== '';
    const desc = type === 'news' ? str(a.description) : str(a.digest);
    const item = h(
      'div',
      {
        class: i === 0 ? 'wr-article wr-article-cover' : 'wr-article wr-article-row',
        'data-testid': 'article',
      },
      hasPic || i === 0 ? imagePlaceholder('', i === 0 ? 'wr-article-pic' : 'wr-article-thumb') : null,
      titleEl,
      i === 0 && desc ? h('div', { class: 'wr-card-desc' }, desc) : null,
    );
    if (type === 'mpnews' && str(a.content)) item.append(mpnewsBody(a));
    root.append(item);
  });
  return root;
}

/** The article page a tap opens: author, the content through the allow-list, and "阅读原文". */
function mpnewsBody(a: Json): HTMLElement {
  const source = str(a.content_source_url);
  const href = /^https?:/i.test(source) ? safeHref(source) : undefined;
  return h(
    'details',
    { class: 'wr-mpnews-page' },
    h('summary', {}, '阅读全文'),
    str(a.author) ? h('div', { class: 'wr-card-desc' }, str(a.author)) : null,
    h(
      'div',
      { class: 'wr-mpnews-content', 'data-testid': 'mpnews-content' },
      sanitize(str(a.content), MPNEWS_POLICY),
    ),
    href ? h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, '阅读原文') : null,
  );
}

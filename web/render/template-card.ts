import { append, type Child, h } from '../shared/dom.js';
import { safeHref } from '../shared/links.js';
import { imagePlaceholder } from './allow-list.js';
import { type CardAction, type Json, list, obj, type RenderOptions, str } from './types.js';

const CARD_TYPES = new Set([
  'text_notice',
  'news_notice',
  'button_interaction',
  'vote_interaction',
  'multiple_interaction',
]);

export const isKnownCardType = (t: unknown): boolean => CARD_TYPES.has(str(t));

const opens = (url: unknown, label: Child, attrs: Record<string, string> = {}): HTMLElement => {
  const href = safeHref(str(url));
  return href && /^https?:/i.test(str(url))
    ? h('a', { href, target: '_blank', rel: 'noopener noreferrer', ...attrs }, label)
    : h('span', attrs, label);
};

/**
 * A template card, top to bottom in the client's order (发送应用消息 › 模板卡片消息; struct reference path/101032):
 * source, main title, then the type's own blocks, then the shared lists and the card's controls.
 */
export function renderTemplateCard(card: Json, options: RenderOptions): HTMLElement {
  const type = str(card.card_type);
  const root = h('div', {
    class: `wr-card wr-card-${type}`,
    'data-testid': 'template-card',
    'data-card-type': type,
  });
  const controls = new Controls(card, options);
  root.append(header(card, controls));
  const main = obj(card.main_title);
  if (str(main.title) || str(main.desc)) {
    root.append(
      h(
        'div',
        { class: 'wr-card-main', 'data-testid': 'card-main-title' },
        str(main.title) ? h('div', { class: 'wr-card-title' }, str(main.title)) : null,
        str(main.desc) ? h('div', { class: 'wr-card-desc' }, str(main.desc)) : null,
      ),
    );
  }
  const emphasis = obj(card.emphasis_content);
  if (str(emphasis.title) || str(emphasis.desc)) {
    root.append(
      h(
        'div',
        { class: 'wr-card-emphasis' },
        h('div', { class: 'wr-card-emphasis-title' }, str(emphasis.title)),
        h('div', { class: 'wr-card-emphasis-desc' }, str(emphasis.desc)),
      ),
    );
  }
  const quote = obj(card.quote_area);
  if (str(quote.title) || str(quote.quote_text)) {
    root.append(
      h(
        'div',
        { class: 'wr-card-quote' },
        str(quote.title) ? h('div', { class: 'wr-card-quote-title' }, str(quote.title)) : null,
        h('div', { class: 'wr-card-quote-text' }, str(quote.quote_text)),
      ),
    );
  }
  if (type === 'news_notice') append(root, ...newsNoticeBlocks(card));
  if (str(card.sub_title_text)) root.append(h('div', { class: 'wr-card-sub' }, str(card.sub_title_text)));
  append(root, ...horizontalList(card), ...jumpList(card), ...controls.blocks());
  const action = obj(card.card_action);
  if (action.type === 1 && safeHref(str(action.url)))
    root.append(opens(action.url, '查看详情 ›', { class: 'wr-card-action', 'data-testid': 'card-action' }));
  else if (action.type === 2)
    root.append(h('div', { class: 'wr-card-action' }, `小程序 ${str(action.appid)}`));
  return root;
}

function header(card: Json, controls: Controls): HTMLElement {
  const source = obj(card.source);
  const color = Number(source.desc_color ?? 0);
  return h(
    'div',
    { class: 'wr-card-source' },
    str(source.icon_url) ? imagePlaceholder('', 'wr-card-icon') : null,
    h(
      'span',
      { class: `wr-card-source-desc wr-desc-color-${[0, 1, 2, 3].includes(color) ? color : 0}` },
      str(source.desc),
    ),
    controls.menu(),
  );
}

function newsNoticeBlocks(card: Json): Child[] {
  const out: Child[] = [];
  const image = obj(card.card_image);
  const area = obj(card.image_text_area);
  if (str(image.url)) out.push(imagePlaceholder('card_image', 'wr-card-image'));
  else if (str(area.title) || str(area.image_url)) {
    out.push(
      h(
        'div',
        { class: 'wr-card-image-text' },
        imagePlaceholder('', 'wr-card-thumb'),
        h(
          'div',
          {},
          opens(area.url, str(area.title), { class: 'wr-card-title' }),
          h('div', { class: 'wr-card-desc' }, str(area.desc)),
        ),
      ),
    );
  }
  for (const item of list(card.vertical_content_list)) {
    out.push(
      h(
        'div',
        { class: 'wr-card-vertical' },
        h('div', { class: 'wr-card-vertical-title' }, str(item.title)),
        h('div', { class: 'wr-card-desc' }, str(item.desc)),
      ),
    );
  }
  return out;
}

function horizontalList(card: Json): Child[] {
  const rows = list(card.horizontal_content_list);
  if (rows.length === 0) return [];
  return [
    h(
      'dl',
      { class: 'wr-card-hlist' },
      ...rows.flatMap((row) => {
        const value = str(row.value);
        let shown: Child = value;
        if (row.type === 1) shown = opens(row.url, value);
        else if (row.type === 2) shown = h('span', { class: 'wr-card-file' }, `[附件] ${value}`);
        else if (row.type === 3) shown = h('span', { class: 'wr-card-member' }, value);
        return [h('dt', {}, str(row.keyname)), h('dd', {}, shown)];
      }),
    ),
  ];
}

function jumpList(card: Json): Child[] {
  const rows = list(card.jump_list);
  if (rows.length === 0) return [];
  return [
    h(
      'div',
      { class: 'wr-card-jumps' },
      ...rows.map((row) =>
        row.type === 2
          ? h('span', { class: 'wr-card-jump' }, `${str(row.title)} (小程序)`)
          : opens(row.url, str(row.title), { class: 'wr-card-jump' }),
      ),
    ),
  ];
}

/** Radio groups are page-wide by name: each card's questions get names of their own. */
let cardsDrawn = 0;

/** The card's interactive parts and what pressing them sends. */
class Controls {
  readonly #card: Json;
  readonly #options: RenderOptions;
  readonly #choices = new Map<string, () => string[]>();
  readonly #all: (HTMLButtonElement | HTMLSelectElement | HTMLInputElement)[] = [];

  readonly #group = `card-${++cardsDrawn}`;

  constructor(card: Json, options: RenderOptions) {
    this.#card = card;
    this.#options = options;
  }

  /** A state that disables the card's controls: recalled, greyed out by an update, or pressed with a replace_text. */
  get #doneText(): string | undefined {
    const s = this.#options.state ?? {};
    if (s.replaceName) return s.replaceName;
    if (s.pressed && str(this.#card.replace_text)) return str(this.#card.replace_text);
    return undefined;
  }

  get #interactive(): boolean {
    return (
      this.#options.onCardAction !== undefined &&
      !this.#options.state?.recalled &&
      this.#doneText === undefined
    );
  }

  #selected(): Record<string, string[]> {
    return Object.fromEntries(
      [...this.#choices].map(([key, read]) => [key, read()] as const).filter(([, ids]) => ids.length > 0),
    );
  }

  #press(kind: CardAction['kind'], key: string): void {
    const run = this.#options.onCardAction;
    if (!run) return;
    const selected = kind === 'menu' ? {} : this.#selected();
    for (const c of this.#all) c.disabled = true;
    Promise.resolve(run({ kind, key, selected })).catch(() => {
      for (const c of this.#all) c.disabled = false;
    });
  }

  #button(
    text: string,
    kind: CardAction['kind'],
    key: string,
    cls: string,
    testid: string,
  ): HTMLButtonElement {
    const b = h('button', { type: 'button', class: cls, 'data-testid': testid, 'data-key': key }, text);
    b.disabled = !this.#interactive;
    b.addEventListener('click', () => this.#press(kind, key));
    this.#all.push(b);
    return b;
  }

  #select(questionKey: string, title: string, options: Json[], defaultId: string): HTMLElement {
    const selectedId = this.#options.state?.selected?.[questionKey]?.[0] ?? defaultId;
    const select = h(
      'select',
      {
        class: 'wr-card-select',
        'data-testid': 'card-select',
        'data-question-key': questionKey,
        'aria-label': title || questionKey,
      },
      ...options.map((o) =>
        h('option', { value: str(o.id), selected: str(o.id) === selectedId }, str(o.text)),
      ),
    );
    select.disabled = !this.#interactive;
    this.#all.push(select);
    this.#choices.set(questionKey, () => (select.value ? [select.value] : []));
    return h('label', { class: 'wr-card-select-row' }, h('span', {}, title), select);
  }

  menu(): Child {
    const menu = obj(this.#card.action_menu);
    const actions = list(menu.action_list);
    if (actions.length === 0) return null;
    const items = h(
      'div',
      { class: 'wr-card-menu-items', hidden: true, 'data-testid': 'card-menu-items' },
      ...actions.map((a) =>
        this.#button(str(a.text), 'menu', str(a.key), 'wr-card-menu-item', 'card-menu-item'),
      ),
    );
    const toggle = h(
      'button',
      {
        type: 'button',
        class: 'wr-card-menu',
        'aria-label': str(menu.desc) || '更多',
        'aria-expanded': 'false',
        'data-testid': 'card-menu',
      },
      '⋯',
    );
    toggle.addEventListener('click', () => {
      items.hidden = !items.hidden;
      toggle.setAttribute('aria-expanded', String(!items.hidden));
    });
    return h('span', { class: 'wr-card-menu-wrap' }, toggle, items);
  }

  blocks(): Child[] {
    const card = this.#card;
    const out: Child[] = [];
    const selection = obj(card.button_selection);
    if (str(selection.question_key))
      out.push(
        this.#select(
          str(selection.question_key),
          str(selection.title),
          list(selection.option_list),
          str(selection.selected_id),
        ),
      );
    const checkbox = obj(card.checkbox);
    if (str(checkbox.question_key)) out.push(this.#checkbox(checkbox));
    for (const s of list(card.select_list))
      out.push(this.#select(str(s.question_key), str(s.title), list(s.option_list), str(s.selected_id)));
    const done = this.#doneText;
    const buttons = list(card.button_list);
    const submit = obj(card.submit_button);
    if (done !== undefined && (buttons.length > 0 || str(submit.key))) {
      const b = h(
        'button',
        { type: 'button', class: 'wr-btn wr-btn-done', 'data-testid': 'card-done' },
        done,
      );
      b.disabled = true;
      out.push(h('div', { class: 'wr-card-buttons' }, b));
      return out;
    }
    if (buttons.length > 0) {
      out.push(
        h(
          'div',
          { class: 'wr-card-buttons' },
          ...buttons.map((b) => {
            const style = [1, 2, 3, 4].includes(Number(b.style)) ? Number(b.style) : 1;
            const cls = `wr-btn wr-btn-style-${style}`;
            if (b.type === 1)
              return opens(b.url, str(b.text), { class: cls, 'data-testid': 'card-link-button' });
            return this.#button(str(b.text), 'button', str(b.key), cls, 'card-button');
          }),
        ),
      );
    }
    if (str(submit.key)) {
      out.push(
        h(
          'div',
          { class: 'wr-card-buttons' },
          this.#button(
            str(submit.text) || '提交',
            'submit',
            str(submit.key),
            'wr-btn wr-btn-style-1',
            'card-submit',
          ),
        ),
      );
    }
    return out;
  }

  #checkbox(checkbox: Json): HTMLElement {
    const key = str(checkbox.question_key);
    const multi = checkbox.mode === 1;
    const chosen = this.#options.state?.selected?.[key];
    const inputs: HTMLInputElement[] = [];
    const box = h(
      'fieldset',
      { class: 'wr-card-checkbox', 'data-testid': 'card-checkbox', 'data-question-key': key },
      h('legend', {}, multi ? '多选' : '单选'),
      ...list(checkbox.option_list).map((o) => {
        const input = h('input', {
          type: multi ? 'checkbox' : 'radio',
          name: `${this.#group}-q-${key}`,
          value: str(o.id),
          checked: chosen ? chosen.includes(str(o.id)) : o.is_checked === true,
          'data-testid': 'card-option',
        });
        input.disabled = !this.#interactive;
        inputs.push(input);
        this.#all.push(input);
        return h('label', { class: 'wr-card-option' }, input, h('span', {}, str(o.text)));
      }),
    );
    this.#choices.set(key, () => inputs.filter((i) => i.checked).map((i) => i.value));
    return box;
  }
}

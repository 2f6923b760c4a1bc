import '../render/message.css';
import { type MessageBody, renderMessage } from '../render/message.js';
import type { MessageState } from '../render/types.js';
import { h } from '../shared/dom.js';

/**
 * The message as the WeCom client shows it, with the shared renderers of the simulator inbox (web/render), and
 * its JSON beside it. No `onCardAction`: in the console a card is a preview, its buttons disabled.
 */
export function preview(body: MessageBody, state: MessageState): HTMLElement {
  return h(
    'div',
    { class: 'preview', 'data-testid': 'preview' },
    h('div', { class: 'preview-phone' }, renderMessage(body, { state })),
    h(
      'details',
      { class: 'preview-source' },
      h('summary', {}, 'JSON'),
      h('pre', { class: 'json' }, JSON.stringify(body, null, 2)),
    ),
  );
}

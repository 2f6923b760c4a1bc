import { h } from '../shared/dom.js';

/** The message body as WeCom would show it; until the shared renderers exist, its JSON. */
export function preview(body: Record<string, unknown>, _status: string): HTMLElement {
  return h('pre', { class: 'json', 'data-testid': 'preview' }, JSON.stringify(body, null, 2));
}

/** Building blocks of the console's pages: states that say what to do, badges, tables, links. */
import { type Child, h } from '../shared/dom.js';
import { ApiError } from './api.js';
import { statusTone, timestamp } from './format.js';
import { hrefOf, type Route } from './routes.js';

export const basePath = (): string => document.body.dataset.basePath ?? '/console';

/**
 * Minutes east of UTC of the browser's zone, in which times are shown and entered, at an instant (ms): the offset
 * of that day, not today's, so a time across a daylight-saving change is not an hour off.
 */
export const offsetAt = (ms: number): number =>
  Number.isNaN(ms) ? -new Date().getTimezoneOffset() : -new Date(ms).getTimezoneOffset();

/** The same for a `datetime-local` value (`2026-12-01T08:30:05`), which the browser reads as local time. */
export const offsetAtLocal = (value: string): number => offsetAt(new Date(value).getTime());

export const time = (iso: string | null | undefined): HTMLElement =>
  iso
    ? h('time', { datetime: iso, title: iso }, timestamp(iso, offsetAt(Date.parse(iso))))
    : h('span', {}, '—');

/** An in-app link: a real href (open in a new tab, copy), followed without a reload (see main.ts). */
export const link = (route: Route, ...children: Child[]): HTMLAnchorElement =>
  h('a', { href: hrefOf(basePath(), route), 'data-route': true }, ...children);

export const badge = (status: string, testid = 'status'): HTMLElement =>
  h('span', { class: `badge badge-${statusTone(status)}`, 'data-testid': testid }, status);

export const loading = (what: string): HTMLElement =>
  h('p', { class: 'state state-loading', role: 'status', 'aria-live': 'polite' }, `Loading ${what}…`);

export const empty = (message: string, hint?: string): HTMLElement =>
  h(
    'div',
    { class: 'state state-empty', 'data-testid': 'empty' },
    h('p', {}, message),
    hint ? h('p', { class: 'muted' }, hint) : null,
  );

/** What went wrong and what to do about it, for each way a call can fail. */
export function failure(err: unknown, what: string, scope?: string): HTMLElement {
  let message: string;
  let hint: string;
  if (err instanceof ApiError) {
    message = `Could not load ${what}: ${err.message}`;
    if (err.status === 0) hint = 'Check the network and the gateway, then try again.';
    else if (err.status === 401) hint = 'The API key was not accepted. Sign in again with a valid key.';
    else if (err.status === 403)
      hint = scope
        ? `This API key lacks the ${scope} scope, or may not read this app. Ask for a key that has it.`
        : 'This API key may not read this app. Pick one of your apps, or ask for a key that may.';
    else if (err.status === 400)
      hint = err.details.length
        ? `Fix ${err.details.map((d) => `${d.field} (${d.message})`).join(', ')}.`
        : 'Check the filters.';
    else if (err.status === 404) hint = 'It does not exist, or belongs to an app this key may not read.';
    else if (err.status === 429 || err.status >= 500)
      hint = 'The gateway is busy or unwell; try again shortly.';
    else hint = 'Try again; if it persists, check the gateway logs.';
  } else {
    message = `Could not load ${what}.`;
    hint = err instanceof Error ? err.message : String(err);
  }
  return h(
    'div',
    { class: 'state state-error', role: 'alert', 'data-testid': 'error' },
    h('p', {}, message),
    h('p', { class: 'muted' }, hint),
  );
}

export const section = (title: string, ...children: Child[]): HTMLElement =>
  h('section', { class: 'panel' }, h('h2', {}, title), ...children);

/** A table; on a phone each row becomes a card of label: value lines, so the page never scrolls sideways. */
export function table(headers: string[], rows: HTMLTableRowElement[], testid?: string): HTMLElement {
  // Each cell names its column, for the phone layout that shows a row as a card (main.css).
  for (const r of rows) {
    [...r.cells].forEach((cell, i) => {
      const label = headers[i];
      if (label) cell.dataset.label = label;
    });
  }
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { 'data-testid': testid },
      h('thead', {}, h('tr', {}, ...headers.map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, ...rows),
    ),
  );
}

/** A row of cells; each cell's content in one box, so the phone layout has one label and one value per line. */
export const row = (...cells: Child[][]): HTMLTableRowElement =>
  h('tr', {}, ...cells.map((c) => h('td', {}, h('div', { class: 'cell' }, ...c))));

/** A definition list of label → value pairs; values left undefined are skipped. */
export function facts(pairs: [string, Child | Child[]][]): HTMLElement {
  return h(
    'dl',
    { class: 'facts' },
    ...pairs.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, ...(Array.isArray(v) ? v : [v]))]),
  );
}

export const button = (
  label: string,
  onClick: (b: HTMLButtonElement) => void,
  attrs: Record<string, string | boolean | undefined> = {},
): HTMLButtonElement => {
  const b = h('button', { type: 'button', ...attrs }, label);
  b.addEventListener('click', () => onClick(b));
  return b;
};

/** Replaces the content of `el`. */
export const show = (el: Element, ...children: Child[]): void => {
  el.replaceChildren();
  for (const c of children) if (c) el.append(c);
};

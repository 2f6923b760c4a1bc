/**
 * The operator console: a single page on the API's own origin. The URL is the state (page, filters), so every
 * view can be shared; the API key lives in this tab only (./session.ts).
 */
import './main.css';
import { h } from '../shared/dom.js';
import { whenUnauthorized } from './api.js';
import { forgetApps, keyApps, keyInfo, keyRobots, type PageContext } from './context.js';
import { renderApps } from './pages/apps.js';
import { renderDlq } from './pages/dlq.js';
import { renderEvents } from './pages/events.js';
import { renderMessagePage } from './pages/message.js';
import { renderMessages } from './pages/messages.js';
import { renderSignIn } from './pages/signin.js';
import { hrefOf, type MessageFilters, parseRoute, type Route } from './routes.js';
import { apiKey, signOut } from './session.js';
import { basePath, link } from './ui.js';

const NAV: { label: string; route: Route; pages: Route['page'][] }[] = [
  { label: 'Messages', route: { page: 'messages', filters: {} }, pages: ['messages', 'message'] },
  { label: 'Events', route: { page: 'events' }, pages: ['events'] },
  { label: 'Apps', route: { page: 'apps' }, pages: ['apps'] },
  { label: 'DLQ', route: { page: 'dlq', filters: {} }, pages: ['dlq'] },
];

const main = h('main', { id: 'main', tabindex: '-1' });
const nav = h('nav', { 'aria-label': 'Pages' });
const account = h('div', { class: 'account' });
const header = h(
  'header',
  { class: 'top' },
  h('a', { class: 'skip', href: '#main' }, 'Skip to content'),
  h('span', { class: 'brand' }, 'wecom-gateway'),
  nav,
  account,
);

const context: PageContext = {
  navigate(route, options = {}) {
    const href = hrefOf(basePath(), route);
    if (options.replace) history.replaceState(null, '', href);
    else history.pushState(null, '', href);
    render();
  },
  apps: keyApps,
  robots: keyRobots,
  key: keyInfo,
  lastMessages: () => lastMessages,
  rememberMessages(filters) {
    lastMessages = filters;
  },
};

let lastMessages: MessageFilters = {};

function currentRoute(): Route {
  return parseRoute(basePath(), location.pathname, location.search);
}

function render(): void {
  const route = currentRoute();
  if (!apiKey()) {
    nav.replaceChildren();
    account.replaceChildren();
    main.replaceChildren(renderSignIn(() => render()));
    document.title = 'Sign in · wecom-gateway console';
    return;
  }
  nav.replaceChildren(
    ...NAV.map((item) => {
      const a = link(item.route, item.label);
      if (item.pages.includes(route.page)) a.setAttribute('aria-current', 'page');
      return a;
    }),
  );
  const out = h('button', { type: 'button', class: 'secondary', 'data-testid': 'sign-out' }, 'Sign out');
  out.addEventListener('click', () => {
    signOut();
    forgetApps();
    lastMessages = {};
    render();
  });
  const who = h('span', { class: 'muted small key-name', 'data-testid': 'key-name' });
  keyInfo().then(
    (key) => {
      who.textContent = `key ${key.name}`;
      who.title = `scopes: ${key.scopes.join(', ')}`;
    },
    () => {},
  );
  account.replaceChildren(who, out);
  main.replaceChildren(pageOf(route));
}

function pageOf(route: Route): HTMLElement {
  const titled = (title: string, el: HTMLElement) => {
    document.title = `${title} · wecom-gateway console`;
    return el;
  };
  switch (route.page) {
    case 'messages':
      return titled('Messages', renderMessages(route.filters, context));
    case 'message':
      return titled(`Message ${route.id}`, renderMessagePage(route.id, context));
    case 'apps':
      return titled('Apps', renderApps(route.app, context));
    case 'dlq':
      return titled('DLQ', renderDlq(route.filters, context));
    case 'events':
      return titled('Events', renderEvents(route.app, context));
    case 'not-found':
      return titled(
        'Not found',
        h(
          'div',
          { class: 'state state-empty' },
          h('h1', {}, 'No such page'),
          h(
            'p',
            {},
            'The console has no page at this address. ',
            link({ page: 'messages', filters: {} }, 'Go to Messages'),
            '.',
          ),
        ),
      );
  }
}

// In-app links are followed without a reload; modified clicks (new tab, download) are left to the browser.
document.addEventListener('click', (event) => {
  if (event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const a = (event.target as Element | null)?.closest?.('a[data-route]');
  if (!(a instanceof HTMLAnchorElement) || a.origin !== location.origin) return;
  event.preventDefault();
  history.pushState(null, '', a.pathname + a.search);
  render();
  main.focus({ preventScroll: true });
  window.scrollTo(0, 0);
});
window.addEventListener('popstate', () => render());
whenUnauthorized(() => {
  signOut();
  forgetApps();
  render();
});

document.body.replaceChildren(header, main);
render();

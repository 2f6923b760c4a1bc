import { h } from '../../shared/dom.js';
import { api } from '../api.js';
import type { PageContext } from '../context.js';
import { relative } from '../format.js';
import { badge, empty, failure, link, loading, row, show, table, time } from '../ui.js';
import type { MessageSummary } from './messages.js';
import { recipientsOf } from './messages.js';

/** How many apps the feed reads at once, and how much of each: one page of GET /v1/messages per app. */
const MAX_APPS = 10;
const PER_APP = 20;
const EVENTS_PER_APP = 100;
const REFRESH_MS = 15_000;

interface FeedItem {
  at: string;
  node: HTMLTableRowElement;
}

interface Feed {
  items: FeedItem[];
  /** The app's WeCom events could not be read: why (the messages still show). */
  eventsError?: string;
}

/**
 * Recent activity across the key's apps, newest first: each app's latest messages with their current status
 * (GET /v1/messages is newest first), and the WeCom events of the last hour (GET /v1/events). No scan: one Query
 * per app and feed. Refreshes while the tab is visible.
 */
export function renderEvents(only: string | undefined, ctx: PageContext): HTMLElement {
  const results = h('div', { 'aria-live': 'polite' }, loading('recent events'));
  const stamp = h('p', { class: 'muted small' });
  const page = h(
    'div',
    { class: 'page' },
    h('h1', {}, 'Events'),
    h(
      'p',
      { class: 'muted' },
      'The latest messages of your apps with their status, and WeCom events (card presses, replies) of the last hour.',
    ),
    stamp,
    results,
  );
  const refresh = async () => {
    try {
      const apps = (await ctx.apps()).map((a) => a.app).filter((a) => only === undefined || a === only);
      if (apps.length === 0) {
        show(results, empty('This API key may read no apps.'));
        return;
      }
      const feeds = await Promise.all(apps.slice(0, MAX_APPS).map(feedOf));
      const items = feeds.flatMap((f) => f.items);
      items.sort((a, b) => b.at.localeCompare(a.at));
      stamp.textContent = `Updated ${new Date().toLocaleTimeString()}; refreshes every ${REFRESH_MS / 1000} s. Per app: its ${PER_APP} latest messages and up to ${EVENTS_PER_APP} WeCom events.`;
      const notes = [
        apps.length > MAX_APPS
          ? h(
              'p',
              { class: 'callout callout-warn', 'data-testid': 'events-partial' },
              `Showing the first ${MAX_APPS} of your ${apps.length} apps. Pick one: `,
              ...apps.flatMap((a, i) => [i ? ', ' : '', link({ page: 'events', app: a }, a)]),
              '.',
            )
          : null,
        ...feeds.flatMap((f, i) =>
          f.eventsError
            ? [
                h(
                  'p',
                  { class: 'callout callout-warn', 'data-testid': 'events-error' },
                  `WeCom events of ${apps[i]} could not be read (${f.eventsError}); its messages are shown.`,
                ),
              ]
            : [],
        ),
      ];
      show(
        results,
        ...notes,
        items.length
          ? table(
              ['When', 'App', 'What', 'Detail', 'Status'],
              items.map((i) => i.node),
              'events',
            )
          : empty('Nothing happened recently.', 'Send a message and it shows up here.'),
      );
    } catch (err) {
      show(results, failure(err, 'recent events', 'messages:read'));
    }
    setTimeout(() => {
      if (page.isConnected && document.visibilityState === 'visible') void refresh();
      else if (page.isConnected)
        document.addEventListener('visibilitychange', () => void refresh(), { once: true });
    }, REFRESH_MS);
  };
  void refresh();
  return page;
}

async function feedOf(app: string): Promise<Feed> {
  const now = Date.now();
  const since = new Date(now - 3600_000).toISOString();
  const [messages, events] = await Promise.all([
    api<{ messages: MessageSummary[] }>(`/v1/messages?app=${encodeURIComponent(app)}&limit=${PER_APP}`),
    api<{
      events: {
        id: string;
        received_at: string;
        message_id: string | null;
        event: Record<string, unknown>;
      }[];
    }>(
      `/v1/events?app=${encodeURIComponent(app)}&since=${encodeURIComponent(since)}&limit=${EVENTS_PER_APP}`,
    ).catch((err: unknown) => ({ events: [], error: err instanceof Error ? err.message : String(err) })),
  ]);
  const fromMessages = messages.messages.map(
    (m): FeedItem => ({
      at: m.updated_at,
      node: row(
        [time(m.updated_at), h('div', { class: 'muted small' }, relative(m.updated_at, now))],
        [app],
        [link({ page: 'message', id: m.id }, `${m.msgtype} message`)],
        [h('span', { class: 'recipients' }, recipientsOf(m))],
        [badge(m.status)],
      ),
    }),
  );
  const fromWecom = events.events.map(
    (e): FeedItem => ({
      at: e.received_at,
      node: row(
        [time(e.received_at), h('div', { class: 'muted small' }, relative(e.received_at, now))],
        [app],
        [
          e.message_id
            ? link({ page: 'message', id: e.message_id }, String(e.event.kind ?? 'event'))
            : String(e.event.kind ?? 'event'),
        ],
        [String(e.event.from ?? '')],
        [h('span', { class: 'badge badge-muted' }, 'WeCom')],
      ),
    }),
  );
  return {
    items: [...fromMessages, ...fromWecom],
    ...('error' in events ? { eventsError: events.error } : {}),
  };
}

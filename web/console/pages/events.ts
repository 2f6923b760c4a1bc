import { h } from '../../shared/dom.js';
import { api } from '../api.js';
import { type Channel, channelLabel } from '../channel.js';
import type { PageContext } from '../context.js';
import { relative } from '../format.js';
import { badge, empty, failure, link, loading, row, show, table, time } from '../ui.js';
import type { MessageSummary } from './messages.js';
import { recipientsOf } from './messages.js';

/** How many apps and robots the feed reads at once, and how much of each: one page of GET /v1/messages each. */
const MAX_CHANNELS = 10;
const PER_APP = 20;
const EVENTS_PER_APP = 100;
const REFRESH_MS = 15_000;

interface FeedItem {
  at: string;
  node: HTMLTableRowElement;
}

interface Feed {
  items: FeedItem[];
  /** The app's WeCom events could not be read: why (the messages still show). A robot has none. */
  eventsError?: string;
}

/**
 * Recent activity across the key's apps and group robots, newest first: each one's latest messages with their
 * current status (GET /v1/messages is newest first), and an app's WeCom events of the last hour (GET /v1/events;
 * a robot's group sends none back). No scan: one Query per channel and feed. Refreshes while the tab is visible.
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
      'The latest messages of your apps and group robots with their status, and WeCom events (card presses, replies) of the last hour.',
    ),
    stamp,
    results,
  );
  const refresh = async () => {
    try {
      const apps = (await ctx.apps()).map((a) => a.app).filter((a) => only === undefined || a === only);
      // A failure to list robots leaves the apps' feed shown; a page for one app shows that app only.
      const robots = only === undefined ? (await ctx.robots().catch(() => [])).map((r) => r.robot) : [];
      const channels: Channel[] = [
        ...apps.map((name): Channel => ({ kind: 'app', name })),
        ...robots.map((name): Channel => ({ kind: 'robot', name })),
      ];
      if (channels.length === 0) {
        show(results, empty('This API key may read no apps and no group robots.'));
        return;
      }
      const shown = channels.slice(0, MAX_CHANNELS);
      const feeds = await Promise.all(shown.map(feedOf));
      const items = feeds.flatMap((f) => f.items);
      items.sort((a, b) => b.at.localeCompare(a.at));
      stamp.textContent = `Updated ${new Date().toLocaleTimeString()}; refreshes every ${REFRESH_MS / 1000} s. Per app or robot: its ${PER_APP} latest messages; per app up to ${EVENTS_PER_APP} WeCom events.`;
      const notes = [
        channels.length > MAX_CHANNELS
          ? h(
              'p',
              { class: 'callout callout-warn', 'data-testid': 'events-partial' },
              `Showing the first ${MAX_CHANNELS} of your ${channels.length} apps and robots. Pick an app: `,
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
                  `WeCom events of ${channelLabel(shown[i] as Channel)} could not be read (${f.eventsError}); its messages are shown.`,
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
              ['When', 'App or robot', 'What', 'Detail', 'Status'],
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

async function feedOf(channel: Channel): Promise<Feed> {
  const now = Date.now();
  const since = new Date(now - 3600_000).toISOString();
  const name = encodeURIComponent(channel.name);
  const label = channelLabel(channel);
  const [messages, events] = await Promise.all([
    api<{ messages: MessageSummary[] }>(`/v1/messages?${channel.kind}=${name}&limit=${PER_APP}`),
    channel.kind === 'robot'
      ? { events: [] }
      : api<{
          events: {
            id: string;
            received_at: string;
            message_id: string | null;
            event: Record<string, unknown>;
          }[];
        }>(`/v1/events?app=${name}&since=${encodeURIComponent(since)}&limit=${EVENTS_PER_APP}`).catch(
          (err: unknown) => ({ events: [], error: err instanceof Error ? err.message : String(err) }),
        ),
  ]);
  const fromMessages = messages.messages.map(
    (m): FeedItem => ({
      at: m.updated_at,
      node: row(
        [time(m.updated_at), h('div', { class: 'muted small' }, relative(m.updated_at, now))],
        [label],
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
        [label],
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

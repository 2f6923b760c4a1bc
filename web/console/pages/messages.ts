import { h } from '../../shared/dom.js';
import { api } from '../api.js';
import { type Channel, channelLabel } from '../channel.js';
import type { PageContext } from '../context.js';
import { relative } from '../format.js';
import { localInputToRfc3339, type MessageFilters, messagesQuery, rfc3339ToLocalInput } from '../routes.js';
import {
  badge,
  empty,
  failure,
  link,
  loading,
  offsetAt,
  offsetAtLocal,
  row,
  show,
  table,
  time,
} from '../ui.js';
import { MSG_TYPES, ROBOT_MSG_TYPES, STATUSES } from '../vocab.js';

export interface MessageSummary {
  id: string;
  /** The channel: an app's message names `app`, a group robot's `robot`. */
  app?: string;
  robot?: string;
  status: string;
  priority: string;
  msgtype: string;
  touser: string[];
  toparty: string[];
  totag: string[];
  recipients_omitted: number;
  attempts: number;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  /** Scheduled messages: the time asked for, and when it leaves (send_at plus its share of the spread). */
  send_at?: string;
  release_at?: string;
}

const PAGE_SIZE = 50;

/**
 * A filter's choices. A value from a shared URL that is none of them (the API takes `status=failed,dead`) is kept as
 * a choice of its own, so Apply does not drop it.
 */
const select = (name: string, label: string, options: readonly string[], value: string | undefined) => {
  const choices = value && !options.includes(value) ? [...options, value] : options;
  const el = h(
    'select',
    { id: `f-${name}`, name },
    h('option', { value: '' }, 'any'),
    ...choices.map((o) => h('option', { value: o, selected: o === value }, o.replaceAll(',', ' or '))),
  );
  return h('div', { class: 'field' }, h('label', { for: `f-${name}` }, label), el);
};

const input = (
  name: string,
  label: string,
  type: string,
  value: string,
  extra: Record<string, string> = {},
) =>
  h(
    'div',
    { class: 'field' },
    h('label', { for: `f-${name}` }, label),
    h('input', { id: `f-${name}`, name, type, value, autocomplete: 'off', ...extra }),
  );

export const recipientsOf = (m: MessageSummary): string => {
  if (m.robot !== undefined) return `group chat of robot ${m.robot}`;
  const parts = [...m.touser, ...m.toparty.map((p) => `party ${p}`), ...m.totag.map((t) => `tag ${t}`)];
  return parts.join(', ') + (m.recipients_omitted ? ` +${m.recipients_omitted}` : '');
};

/** GET /v1/messages with the filters of the URL; "Older" follows next_cursor, as a URL of its own. */
export function renderMessages(filters: MessageFilters, ctx: PageContext): HTMLElement {
  const results = h('div', { 'aria-live': 'polite' }, loading('messages'));
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter messages' });
  const page = h('div', { class: 'page' }, h('h1', {}, 'Messages'), form, results);

  ctx.rememberMessages(filters);
  Promise.all([ctx.apps(), ctx.robots()]).then(
    ([apps, robots]) => {
      // The operator moved on while the apps loaded: this page is no longer shown.
      if (!page.isConnected) return;
      const channels: Channel[] = [
        ...apps.map((a): Channel => ({ kind: 'app', name: a.app })),
        ...robots.map((r): Channel => ({ kind: 'robot', name: r.robot })),
      ];
      const first = channels[0];
      if (!first) {
        form.remove();
        show(
          results,
          empty(
            'This API key may read no apps or robots.',
            'Ask for a key with apps or robots, or check the config.',
          ),
        );
        return;
      }
      const named = channelOfFilters(filters);
      if (!named && channels.length > 1) {
        // A page is one app's (or robot's) list (the API needs it); show the first, with the URL saying so.
        ctx.navigate({ page: 'messages', filters: withChannel(filters, first) }, { replace: true });
        return;
      }
      const channel = named ?? first;
      const shown = withChannel(filters, channel);
      buildForm(form, shown, { channel, channels }, ctx);
      void load(results, shown, channel);
    },
    (err: unknown) => show(results, failure(err, 'your apps', 'messages:read')),
  );
  return page;
}

/** The app or robot the URL names (`app=` or `robot=`). */
function channelOfFilters(filters: MessageFilters): Channel | undefined {
  if (filters.robot) return { kind: 'robot', name: filters.robot };
  if (filters.app) return { kind: 'app', name: filters.app };
  return undefined;
}

/** The filters listing `channel`: its own parameter set, the other's and what it does not take cleared. */
function withChannel(filters: MessageFilters, channel: Channel): MessageFilters {
  return channel.kind === 'robot'
    ? { ...filters, app: undefined, robot: channel.name, touser: undefined }
    : { ...filters, app: channel.name, robot: undefined };
}

const sameChannel = (a: Channel, b: Channel): boolean => a.kind === b.kind && a.name === b.name;

function buildForm(
  form: HTMLFormElement,
  filters: MessageFilters,
  choice: { channel: Channel; channels: Channel[] },
  ctx: PageContext,
): void {
  const { channel, channels } = choice;
  // Options carry their index into `channels`: the form reads a typed channel back, never a parsed string.
  const option = (c: Channel) =>
    h('option', { value: String(channels.indexOf(c)), selected: sameChannel(c, channel) }, channelLabel(c));
  const group = (label: string, of: Channel[]) =>
    of.length > 0 ? h('optgroup', { label }, ...of.map(option)) : null;
  const channelSelect = h(
    'select',
    { id: 'f-channel', name: 'channel' },
    group(
      'Apps',
      channels.filter((c) => c.kind === 'app'),
    ),
    group(
      'Robots',
      channels.filter((c) => c.kind === 'robot'),
    ),
  );
  const robot = channel.kind === 'robot';
  show(
    form,
    h('div', { class: 'field' }, h('label', { for: 'f-channel' }, 'App or robot'), channelSelect),
    select('status', 'Status', STATUSES, filters.status),
    // A robot posts to its group chat: its messages list no recipients to search by.
    robot ? null : input('touser', 'Recipient', 'search', filters.touser ?? '', { placeholder: 'userid' }),
    select('msgtype', 'Type', robot ? ROBOT_MSG_TYPES : MSG_TYPES, filters.msgtype),
    // step 1: seconds, so a shared URL's time survives Apply.
    input('since', 'Since', 'datetime-local', timeInput(filters.since), { step: '1' }),
    input('until', 'Until', 'datetime-local', timeInput(filters.until), { step: '1' }),
    h(
      'div',
      { class: 'field actions' },
      h('button', { type: 'submit' }, 'Apply'),
      link({ page: 'messages', filters: withChannel({}, channel) }, 'Clear'),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const value = (name: string) => String(data.get(name) ?? '').trim() || undefined;
    const since = value('since');
    const until = value('until');
    const picked = channels[Number(value('channel'))] ?? channel;
    ctx.navigate({
      page: 'messages',
      filters: withChannel(
        {
          status: value('status'),
          touser: value('touser'),
          msgtype: value('msgtype'),
          since: since && localInputToRfc3339(since, offsetAtLocal(since)),
          until: until && localInputToRfc3339(until, offsetAtLocal(until)),
        },
        picked,
      ),
    });
  });
}

/** An RFC 3339 time as the `datetime-local` input shows it, in the browser's zone at that instant. */
const timeInput = (text: string | undefined): string =>
  rfc3339ToLocalInput(text, text ? offsetAt(Date.parse(text)) : 0);

async function load(results: HTMLElement, filters: MessageFilters, channel: Channel): Promise<void> {
  try {
    const page = await api<{ messages: MessageSummary[]; next_cursor: string | null }>(
      `/v1/messages${messagesQuery(filters, PAGE_SIZE)}`,
    );
    const filtered = Object.entries(filters).some(
      ([k, v]) => k !== 'app' && k !== 'robot' && k !== 'cursor' && v,
    );
    const now = Date.now();
    const rows = page.messages.map((m) =>
      row(
        [time(m.created_at), h('div', { class: 'muted small' }, relative(m.created_at, now))],
        [link({ page: 'message', id: m.id }, h('code', {}, m.id))],
        [m.msgtype],
        [h('span', { class: 'recipients' }, recipientsOf(m))],
        [
          badge(m.status),
          m.release_at && m.status === 'scheduled'
            ? h('div', { class: 'muted small', 'data-testid': 'release-at' }, 'leaves ', time(m.release_at))
            : null,
        ],
        [String(m.attempts)],
      ),
    );
    const pager = h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages of messages' },
      filters.cursor
        ? link({ page: 'messages', filters: { ...filters, cursor: undefined } }, '← Newest')
        : null,
      page.next_cursor
        ? link({ page: 'messages', filters: { ...filters, cursor: page.next_cursor } }, 'Older →')
        : null,
    );
    if (rows.length === 0) {
      show(
        results,
        empty(
          filtered ? 'No messages match these filters.' : `No messages for ${channelLabel(channel)} yet.`,
          page.next_cursor
            ? 'A filtered page can be empty while older messages still match: follow "Older".'
            : filtered
              ? 'Widen the time range or clear a filter.'
              : 'Messages sent with POST /v1/messages show up here.',
        ),
        pager,
      );
      return;
    }
    show(
      results,
      table(['Created', 'Message', 'Type', 'Recipients', 'Status', 'Attempts'], rows, 'messages'),
      pager,
    );
  } catch (err) {
    show(results, failure(err, 'messages', 'messages:read'));
  }
}

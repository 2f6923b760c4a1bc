import { type Child, h } from '../../shared/dom.js';
import { safeHref } from '../../shared/links.js';
import { ApiError, api } from '../api.js';
import type { KeyInfo, PageContext } from '../context.js';
import { cardUpdateOf, errcodeMeaning, userList } from '../format.js';
import { preview } from '../preview.js';
import {
  badge,
  button,
  empty,
  facts,
  failure,
  link,
  loading,
  row,
  section,
  show,
  table,
  time,
} from '../ui.js';

interface MessageStatus {
  id: string;
  /** The channel: an app's message names `app`, a group robot's `robot`. */
  app?: string;
  robot?: string;
  status: string;
  priority: string;
  attempts: number;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  send_at?: string | null;
  release_at?: string | null;
  scheduled_by?: 'send_at' | 'quiet_hours' | null;
  metadata: Record<string, string>;
  wecom: Record<string, string> | null;
  parts?: { touser: string[]; sent_at: string; wecom: Record<string, string> }[];
  error: { code: string; message: string; wecom_errcode?: number } | null;
  events: { at: string; type: string; detail?: string }[];
  events_omitted: number;
  webhook_status: string | null;
  wecom_events: { id: string; received_at: string; event: Record<string, unknown> }[];
  webhook_attempts: {
    at: string;
    webhook_id: string;
    type: string;
    attempt: number;
    target: string;
    outcome: string;
    status_code: number | null;
    latency_ms: number;
    reason?: string;
    retry_in_seconds?: number;
  }[];
  /** The message as the gateway sends it to WeCom (`msgtype` and its object); absent from older gateways. */
  body?: Record<string, unknown> & { msgtype: string };
}

interface Delivery {
  id: string;
  event: string;
  target: string;
  status: string;
  attempts: { at: string; status_code?: number; latency_ms?: number; error?: string }[];
  next_attempt_at?: string;
}

const RECEIPT_WARNINGS: [string, string][] = [
  [
    'invaliduser',
    'Not delivered to these userids: they do not exist in the corp or are outside the app’s visible range',
  ],
  ['unlicenseduser', 'Not delivered to these members: they have no WeCom license (未激活/无许可)'],
  ['invalidparty', 'These department ids are invalid'],
  ['invalidtag', 'These tag ids are invalid'],
];

/** GET /v1/messages/{id}, its webhook deliveries, a preview and the actions the key may take. */
export function renderMessagePage(id: string, ctx: PageContext): HTMLElement {
  const body = h('div', {}, loading('the message'));
  const page = h(
    'div',
    { class: 'page' },
    h('p', { class: 'crumbs' }, link({ page: 'messages', filters: ctx.lastMessages() }, '← Messages')),
    h('h1', {}, 'Message ', h('code', { class: 'break' }, id)),
    body,
  );
  const reload = () => void load(id, body, reload, ctx);
  reload();
  return page;
}

async function load(id: string, out: HTMLElement, reload: () => void, ctx: PageContext): Promise<void> {
  let m: MessageStatus;
  let key: KeyInfo;
  try {
    [m, key] = await Promise.all([api<MessageStatus>(`/v1/messages/${encodeURIComponent(id)}`), ctx.key()]);
  } catch (err) {
    show(out, failure(err, 'the message', 'messages:read'));
    return;
  }
  const deliveries = h('div', {}, loading('webhook deliveries'));
  // Two columns on a wide screen: the message's state on the left, what it looks like and what came back on the right.
  show(
    out,
    h(
      'div',
      { class: 'detail' },
      h('div', { class: 'detail-col' }, summary(m), receipt(m), actions(m, key, reload), timeline(m)),
      h(
        'div',
        { class: 'detail-col' },
        section(
          'Preview',
          m.body
            ? preview(m.body, { recalled: m.status === 'recalled', ...cardUpdateOf(m.events) })
            : empty('This gateway does not return the message body.', 'Update the gateway to see a preview.'),
        ),
        wecomEvents(m),
        section('Webhook deliveries', deliveries),
      ),
    ),
  );
  void loadDeliveries(m, deliveries);
}

function summary(m: MessageStatus): HTMLElement {
  const meta = Object.entries(m.metadata);
  return section(
    'Status',
    facts([
      [
        'Status',
        [
          badge(m.status),
          m.webhook_status ? h('span', { class: 'muted' }, ` webhooks: ${m.webhook_status}`) : null,
        ],
      ],
      m.robot !== undefined
        ? ['Robot', h('span', { 'data-testid': 'robot' }, m.robot)]
        : ['App', link({ page: 'apps', app: m.app }, m.app ?? '')],
      ['Priority', m.priority],
      ['Attempts', String(m.attempts)],
      ['Created', time(m.created_at)],
      ['Updated', time(m.updated_at)],
      ['Sent', time(m.sent_at)],
      ...(m.send_at
        ? ([
            [m.scheduled_by === 'quiet_hours' ? 'Held by quiet hours until' : 'Send at', time(m.send_at)],
            ['Released at', time(m.release_at ?? m.send_at)],
          ] as [string, Child][])
        : []),
      ...meta.map(([k, v]): [string, Child] => [`metadata.${k}`, v]),
    ]),
  );
}

function receipt(m: MessageStatus): HTMLElement {
  const parts: Child[] = [];
  if (m.error) {
    const code = m.error.wecom_errcode;
    parts.push(
      h(
        'div',
        { class: 'callout callout-bad', 'data-testid': 'message-error' },
        h('p', {}, h('strong', {}, m.error.code), ': ', m.error.message),
        code !== undefined ? h('p', {}, `errcode ${code}: `, errcodeMeaning(code, m.error.message)) : null,
      ),
    );
  }
  const receipts = m.parts?.length ? m.parts.map((p) => p.wecom) : m.wecom ? [m.wecom] : [];
  if (receipts.length === 0 && !m.error) {
    return section(
      'WeCom’s answer',
      empty('WeCom has not answered yet.', 'The answer appears once the message is sent.'),
    );
  }
  for (const r of receipts) {
    parts.push(facts([['msgid', h('code', { class: 'break', 'data-testid': 'msgid' }, r.msgid || '—')]]));
    if (m.robot !== undefined && !r.msgid) {
      parts.push(h('p', { class: 'muted' }, 'WeCom answers a group robot’s message without a msgid.'));
    }
    for (const [list, meaning] of RECEIPT_WARNINGS) {
      const users = userList(r[list]);
      if (users.length === 0) continue;
      parts.push(
        h(
          'div',
          { class: 'callout callout-warn', 'data-testid': `warn-${list}` },
          h('p', {}, h('strong', {}, list), `: ${users.join(', ')}`),
          h('p', { class: 'muted' }, meaning),
        ),
      );
    }
  }
  return section('WeCom’s answer', ...parts);
}

function timeline(m: MessageStatus): HTMLElement {
  const items = m.events.map((e) =>
    h(
      'li',
      {},
      time(e.at),
      ' ',
      h('strong', { class: 'event-type' }, e.type),
      e.detail ? h('span', { class: 'muted' }, ` — ${e.detail}`) : null,
    ),
  );
  return section(
    'Timeline',
    items.length
      ? h('ol', { class: 'timeline', 'data-testid': 'timeline' }, ...items)
      : empty('No events yet.'),
    m.events_omitted
      ? h('p', { class: 'muted' }, `${m.events_omitted} more retries or deferrals were counted, not listed.`)
      : null,
  );
}

function wecomEvents(m: MessageStatus): HTMLElement {
  if (m.wecom_events.length === 0) {
    return section('WeCom events', empty('No card presses or replies for this message.'));
  }
  const rows = m.wecom_events.map((e) =>
    row(
      [time(e.received_at)],
      [String(e.event.kind ?? 'event')],
      [String(e.event.from ?? '')],
      [h('code', { class: 'small' }, describeEvent(e.event))],
    ),
  );
  return section('WeCom events', table(['Received', 'Event', 'Member', 'Detail'], rows, 'wecom-events'));
}

const describeEvent = (event: Record<string, unknown>): string => {
  const { event_key, content, selected_items } = event;
  const bits = [
    event_key !== undefined ? `key ${String(event_key)}` : '',
    content !== undefined ? String(content) : '',
    Array.isArray(selected_items) && selected_items.length ? JSON.stringify(selected_items) : '',
  ].filter(Boolean);
  return bits.length ? bits.join(' · ') : JSON.stringify(event);
};

async function loadDeliveries(m: MessageStatus, out: HTMLElement): Promise<void> {
  try {
    const { deliveries } = await api<{ deliveries: Delivery[] }>(
      `/v1/messages/${encodeURIComponent(m.id)}/webhooks`,
    );
    if (deliveries.length === 0) {
      show(out, empty('No webhook deliveries.', 'The message has no callback_url, or none is due yet.'));
      return;
    }
    show(
      out,
      ...deliveries.map((d) =>
        h(
          'div',
          { class: 'delivery', 'data-testid': 'delivery' },
          h(
            'p',
            {},
            badge(d.status, 'delivery-status'),
            ' ',
            h('strong', {}, d.event),
            ' → ',
            targetText(d.target),
          ),
          d.next_attempt_at ? h('p', { class: 'muted' }, 'Next attempt ', time(d.next_attempt_at)) : null,
          table(
            ['At', 'Status code', 'Latency', 'Error'],
            d.attempts.map((a) =>
              row(
                [time(a.at)],
                [a.status_code === undefined ? '—' : String(a.status_code)],
                [a.latency_ms === undefined ? '—' : `${a.latency_ms} ms`],
                [a.error ?? ''],
              ),
            ),
          ),
        ),
      ),
    );
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) {
      // An older gateway has no deliveries endpoint: the attempts in the status are all there is.
      show(out, attemptsFromStatus(m));
      return;
    }
    show(out, failure(err, 'webhook deliveries', 'messages:read'));
  }
}

function attemptsFromStatus(m: MessageStatus): HTMLElement {
  if (m.webhook_attempts.length === 0) return empty('No webhook deliveries.');
  return table(
    ['At', 'Event', 'Target', 'Outcome', 'Status code', 'Latency'],
    m.webhook_attempts.map((a) =>
      row(
        [time(a.at)],
        [a.type],
        [targetText(a.target)],
        [badge(a.outcome, 'delivery-status')],
        [a.status_code === null ? '—' : String(a.status_code)],
        [`${a.latency_ms} ms`],
      ),
    ),
    'webhook-attempts',
  );
}

const targetText = (target: string): HTMLElement => {
  const href = safeHref(target);
  return h('span', { class: 'break' }, href ? new URL(href).host + new URL(href).pathname : target);
};

/** WeCom recalls a message only within 24 hours of its sending (errcode 42052 after). */
const RECALL_WINDOW_MS = 24 * 3600_000;

/** Card types whose send gives a response_code, the one thing `update_template_card` takes. */
const UPDATABLE_CARDS = ['button_interaction', 'vote_interaction', 'multiple_interaction'];

/**
 * Recall (sent messages, within WeCom's window), card update (sent interaction cards), redrive (dead ones): only
 * those the key's scopes allow, each with the reason when it does not apply.
 */
function actions(m: MessageStatus, key: KeyInfo, reload: () => void): HTMLElement {
  const may = (scope: string) => key.scopes.includes(scope);
  const result = h('p', { class: 'action-result', role: 'status', 'aria-live': 'polite' });
  const run = async (b: HTMLButtonElement, label: string, call: () => Promise<unknown>, scope: string) => {
    b.disabled = true;
    result.textContent = `${label}…`;
    try {
      await call();
      result.textContent = `${label}: done.`;
      setTimeout(reload, 600);
    } catch (err) {
      result.textContent =
        err instanceof ApiError && err.status === 403
          ? `${label}: this API key lacks the ${scope} scope.`
          : `${label} failed: ${err instanceof Error ? err.message : String(err)}`;
      b.disabled = false;
    }
  };
  const controls: Child[] = [];
  if (
    (m.status === 'scheduled' || m.status === 'queued' || m.status === 'deferred') &&
    may('messages:recall')
  ) {
    controls.push(
      button(
        'Cancel',
        (b) => {
          if (!confirm('Cancel this message? It will never be sent.')) return;
          void run(
            b,
            'Cancel',
            () => api(`/v1/messages/${encodeURIComponent(m.id)}`, { method: 'DELETE' }),
            'messages:recall',
          );
        },
        { 'data-testid': 'cancel' },
      ),
    );
  }
  const notes: Child[] = [];
  const sentAt = m.sent_at ? Date.parse(m.sent_at) : Number.NaN;
  // WeCom has no recall (and no card update) for a group robot's post.
  const recallable = m.status === 'sent' && m.robot === undefined && may('messages:recall');
  if (recallable && Date.now() - sentAt >= RECALL_WINDOW_MS) {
    notes.push(
      h('p', { class: 'muted' }, 'Recall is no longer possible: WeCom recalls within 24 hours of sending.'),
    );
  } else if (recallable) {
    controls.push(
      button(
        'Recall',
        (b) => {
          if (!confirm('Recall this message from every recipient’s WeCom?')) return;
          void run(
            b,
            'Recall',
            () => api(`/v1/messages/${encodeURIComponent(m.id)}/recall`, { method: 'POST' }),
            'messages:recall',
          );
        },
        { 'data-testid': 'recall' },
      ),
    );
  }
  const cardType = String((m.body?.template_card as { card_type?: unknown } | undefined)?.card_type ?? '');
  if (m.status === 'sent' && UPDATABLE_CARDS.includes(cardType) && may('messages:write')) {
    const text = h('input', { id: 'replace-name', type: 'text', maxlength: '20', placeholder: '已处理' });
    const form = h(
      'form',
      { class: 'inline-form' },
      h('label', { for: 'replace-name' }, 'Replace the card’s buttons with'),
      text,
      h('button', { type: 'submit', class: 'secondary' }, 'Update card'),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const b = form.querySelector('button') as HTMLButtonElement;
      const replace = text.value.trim() || '已处理';
      void run(
        b,
        'Card update',
        () =>
          api(`/v1/messages/${encodeURIComponent(m.id)}/card`, {
            method: 'POST',
            body: { button: { replace_name: replace } },
          }),
        'messages:write',
      );
    });
    controls.push(form);
  }
  if (m.status === 'dead' && may('admin')) {
    controls.push(
      button(
        'Redrive',
        (b) =>
          void run(
            b,
            'Redrive',
            () => api(`/v1/dlq/${encodeURIComponent(m.id)}/redrive`, { method: 'POST' }),
            'admin',
          ),
        { 'data-testid': 'redrive' },
      ),
      link({ page: 'dlq', filters: m.app ? { app: m.app } : {} }, 'See the DLQ'),
    );
  }
  if (controls.length === 0 && notes.length === 0) return h('div', { hidden: true });
  return section(
    'Actions',
    controls.length ? h('div', { class: 'actions' }, ...controls) : null,
    ...notes,
    result,
  );
}

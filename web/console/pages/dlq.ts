import { h } from '../../shared/dom.js';
import { ApiError, api } from '../api.js';
import { channelLabel, channelOfEntry } from '../channel.js';
import type { PageContext } from '../context.js';
import { duration } from '../format.js';
import type { DlqFilters } from '../routes.js';
import { badge, button, empty, failure, link, loading, row, show, table } from '../ui.js';

interface DeadLetter {
  id: string;
  /** The message's app; a group robot's message names its `robot` instead. */
  app?: string;
  robot?: string;
  lane: string;
  state: string;
  status: string | null;
  attempts: number | null;
  last_error: string | null;
  age_seconds: number | null;
  receives: number | null;
  note: string | null;
  redrivable: boolean;
  not_redrivable_reason?: string;
}

/** GET /v1/dlq (scope admin) with redrive per message; the reason is shown where a redrive would not be safe. */
export function renderDlq(filters: DlqFilters, ctx: PageContext): HTMLElement {
  const results = h('div', { 'aria-live': 'polite' }, loading('dead letters'));
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter dead letters' });
  const page = h(
    'div',
    { class: 'page' },
    h('h1', {}, 'Dead-letter queue'),
    h(
      'p',
      { class: 'muted' },
      'Messages the sender gave up on after its retries. Redrive sends one again, unless WeCom may have ' +
        'delivered it already and its duplicate check no longer covers a repeat.',
    ),
    form,
    results,
  );
  ctx.apps().then(
    (apps) =>
      buildForm(
        form,
        filters,
        apps.map((a) => a.app),
        ctx,
      ),
    () => buildForm(form, filters, [], ctx),
  );
  void load(results, filters);
  return page;
}

function buildForm(form: HTMLFormElement, filters: DlqFilters, apps: string[], ctx: PageContext): void {
  const app = h(
    'select',
    { id: 'd-app', name: 'app' },
    h('option', { value: '' }, 'all my apps'),
    ...apps.map((a) => h('option', { value: a, selected: a === filters.app }, a)),
  );
  const lane = h(
    'select',
    { id: 'd-lane', name: 'lane' },
    h('option', { value: '' }, 'both'),
    ...['high', 'normal'].map((l) => h('option', { value: l, selected: l === filters.lane }, l)),
  );
  form.replaceChildren(
    h('div', { class: 'field' }, h('label', { for: 'd-app' }, 'App'), app),
    h('div', { class: 'field' }, h('label', { for: 'd-lane' }, 'Lane'), lane),
    h('div', { class: 'field actions' }, h('button', { type: 'submit' }, 'Apply')),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    ctx.navigate({ page: 'dlq', filters: { app: app.value || undefined, lane: lane.value || undefined } });
  });
}

async function load(results: HTMLElement, filters: DlqFilters): Promise<void> {
  const params = new URLSearchParams();
  if (filters.app) params.set('app', filters.app);
  if (filters.lane) params.set('lane', filters.lane);
  const q = params.toString();
  try {
    const { dead_letters } = await api<{ dead_letters: DeadLetter[] }>(`/v1/dlq${q ? `?${q}` : ''}`);
    if (dead_letters.length === 0) {
      show(results, empty('The dead-letter queue is empty.', 'Nothing waits for an operator. 🎉'));
      return;
    }
    show(
      results,
      table(
        ['Message', 'App or robot', 'Lane', 'Status', 'Attempts', 'Age', 'Last error', 'Redrive'],
        dead_letters.map((d) =>
          row(
            [link({ page: 'message', id: d.id }, h('code', {}, d.id))],
            [channelLabel(channelOfEntry(d))],
            [d.lane],
            [d.status ? badge(d.status) : h('span', { class: 'muted' }, d.state)],
            [d.attempts === null ? '—' : String(d.attempts)],
            [d.age_seconds === null ? '—' : duration(d.age_seconds)],
            [h('span', { class: 'small' }, d.last_error ?? d.note ?? '')],
            [redriveCell(d)],
          ),
        ),
        'dead-letters',
      ),
    );
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) {
      show(
        results,
        h(
          'div',
          { class: 'state state-error', role: 'alert', 'data-testid': 'error' },
          h('p', {}, 'This API key lacks the admin scope.'),
          h(
            'p',
            { class: 'muted' },
            'The DLQ is for operators: sign in with a key whose scopes include admin.',
          ),
        ),
      );
      return;
    }
    if (
      err instanceof ApiError &&
      err.status === 404 &&
      err.code === 'not_found' &&
      /no route/.test(err.message)
    ) {
      show(
        results,
        empty('This gateway has no DLQ API yet.', 'Use wecom-gateway dlq list, or update the gateway.'),
      );
      return;
    }
    show(results, failure(err, 'the dead-letter queue', 'admin'));
  }
}

function redriveCell(d: DeadLetter): HTMLElement {
  const out = h('div', { class: 'redrive' });
  if (!d.redrivable) {
    out.append(
      h(
        'span',
        { class: 'muted small', 'data-testid': 'not-redrivable' },
        d.not_redrivable_reason ?? 'Not redrivable.',
      ),
    );
    return out;
  }
  const result = h('span', { class: 'small', role: 'status', 'data-testid': 'redrive-result' });
  out.append(
    button(
      'Redrive',
      async (b) => {
        b.disabled = true;
        result.textContent = 'Redriving…';
        try {
          const r = await api<{ outcome: string; detail: string; status: string | null }>(
            `/v1/dlq/${encodeURIComponent(d.id)}/redrive`,
            { method: 'POST' },
          );
          b.remove();
          result.textContent = `${r.outcome}: ${r.detail}`;
        } catch (err) {
          b.disabled = false;
          result.textContent =
            err instanceof ApiError && err.code === 'not_redrivable'
              ? `Not redriven: ${err.message}`
              : err instanceof ApiError && err.status === 403
                ? 'This API key lacks the admin scope.'
                : `Failed: ${err instanceof Error ? err.message : String(err)}`;
        }
      },
      { 'data-testid': `redrive-${d.id}`, 'aria-label': `Redrive ${d.id}` },
    ),
    result,
  );
  return out;
}

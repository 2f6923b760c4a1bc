import { h } from '../../shared/dom.js';
import { api } from '../api.js';
import type { PageContext } from '../context.js';
import { duration, gauge, relative } from '../format.js';
import { badge, empty, facts, failure, link, loading, row, section, show, table, time } from '../ui.js';

interface AppState {
  app: string;
  state: string;
  pause: {
    kind: string;
    errcode: number | null;
    reason: string;
    hint: string | null;
    since: string;
    until: string;
    level: number;
    fails_messages_at: string | null;
  } | null;
  quota: { window: string; limit: number; allowed: number; used: number; resets_at: string }[];
  token: {
    fetched_at: string | null;
    age_seconds: number | null;
    expires_in_seconds: number | null;
    last_error: { errcode: number | null; class: string; failures: number; retry_at: string } | null;
  };
}

/** GET /v1/robots/{robot}: a group robot's state as an app's, without a token (a robot's key is its webhook's). */
interface RobotState {
  robot: string;
  state: string;
  pause: AppState['pause'];
  quota: AppState['quota'];
}

interface LaneDepth {
  lane: string;
  waiting: number;
  in_flight: number;
  delayed: number;
  dead: number | null;
}

const stateText = (state: string, what: 'app' | 'robot'): string =>
  ({
    active: 'Messages go out.',
    paused: `WeCom rate-limited the ${what} (45009): nothing is sent until the pause ends.`,
    circuit_open: 'WeCom answered a configuration error: messages wait for the fix.',
    probing: 'The pause ended: the next message tests whether the cause is gone.',
  })[state] ?? '';

/**
 * GET /v1/apps, then GET /v1/apps/{app} for each (or the one in the URL); on the whole list, the key's group robots
 * after its apps (GET /v1/robots/{robot} each).
 */
export function renderApps(only: string | undefined, ctx: PageContext): HTMLElement {
  const list = h('div', { class: 'cards' }, loading('apps'));
  const queues = h('div', {});
  const page = h(
    'div',
    { class: 'page' },
    h('h1', {}, only ? `App ${only}` : 'Apps'),
    only ? h('p', { class: 'crumbs' }, link({ page: 'apps' }, '← All apps')) : null,
    queues,
    list,
  );
  // The lanes are shared by every app; GET /v1/apps shows their depths to admin keys only.
  if (!only) {
    api<{ queues?: LaneDepth[] }>('/v1/apps').then(
      (r) => {
        if (r.queues) show(queues, queuePanel(r.queues));
      },
      () => undefined,
    );
  }
  // A gateway or key without robots lists none; a failure to read them leaves the apps shown.
  const robotList = only ? Promise.resolve([]) : ctx.robots().catch(() => []);
  Promise.all([ctx.apps(), robotList]).then(
    ([apps, robots]) => {
      const names = apps.map((a) => a.app).filter((a) => only === undefined || a === only);
      if (names.length === 0 && robots.length === 0) {
        show(
          list,
          only
            ? empty(`This API key may not read the app ${only}.`, 'Pick one of your apps.')
            : empty('This API key may read no apps.', 'Ask for a key with apps, or check the config.'),
        );
        return;
      }
      show(list, ...names.map((name) => appCard(name)), ...robots.map((r) => robotCard(r.robot)));
    },
    (err: unknown) => show(list, failure(err, 'your apps', 'messages:read')),
  );
  return page;
}

function appCard(name: string): HTMLElement {
  const card = h(
    'article',
    { class: 'panel app', 'data-testid': `app-${name}` },
    h('h2', {}, name),
    loading(name),
  );
  api<AppState>(`/v1/apps/${encodeURIComponent(name)}`).then(
    (a) =>
      show(
        card,
        h('h2', {}, link({ page: 'apps', app: a.app }, a.app), ' ', badge(a.state, 'app-state')),
        ...body(a, 'app'),
        ...tokenFacts(a.token),
      ),
    (err: unknown) => show(card, h('h2', {}, name), failure(err, `the app ${name}`, 'messages:read')),
  );
  return card;
}

/** A group robot's card: its state, pause and rolling minute, and a link to its messages. */
function robotCard(name: string): HTMLElement {
  const title = `robot ${name}`;
  const card = h(
    'article',
    { class: 'panel app', 'data-testid': `robot-${name}` },
    h('h2', {}, title),
    loading(title),
  );
  api<RobotState>(`/v1/robots/${encodeURIComponent(name)}`).then(
    (r) =>
      show(
        card,
        h('h2', {}, `robot ${r.robot} `, badge(r.state, 'robot-state')),
        ...body(r, 'robot'),
        h('p', {}, link({ page: 'messages', filters: { robot: r.robot } }, 'Its messages →')),
      ),
    (err: unknown) => show(card, h('h2', {}, title), failure(err, `the robot ${name}`, 'messages:read')),
  );
  return card;
}

function body(a: Pick<AppState, 'state' | 'pause' | 'quota'>, what: 'app' | 'robot'): HTMLElement[] {
  const now = Date.now();
  const out: HTMLElement[] = [h('p', { class: 'muted' }, stateText(a.state, what))];
  if (a.pause) {
    out.push(
      h(
        'div',
        {
          class: `callout ${a.pause.kind === 'rate_limited' ? 'callout-warn' : 'callout-bad'}`,
          'data-testid': 'pause',
        },
        h(
          'p',
          {},
          h('strong', {}, a.pause.kind === 'rate_limited' ? 'Paused' : 'Circuit open'),
          ': ',
          a.pause.reason,
        ),
        a.pause.hint ? h('p', {}, 'Fix: ', a.pause.hint) : null,
        h(
          'p',
          { class: 'muted' },
          'Since ',
          time(a.pause.since),
          ' until ',
          time(a.pause.until),
          ` (${relative(a.pause.until, now)})`,
        ),
        a.pause.fails_messages_at
          ? h('p', { class: 'muted' }, 'Waiting messages fail from ', time(a.pause.fails_messages_at))
          : null,
      ),
    );
  }
  out.push(
    h('h3', {}, 'Quota in the current windows'),
    a.quota.length
      ? h('div', { class: 'gauges' }, ...a.quota.map((q) => quotaGauge(q, now)))
      : empty('No quota window counted yet.'),
  );
  return out;
}

function tokenFacts(t: AppState['token']): HTMLElement[] {
  const out: HTMLElement[] = [
    h('h3', {}, 'Access token'),
    facts([
      ['Age', t.age_seconds === null ? 'none fetched yet' : duration(t.age_seconds)],
      ['Expires in', t.expires_in_seconds === null ? '—' : duration(t.expires_in_seconds)],
      ['Fetched', time(t.fetched_at)],
    ]),
  ];
  if (t.last_error) {
    out.push(
      h(
        'div',
        { class: 'callout callout-bad' },
        h(
          'p',
          {},
          `gettoken failed ${t.last_error.failures}×`,
          t.last_error.errcode !== null ? ` (errcode ${t.last_error.errcode})` : '',
          `: ${t.last_error.class}`,
        ),
        h('p', { class: 'muted' }, 'Next try ', time(t.last_error.retry_at)),
      ),
    );
  }
  return out;
}

function queuePanel(lanes: LaneDepth[]): HTMLElement {
  return section(
    'Queues',
    h('p', { class: 'muted' }, 'Shared by every app. SQS’s approximate counts, a few seconds behind.'),
    table(
      ['Lane', 'Waiting', 'In flight', 'Delayed', 'In the DLQ'],
      lanes.map((q) =>
        row(
          [h('strong', {}, q.lane)],
          [String(q.waiting)],
          [String(q.in_flight)],
          [String(q.delayed)],
          [
            q.dead === null
              ? '—'
              : q.dead > 0
                ? link({ page: 'dlq', filters: { lane: q.lane } }, String(q.dead))
                : '0',
          ],
        ),
      ),
      'queues',
    ),
  );
}

function quotaGauge(q: AppState['quota'][number], now: number): HTMLElement {
  const { percent, level } = gauge(q.used, q.allowed);
  const id = `q-${q.window.replace(/\W/g, '-')}-${Math.random().toString(36).slice(2, 8)}`;
  return h(
    'div',
    { class: `gauge gauge-${level}`, 'data-testid': 'quota' },
    h('label', { for: id }, h('strong', {}, q.window), ` ${q.used} / ${q.allowed}`),
    h(
      'meter',
      {
        id,
        min: '0',
        max: String(Math.max(1, q.allowed)),
        high: String(Math.max(1, q.allowed) * 0.8),
        value: String(q.used),
      },
      `${percent}%`,
    ),
    h('span', { class: 'muted small' }, `WeCom’s limit ${q.limit}; resets ${relative(q.resets_at, now)}`),
  );
}

export type { AppState };

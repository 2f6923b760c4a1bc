/**
 * The simulator's inbox (`/__sim/ui`): each member's messages as the WeCom client shows them, what WeCom dropped
 * or suppressed, and the member's side of the callbacks — pressing a card's button or replying goes through
 * `/__sim/click` and `/__sim/reply`, which post the encrypted callback to the app as WeCom would.
 * Routes: `/__sim/ui`, `/__sim/ui/<userid>`, `/__sim/ui/<userid>/latest`, `/__sim/ui/<userid>/<msgid>`, and a
 * group robot's chat at `/__sim/ui/group:<robot>` (groups.ts).
 */
import '../render/message.css';
import './inbox.css';
import { type CardAction, type MessageBody, renderMessage } from '../render/message.js';
import { h } from '../shared/dom.js';
import * as api from './api.js';
import { drawGroupMessage, groupOptions, robotOf } from './groups.js';

const BASE = document.body.dataset.basePath ?? '/__sim/ui';

interface Route {
  userid?: string;
  /** 'latest', a msgid, or undefined for the whole inbox. */
  only?: string;
}

function readRoute(): Route {
  const rest = location.pathname.slice(BASE.length).split('/').filter(Boolean).map(safeDecode);
  const [userid, only] = rest;
  return { ...(userid ? { userid } : {}), ...(only ? { only } : {}) };
}

/** A mistyped `%` in a hand-written deep link names that text as it is, rather than breaking the page. */
const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

const hrefFor = (r: Route): string =>
  `${BASE}${r.userid ? `/${encodeURIComponent(r.userid)}` : ''}${r.only ? `/${encodeURIComponent(r.only)}` : ''}`;

/** Per message: pressed in this session, and what the last action answered. */
const pressed = new Map<string, Record<string, string[]>>();
const results = new Map<string, { ok: boolean; text: string }>();
/** Rendered items by their content, so a refresh keeps what the member is choosing on an unchanged card. */
let rendered = new Map<string, HTMLElement>();

const picker = h('select', { id: 'member', 'data-testid': 'member-picker' });
const status = h('p', { class: 'ib-status', 'data-testid': 'inbox-status', role: 'status' });
const listEl = h('ol', {
  class: 'ib-list',
  'data-testid': 'inbox-list',
  'aria-label': 'messages, newest first',
});
const replyInput = h('textarea', {
  id: 'reply',
  rows: '2',
  'data-testid': 'reply-input',
  placeholder: '回复…',
});
const replyApp = h('select', { 'data-testid': 'reply-app', 'aria-label': 'app' });
const replyResult = h('p', { class: 'ib-result', 'data-testid': 'reply-result', role: 'status' });
const replyButton = h(
  'button',
  { type: 'submit', class: 'ib-primary', 'data-testid': 'reply-send' },
  '发送 (reply)',
);
const replyForm = h(
  'form',
  { class: 'ib-reply', 'data-testid': 'reply-form' },
  h('label', { for: 'reply', class: 'ib-label' }, 'Reply as the member'),
  replyInput,
  h('div', { class: 'ib-reply-row' }, replyApp, replyButton),
  replyResult,
);
const allLink = h('a', { class: 'ib-all', 'data-testid': 'show-all', hidden: true }, '← all messages');

document.body.append(
  h(
    'header',
    { class: 'ib-header' },
    h('h1', {}, 'WeCom sim inbox'),
    h('label', { for: 'member', class: 'ib-label' }, 'Member'),
    picker,
  ),
  h('main', { class: 'ib-main' }, allLink, status, listEl, replyForm),
);

picker.addEventListener('change', () => navigate({ userid: picker.value }));
allLink.addEventListener('click', (e) => {
  e.preventDefault();
  navigate({ userid: readRoute().userid });
});
window.addEventListener('popstate', () => void refresh());
replyForm.addEventListener('submit', (e) => {
  e.preventDefault();
  void sendReply();
});

function navigate(r: Route): void {
  history.pushState(null, '', hrefFor(r));
  rendered = new Map();
  void refresh();
}

let refreshing: Promise<void> | undefined;
let again = false;

/** Refetches the members and the shown inbox; calls that arrive meanwhile collapse into one more round. */
async function refresh(): Promise<void> {
  if (refreshing) {
    again = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      again = false;
      try {
        await draw();
      } catch (err) {
        status.textContent = `Could not reach the simulator: ${err instanceof Error ? err.message : String(err)}`;
      }
    } while (again);
  })();
  await refreshing;
  refreshing = undefined;
}

async function draw(): Promise<void> {
  const route = readRoute();
  const [people, groups] = await Promise.all([api.members(), api.groups()]);
  drawPicker(people, groups, route.userid);
  const robot = robotOf(route.userid);
  if (robot !== undefined) return drawGroup(robot);
  replyForm.hidden = route.userid === undefined;
  allLink.hidden = route.only === undefined;
  allLink.setAttribute('href', hrefFor({ userid: route.userid }));
  if (route.userid === undefined) {
    listEl.replaceChildren();
    status.textContent =
      people.length === 0
        ? 'No member yet: send a message (POST /v1/messages) or set a directory (POST /__sim/directory).'
        : 'Pick a member to see their messages.';
    return;
  }
  const tl = await api.timeline(route.userid);
  drawReplyApps(tl);
  let items = tl.items;
  if (route.only === 'latest') items = items.filter((i) => i.kind === 'message').slice(0, 1);
  else if (route.only !== undefined)
    items = items.filter((i) => i.kind === 'message' && i.message.msgid === route.only);
  status.textContent =
    items.length === 0
      ? `Nothing for ${tl.userid} yet. New messages appear here without a reload.`
      : route.only
        ? ''
        : `${tl.items.filter((i) => i.kind === 'message').length} message(s) for ${tl.userid}, newest first.`;
  const next = new Map<string, HTMLElement>();
  const nodes = items.map((item) => {
    const id = item.kind === 'message' ? item.message.msgid : '';
    const key = JSON.stringify([item, pressed.get(id), results.get(id)]);
    const el = rendered.get(key) ?? drawItem(tl.userid, item);
    next.set(key, el);
    return el;
  });
  rendered = next;
  // A change elsewhere (another member's message) must not move the nodes of this list: moving a node blurs it, and
  // a member ticking an option from the keyboard would lose the focus between Space and Enter.
  const unchanged =
    nodes.length === listEl.children.length && nodes.every((n, i) => listEl.children[i] === n);
  if (unchanged) return;
  const active = document.activeElement;
  listEl.replaceChildren(...nodes);
  if (active instanceof HTMLElement && active !== document.activeElement && listEl.contains(active))
    active.focus();
}

/** A robot's group chat: what it posted, newest first; a group cannot reply or press cards here. */
async function drawGroup(robot: string): Promise<void> {
  replyForm.hidden = true;
  allLink.hidden = true;
  const messages = (await api.groupInbox(robot)).reverse();
  status.textContent =
    messages.length === 0
      ? `Nothing in robot ${robot}'s group yet. New posts appear here without a reload.`
      : `${messages.length} post(s) by robot ${robot} to its group, newest first.`;
  rendered = new Map();
  listEl.replaceChildren(...messages.map((m) => drawGroupMessage(robot, m)));
}

/** Redrawn only when it changed, so a member being chosen from the keyboard keeps the focus and the open list. */
function redrawSelect(
  select: HTMLSelectElement,
  signature: string,
  options: () => HTMLOptionElement[],
): void {
  if (select.dataset.signature === signature) return;
  select.dataset.signature = signature;
  select.replaceChildren(...options());
}

function drawPicker(people: api.Member[], groups: api.Group[], current: string | undefined): void {
  const ids = people.map((p) => p.userid);
  const member = robotOf(current) === undefined ? current : undefined;
  if (member !== undefined && !ids.includes(member.toLowerCase())) ids.push(member.toLowerCase());
  redrawSelect(picker, JSON.stringify([people, groups, current]), () => [
    h('option', { value: '', disabled: true, selected: current === undefined }, '— choose —'),
    ...ids.map((id) => {
      const p = people.find((m) => m.userid === id);
      return h(
        'option',
        { value: id, selected: id === current?.toLowerCase() },
        p?.messages ? `${id} (${p.messages})` : id,
      );
    }),
    ...(groupOptions(groups, current) as HTMLOptionElement[]),
  ]);
}

function drawReplyApps(tl: api.Timeline): void {
  const agents = [...new Set(tl.items.flatMap((i) => (i.kind === 'message' ? [i.message.agentId] : [])))];
  const chosen = replyApp.value;
  redrawSelect(replyApp, JSON.stringify(agents), () => [
    h('option', { value: '' }, 'first app'),
    ...agents.map((a) => h('option', { value: String(a), selected: String(a) === chosen }, `agent ${a}`)),
  ]);
}

const time = (at: number): string => new Date(at).toLocaleString('zh-CN', { hour12: false });

function drawItem(userid: string, item: api.TimelineItem): HTMLElement {
  if (item.kind === 'message') return drawMessage(userid, item.message);
  const { text, testid } =
    item.kind === 'drop'
      ? {
          testid: 'drop',
          text: `Dropped silently (${item.drop.reason}): WeCom answered errcode 0 but the member's per-app ${item.drop.reason === 'member_minute' ? 'minute' : 'hour'} limit was reached. msgid ${item.drop.msgid}`,
        }
      : item.kind === 'duplicate'
        ? {
            testid: 'duplicate',
            text: `Suppressed duplicate of msgid ${item.duplicate.msgid} (duplicate_check_interval ${item.duplicate.intervalS} s, ${item.duplicate.reading} reading): nothing was delivered.`,
          }
        : {
            testid: 'undelivered',
            text: `Not delivered: a ${item.undelivered.msgtype} message named this member, who was reported in ${item.undelivered.reason}${item.undelivered.reason === 'invaliduser' ? ' (unknown, or outside the app’s visible range)' : ' (no licence)'}.`,
          };
  const agent =
    item.kind === 'drop'
      ? item.drop.agentId
      : item.kind === 'duplicate'
        ? item.duplicate.agentId
        : item.undelivered.agentId;
  return h(
    'li',
    { class: 'ib-item ib-notice', 'data-testid': 'inbox-item', 'data-kind': item.kind },
    h('div', { class: 'ib-meta' }, h('time', {}, time(item.at)), ` · agent ${agent}`),
    h('p', { class: 'ib-notice-text', 'data-testid': testid }, text),
  );
}

function drawMessage(userid: string, m: api.ReceivedMessage): HTMLElement {
  const updates = m.updates ?? [];
  const lastCard = updates.findLastIndex((u) => 'card' in u);
  const last = updates.at(-1);
  const replaceName =
    last && 'replaceName' in last && updates.length - 1 > lastCard ? last.replaceName : undefined;
  const body = { msgtype: m.msgtype, [m.msgtype]: m.payload } as MessageBody;
  const result = results.get(m.msgid);
  const bubble = renderMessage(body, {
    state: {
      recalled: m.recalled,
      replaced: lastCard >= 0,
      pressed: pressed.has(m.msgid),
      ...(pressed.has(m.msgid) ? { selected: pressed.get(m.msgid) } : {}),
      ...(replaceName !== undefined ? { replaceName } : {}),
    },
    onCardAction: (action) => act(userid, m.msgid, action),
  });
  return h(
    'li',
    {
      class: 'ib-item',
      'data-testid': 'inbox-item',
      'data-kind': 'message',
      'data-msgid': m.msgid,
      'data-recalled': m.recalled ? 'true' : undefined,
      'data-updated': updates.length > 0 ? 'true' : undefined,
    },
    h(
      'div',
      { class: 'ib-meta' },
      h('a', { href: hrefFor({ userid, only: m.msgid }), 'data-testid': 'message-link' }, time(m.receivedAt)),
      ` · agent ${m.agentId} · ${m.msgtype}`,
      m.recalled ? h('span', { class: 'ib-tag' }, 'recalled') : null,
      updates.length > 0
        ? h('span', { class: 'ib-tag', 'data-testid': 'updated-tag' }, `updated ×${updates.length}`)
        : null,
    ),
    bubble,
    result
      ? h(
          'p',
          {
            class: result.ok ? 'ib-result' : 'ib-result ib-error',
            'data-testid': 'action-result',
            role: 'status',
          },
          result.text,
        )
      : null,
    updates.length > 0
      ? h(
          'details',
          { class: 'ib-raw', 'data-testid': 'update-history' },
          h('summary', {}, 'update history'),
          h(
            'ol',
            {},
            ...updates.map((u) =>
              h(
                'li',
                {},
                `${time(u.at)} · ${'replaceName' in u ? `button → “${u.replaceName}”` : 'whole card replaced'}`,
              ),
            ),
          ),
        )
      : null,
    h(
      'details',
      { class: 'ib-raw' },
      h('summary', {}, 'JSON'),
      h('pre', {}, JSON.stringify({ ...m, updates: undefined }, null, 2)),
    ),
  );
}

/** A press on a card: the member's click, posted by the simulator to the app as WeCom's encrypted event. */
async function act(userid: string, msgid: string, action: CardAction): Promise<void> {
  try {
    const answer = await api.click({
      userid,
      msgid,
      key: action.key,
      ...(action.kind === 'menu' ? { menu: true } : {}),
      ...(Object.keys(action.selected).length > 0 ? { selected_items: action.selected } : {}),
    });
    pressed.set(msgid, action.selected);
    results.set(msgid, {
      ok: answer.status >= 200 && answer.status < 300,
      text: `Pressed “${answer.eventKey}”: the app's callback URL answered HTTP ${answer.status} after ${answer.attempts} attempt(s).`,
    });
  } catch (err) {
    results.set(msgid, { ok: false, text: `Not sent: ${err instanceof Error ? err.message : String(err)}` });
    await refresh();
    throw err;
  }
  await refresh();
}

async function sendReply(): Promise<void> {
  const userid = readRoute().userid;
  const content = replyInput.value.trim();
  if (!userid || !content) return;
  replyButton.disabled = true;
  try {
    const answer = await api.reply({
      userid,
      content,
      ...(replyApp.value ? { agentid: Number(replyApp.value) } : {}),
    });
    replyResult.className = 'ib-result';
    replyResult.textContent = `Sent to the app as ${userid}: its callback URL answered HTTP ${answer.status} after ${answer.attempts} attempt(s).`;
    replyInput.value = '';
  } catch (err) {
    replyResult.className = 'ib-result ib-error';
    replyResult.textContent = `Not sent: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    replyButton.disabled = false;
  }
}

// Every send, recall or card update in the simulator is announced here; EventSource reconnects by itself.
new EventSource('/__sim/stream').addEventListener('change', () => void refresh());
void refresh();

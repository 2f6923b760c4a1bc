/**
 * Group robots' chats in the inbox page: `/__sim/ui/group:<robot>` shows what a robot posted to its group, newest
 * first. A userid holds no colon, so the route cannot meet a member's.
 */
import { renderMessage } from '../render/message.js';
import { h } from '../shared/dom.js';
import type { Group, GroupMessage } from './api.js';

export const GROUP_PREFIX = 'group:';

/** The robot a route's segment names, or undefined for a member. */
export const robotOf = (segment: string | undefined): string | undefined =>
  segment?.startsWith(GROUP_PREFIX) ? segment.slice(GROUP_PREFIX.length) : undefined;

/** The picker's options for the groups, after the members'. */
export function groupOptions(groups: readonly Group[], current: string | undefined): HTMLElement[] {
  if (groups.length === 0) return [];
  return [
    h(
      'optgroup',
      { label: 'Group robots' },
      ...groups.map((g) =>
        h(
          'option',
          { value: `${GROUP_PREFIX}${g.robot}`, selected: `${GROUP_PREFIX}${g.robot}` === current },
          `${g.robot} (${g.messages})${g.state === 'active' ? '' : ` · ${g.state}`}`,
        ),
      ),
    ),
  ];
}

const time = (at: number): string => new Date(at).toLocaleString('zh-CN', { hour12: false });

/** One robot post, as the group sees it (markdown_v2 as web/render shows it). */
export function drawGroupMessage(robot: string, m: GroupMessage): HTMLElement {
  const msgtype = m.msgtype;
  return h(
    'li',
    { class: 'ib-item', 'data-testid': 'inbox-item', 'data-kind': 'group-message', 'data-msgid': m.msgid },
    h('div', { class: 'ib-meta' }, h('time', {}, time(m.receivedAt)), ` · robot ${robot} · ${m.msgtype}`),
    renderMessage({ msgtype, [msgtype]: m.payload }),
    h('details', { class: 'ib-raw' }, h('summary', {}, 'JSON'), h('pre', {}, JSON.stringify(m, null, 2))),
  );
}

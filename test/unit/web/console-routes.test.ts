import { describe, expect, it } from 'vitest';
import { channelLabel, channelOfEntry } from '../../../web/console/channel.js';
import {
  hrefOf,
  localInputToRfc3339,
  messagesQuery,
  parseRoute,
  type Route,
  rfc3339ToLocalInput,
} from '../../../web/console/routes.js';

const BASE = '/console';

describe('console routes', () => {
  it('reads the Messages page and its filters from the URL, dropping unknown and empty parameters', () => {
    expect(parseRoute(BASE, '/console', '')).toEqual({ page: 'messages', filters: {} });
    expect(
      parseRoute(
        BASE,
        '/console/messages',
        '?app=ops&status=failed,dead&touser=ZhangSan&x=1&msgtype=&limit=5',
      ),
    ).toEqual({ page: 'messages', filters: { app: 'ops', status: 'failed,dead', touser: 'ZhangSan' } });
  });

  it('reads a message, an app, the DLQ and the events feed', () => {
    expect(parseRoute(BASE, '/console/messages/msg_01J%2Fx', '')).toEqual({
      page: 'message',
      id: 'msg_01J/x',
    });
    expect(parseRoute(BASE, '/console/apps/ops', '')).toEqual({ page: 'apps', app: 'ops' });
    expect(parseRoute(BASE, '/console/dlq', '?lane=high')).toEqual({
      page: 'dlq',
      filters: { lane: 'high' },
    });
    expect(parseRoute(BASE, '/console/events', '?app=ops')).toEqual({ page: 'events', app: 'ops' });
    expect(parseRoute(BASE, '/console/nope/x/y', '')).toEqual({
      page: 'not-found',
      path: '/console/nope/x/y',
    });
  });

  it('writes each route back to the URL it was read from', () => {
    const routes: Route[] = [
      { page: 'messages', filters: { app: 'ops', touser: 'li si', since: '2026-12-01T08:00:00+08:00' } },
      { page: 'messages', filters: {} },
      { page: 'messages', filters: { robot: 'oncall', msgtype: 'markdown_v2' } },
      { page: 'message', id: 'msg_01JH8X2Q' },
      { page: 'apps' },
      { page: 'apps', app: 'ops' },
      { page: 'dlq', filters: { app: 'ops', lane: 'normal' } },
      { page: 'events' },
    ];
    for (const route of routes) {
      const url = new URL(hrefOf(BASE, route), 'https://gw.example');
      expect(parseRoute(BASE, url.pathname, url.search)).toEqual(route);
    }
    expect(hrefOf(BASE, { page: 'messages', filters: { app: 'ops', cursor: 'abc' } })).toBe(
      '/console/messages?app=ops&cursor=abc',
    );
  });

  it('asks GET /v1/messages with the same filters and a page size, and never with the API key', () => {
    expect(messagesQuery({ app: 'ops', status: 'sent', since: '2026-12-01T08:00:00+08:00' }, 50)).toBe(
      '?app=ops&status=sent&since=2026-12-01T08%3A00%3A00%2B08%3A00&limit=50',
    );
  });

  it('turns a local datetime input into RFC 3339 with the offset written out, and back', () => {
    expect(localInputToRfc3339('2026-12-01T08:30', 480)).toBe('2026-12-01T08:30:00+08:00');
    expect(localInputToRfc3339('2026-12-01T08:30', -330)).toBe('2026-12-01T08:30:00-05:30');
    expect(localInputToRfc3339('2026-12-01T08:30', 0)).toBe('2026-12-01T08:30:00Z');
    expect(localInputToRfc3339('yesterday', 0)).toBeUndefined();
    expect(rfc3339ToLocalInput('2026-12-01T00:30:00Z', 480)).toBe('2026-12-01T08:30');
    expect(rfc3339ToLocalInput('garbage', 480)).toBe('');
  });
});

describe('channels in the console', () => {
  it('names a dead letter or list entry of a group robot by its robot, and one of an app by its app', () => {
    // The API names `robot` instead of `app` for a robot's message (GET /v1/dlq, GET /v1/messages).
    expect(channelLabel(channelOfEntry({ robot: 'oncall' }))).toBe('robot oncall');
    expect(channelLabel(channelOfEntry({ app: 'ops' }))).toBe('ops');
    expect(channelOfEntry({ robot: 'oncall' })).toEqual({ kind: 'robot', name: 'oncall' });
  });
});

/**
 * The console's client-side routes and the URL state of each page, so a filtered view can be shared by its URL.
 * Pure (no DOM): the unit tests run it under node.
 */

/** Filters of the Messages page: the query parameters of `GET /v1/messages`, kept in the page's URL as they are. */
export const MESSAGE_FILTERS = [
  'app',
  'robot',
  'status',
  'touser',
  'msgtype',
  'since',
  'until',
  'cursor',
] as const;
export type MessageFilters = Partial<Record<(typeof MESSAGE_FILTERS)[number], string>>;

export const DLQ_FILTERS = ['app', 'lane'] as const;
export type DlqFilters = Partial<Record<(typeof DLQ_FILTERS)[number], string>>;

export type Route =
  | { page: 'messages'; filters: MessageFilters }
  | { page: 'message'; id: string }
  | { page: 'apps'; app?: string }
  | { page: 'dlq'; filters: DlqFilters }
  | { page: 'events'; app?: string }
  | { page: 'not-found'; path: string };

const pick = <K extends string>(params: URLSearchParams, names: readonly K[]): Partial<Record<K, string>> => {
  const out: Partial<Record<K, string>> = {};
  for (const name of names) {
    const value = params.get(name)?.trim();
    if (value) out[name] = value;
  }
  return out;
};

/** The route of a location below `basePath` (`/console`); the console's root is the Messages page. */
export function parseRoute(basePath: string, pathname: string, search: string): Route {
  const params = new URLSearchParams(search);
  const rest = pathname.startsWith(basePath) ? pathname.slice(basePath.length) : pathname;
  const parts = rest.split('/').filter(Boolean).map(safeDecode);
  const [first, second] = parts;
  if (parts.length === 0 || (first === 'messages' && parts.length === 1)) {
    return { page: 'messages', filters: pick(params, MESSAGE_FILTERS) };
  }
  if (first === 'messages' && parts.length === 2 && second) return { page: 'message', id: second };
  if (first === 'apps' && parts.length <= 2) return second ? { page: 'apps', app: second } : { page: 'apps' };
  if (first === 'dlq' && parts.length === 1) return { page: 'dlq', filters: pick(params, DLQ_FILTERS) };
  if (first === 'events' && parts.length === 1) {
    const app = params.get('app')?.trim();
    return app ? { page: 'events', app } : { page: 'events' };
  }
  return { page: 'not-found', path: pathname };
}

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

const query = (values: Record<string, string | undefined>): string => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v) params.set(k, v);
  const text = params.toString();
  return text ? `?${text}` : '';
};

/** The URL (path and query) of a route: the inverse of {@link parseRoute}. */
export function hrefOf(basePath: string, route: Route): string {
  switch (route.page) {
    case 'messages':
      return `${basePath}/messages${query(route.filters)}`;
    case 'message':
      return `${basePath}/messages/${encodeURIComponent(route.id)}`;
    case 'apps':
      return `${basePath}/apps${route.app ? `/${encodeURIComponent(route.app)}` : ''}`;
    case 'dlq':
      return `${basePath}/dlq${query(route.filters)}`;
    case 'events':
      return `${basePath}/events${query({ app: route.app })}`;
    case 'not-found':
      return route.path;
  }
}

/** The `GET /v1/messages` query of the page's filters, plus the page size. */
export function messagesQuery(filters: MessageFilters, limit: number): string {
  return query({ ...filters, limit: String(limit) });
}

/**
 * A `datetime-local` input's value (`2026-12-01T08:30`, the browser's local time) as the RFC 3339 time the API
 * takes, with the offset written out (`2026-12-01T08:30:00+08:00`), so a shared URL means the same instant anywhere.
 * `offsetMinutes` is east of UTC (the negation of `Date#getTimezoneOffset`).
 */
export function localInputToRfc3339(value: string, offsetMinutes: number): string | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::(\d{2}))?$/.exec(value);
  if (!m) return undefined;
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${m[1]}T${m[2]}:${m[3] ?? '00'}${offsetMinutes === 0 ? 'Z' : `${sign}${hh}:${mm}`}`;
}

/**
 * The inverse for the input field: an RFC 3339 time shown in local time (`datetime-local`), with its seconds when it
 * has any, or '' if unreadable.
 */
export function rfc3339ToLocalInput(text: string | undefined, offsetMinutes: number): string {
  if (!text) return '';
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return '';
  const local = new Date(ms + offsetMinutes * 60_000).toISOString();
  return local.slice(17, 19) === '00' ? local.slice(0, 16) : local.slice(0, 19);
}

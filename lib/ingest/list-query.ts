import {
  type Channel,
  foldUserId,
  LIMITS,
  MSG_TYPES,
  type MsgType,
  ROBOT_MSG_TYPE_NAMES,
  type RobotMsgType,
  type ValidationIssue,
} from '#lib/messages/index.js';
import { type MessageStatus, STATUS } from '#lib/model/index.js';
import { InvalidRequestError } from './errors.js';
import type { Principal } from './types.js';

/** The filters of one `GET /v1/messages` query, validated and normalized: what a cursor belongs to. */
export interface ListFilters {
  /** The app (`app=`) or group robot (`robot=`) whose messages are listed: one index partition. */
  channel: Channel;
  /** Distinct, in the order of {@link STATUS}. */
  statuses?: MessageStatus[];
  /** Case-folded: WeCom userids are case-insensitive (lib/messages `foldUserId`). */
  touser?: string;
  msgtype?: MsgType | RobotMsgType;
  /** Inclusive, as `toISOString` writes it (millisecond precision, UTC): how the records' times are stored. */
  since?: string;
  /** Exclusive, like `since`. */
  until?: string;
}

export interface ListRequest {
  filters: ListFilters;
  limit: number;
  cursor?: string;
}

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 100;

const PARAMETERS = [
  'app',
  'robot',
  'status',
  'touser',
  'msgtype',
  'since',
  'until',
  'limit',
  'cursor',
] as const;
const STATUSES = Object.values(STATUS) as MessageStatus[];

/**
 * RFC 3339 date-time (`2026-12-01T08:00:00Z`, `2026-12-01T16:00:00.5+08:00`). The offset's `+` may arrive as a
 * space: in a query string an unencoded `+` means one (`URLSearchParams`, API Gateway).
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+\- ]\d{2}:\d{2})$/i;

/** Epoch ms of an RFC 3339 time; undefined unless it is one, with a real calendar date (no 30 February). */
export function parseRfc3339(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const day = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (
    day.getUTCFullYear() !== y ||
    day.getUTCMonth() !== mo - 1 ||
    day.getUTCDate() !== d ||
    day.getUTCHours() !== h ||
    day.getUTCMinutes() !== mi
  ) {
    return undefined;
  }
  const offset = (m[8] as string).replace(' ', '+');
  const ms = Date.parse(`${m.slice(1, 4).join('-')}T${m.slice(4, 7).join(':')}${m[7] ?? ''}${offset}`);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * The query of `GET /v1/messages` as filters, or a 400 naming every bad parameter. An empty value is as good as
 * none (a form's blank field). A page is one Query on one channel's index partition, so a query names one app
 * (`app`) or one group robot (`robot`); it may name neither for a key's only app (or a robot-only key's only robot). A robot
 * posts to its group chat, so its messages have no recipient to filter by (`touser`) and its own msgtypes.
 *
 * @example parseListQuery({ app: 'ops', status: 'failed,dead', limit: '20' }, { apps: ['ops'] })
 */
export function parseListQuery(
  query: Readonly<Record<string, string | undefined>>,
  key: Pick<Principal, 'apps' | 'robots'>,
): ListRequest {
  const issues: ValidationIssue[] = [];
  const given = (name: (typeof PARAMETERS)[number]): string | undefined => {
    const value = query[name]?.trim();
    return value === '' ? undefined : value;
  };
  for (const name of Object.keys(query)) {
    if (!(PARAMETERS as readonly string[]).includes(name)) {
      issues.push({ field: name, message: `unknown parameter; use ${PARAMETERS.join(', ')}` });
    }
  }

  const channel = channelOfQuery(given('app'), given('robot'), key, issues);

  let statuses: MessageStatus[] | undefined;
  const statusText = given('status');
  if (statusText !== undefined) {
    const named = statusText.split(',').map((s) => s.trim());
    const unknown = named.filter((s) => !(STATUSES as string[]).includes(s));
    if (unknown.length > 0) {
      issues.push({
        field: 'status',
        message: `unknown status ${unknown.map((s) => JSON.stringify(s)).join(', ')}; one or more (comma-separated) of ${STATUSES.join(', ')}`,
      });
    } else statuses = STATUSES.filter((s) => named.includes(s));
  }

  const touserText = given('touser');
  if (touserText !== undefined && channel?.kind === 'robot') {
    issues.push({
      field: 'touser',
      message: "a robot's messages go to its group chat: they list no recipients",
    });
  } else if (touserText !== undefined) {
    const bytes = Buffer.byteLength(touserText);
    if (touserText.includes('|') || touserText.includes(',')) {
      issues.push({
        field: 'touser',
        message: 'one userid (a message is found by any one of its recipients)',
      });
    } else if (bytes > LIMITS.recipients.maxUserIdBytes) {
      issues.push({ field: 'touser', message: `${bytes} bytes, max ${LIMITS.recipients.maxUserIdBytes}` });
    }
  }

  const msgtype = given('msgtype');
  const msgtypes: readonly string[] = channel?.kind === 'robot' ? ROBOT_MSG_TYPE_NAMES : MSG_TYPES;
  if (msgtype !== undefined && !msgtypes.includes(msgtype)) {
    issues.push({
      field: 'msgtype',
      message: `unknown ${channel?.kind === 'robot' ? "robot's " : ''}msgtype; one of ${msgtypes.join(', ')}`,
    });
  }

  const times: Partial<Record<'since' | 'until', number>> = {};
  for (const name of ['since', 'until'] as const) {
    const text = given(name);
    if (text === undefined) continue;
    const ms = parseRfc3339(text);
    if (ms === undefined) {
      issues.push({ field: name, message: 'must be an RFC 3339 time, e.g. 2026-12-01T08:00:00Z' });
    } else times[name] = ms;
  }
  if (times.since !== undefined && times.until !== undefined && times.since > times.until) {
    issues.push({ field: 'since', message: 'must not be after until' });
  }

  const limitText = given('limit');
  const limit =
    limitText === undefined ? DEFAULT_LIST_LIMIT : /^\d{1,4}$/.test(limitText) ? Number(limitText) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIST_LIMIT)) {
    issues.push({ field: 'limit', message: `must be an integer 1-${MAX_LIST_LIMIT}` });
  }

  if (issues.length > 0 || channel === undefined) {
    throw new InvalidRequestError('invalid_request', 'bad query parameters', issues);
  }
  const cursor = given('cursor');
  const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
  const since = iso(times.since);
  const until = iso(times.until);
  return {
    filters: {
      channel,
      ...(statuses ? { statuses } : {}),
      ...(touserText !== undefined ? { touser: foldUserId(touserText) } : {}),
      ...(msgtype !== undefined ? { msgtype: msgtype as MsgType | RobotMsgType } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(until !== undefined ? { until } : {}),
    },
    limit,
    ...(cursor !== undefined ? { cursor } : {}),
  };
}

/**
 * The channel a query lists: the app or robot it names; else the key's only app, or the only robot of a key
 * without apps. Pushes an issue (and answers undefined) when it names both, or neither while that leaves a choice.
 */
function channelOfQuery(
  app: string | undefined,
  robot: string | undefined,
  key: Pick<Principal, 'apps' | 'robots'>,
  issues: ValidationIssue[],
): Channel | undefined {
  if (app !== undefined && robot !== undefined) {
    issues.push({ field: 'robot', message: 'name an app or a robot, not both: a page lists one of them' });
    return undefined;
  }
  if (app !== undefined) return { kind: 'app', name: app };
  if (robot !== undefined) return { kind: 'robot', name: robot };
  // A key's only app stays the default whatever robots it has: queries written before robots keep working.
  const robots = key.robots ?? [];
  if (key.apps.length === 1) return { kind: 'app', name: key.apps[0] as string };
  if (key.apps.length === 0 && robots.length === 1) return { kind: 'robot', name: robots[0] as string };
  const readable = [
    ...(key.apps.length > 0 ? [`apps ${key.apps.join(', ')}`] : []),
    ...(robots.length > 0 ? [`robots ${robots.join(', ')}`] : []),
  ];
  issues.push({
    field: 'app',
    message: `required (or robot): this key may read ${readable.join('; ')}; name one`,
  });
  return undefined;
}

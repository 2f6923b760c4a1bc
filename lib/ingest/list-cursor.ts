import { createHash } from 'node:crypto';
import { channelKey } from '#lib/messages/index.js';
import type { ListPosition } from '#lib/store/index.js';
import { InvalidRequestError } from './errors.js';
import type { ListFilters } from './list-query.js';

/**
 * The `next_cursor` of `GET /v1/messages`: base64url JSON of where the page ended (a position in the list's order,
 * never a raw DynamoDB key) and a fingerprint of the filters it was made for.
 *
 * Not signed, and it need not be: the store builds the next Query from the request's own, authorized channel (and
 * `touser`) and takes from the cursor only a time and a message id inside the request's time range, so an edited
 * cursor can only move within what the same key may list anyway. The fingerprint makes a cursor used with other
 * filters (another app or robot, status, recipient, type or time range) a 400 instead of a page that silently mixes two
 * queries. It leaks nothing the key cannot read: the time and id of a message of its own channel.
 */
interface CursorBody {
  /** Format version: a cursor of another version is refused, never misread. */
  v: 1;
  /** {@link filtersFingerprint} of the query the cursor continues. */
  f: string;
  /** The position's `createdAt` and `id`; `e`: it is a recipient entry (lib/store `ListPosition.entry`). */
  t: string;
  i: string;
  e?: 1;
}

/** Well above what {@link encodeListCursor} makes (about 150 characters); a longer one is not ours. */
const MAX_CURSOR_LENGTH = 512;
/** The acceptance time of a record as lib/ingest writes it (`toISOString`). */
const STORED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Message ids (`msg_<ULID>`, and the ids of records made by tests and tools): no `#`, which the sort key uses. */
const ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * A short digest of the filters a cursor belongs to (not of `limit`: a client may change the page size while
 * paging). Canonical: the same filters in any order of the query string give the same digest.
 */
export function filtersFingerprint(f: ListFilters): string {
  // An app's key is its name: cursors handed out before robots could be listed stay valid.
  const canonical = JSON.stringify([
    channelKey(f.channel),
    f.statuses ?? null,
    f.touser ?? null,
    f.msgtype ?? null,
    f.since ?? null,
    f.until ?? null,
  ]);
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 22);
}

/**
 * The cursor that continues `filters` after `position`.
 *
 * @example encodeListCursor({ createdAt: '2026-12-01T08:00:00.000Z', id: 'msg_01J…' }, { app: 'ops' })
 */
export function encodeListCursor(position: ListPosition, filters: ListFilters): string {
  const body: CursorBody = {
    v: 1,
    f: filtersFingerprint(filters),
    t: position.createdAt,
    i: position.id,
    ...(position.entry ? { e: 1 as const } : {}),
  };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

const invalid = (message: string) =>
  new InvalidRequestError('invalid_request', `cursor: ${message}`, [{ field: 'cursor', message }]);

/**
 * The position a cursor names, checked against the request it comes with: a 400 naming `cursor` when it is not one
 * this API made, was made for other filters, or points outside the request's time range.
 */
export function decodeListCursor(cursor: string, filters: ListFilters): ListPosition {
  if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw invalid('not a cursor this API handed out');
  }
  let body: Partial<CursorBody>;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<CursorBody>;
  } catch {
    throw invalid('not a cursor this API handed out');
  }
  const { v, f, t, i, e } = (body ?? {}) as Record<string, unknown>;
  if (
    v !== 1 ||
    typeof f !== 'string' ||
    typeof t !== 'string' ||
    !STORED_TIME.test(t) ||
    Number.isNaN(Date.parse(t)) ||
    typeof i !== 'string' ||
    !ID.test(i) ||
    (e !== undefined && e !== 1)
  ) {
    throw invalid('not a cursor this API handed out');
  }
  if (f !== filtersFingerprint(filters)) {
    throw invalid(
      'it belongs to another query: send the app, status, touser, msgtype, since and until of the page it came from',
    );
  }
  // Only a forged cursor can lie outside the range its own filters gave (and DynamoDB would refuse it as a start).
  if (
    (filters.since !== undefined && t < filters.since) ||
    (filters.until !== undefined && t >= filters.until)
  ) {
    throw invalid('it points outside since/until');
  }
  if (e === 1 && filters.touser === undefined) throw invalid('not a cursor this API handed out');
  return { createdAt: t, id: i, ...(e === 1 ? { entry: true } : {}) };
}

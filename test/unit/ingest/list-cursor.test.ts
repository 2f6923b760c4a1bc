import { describe, expect, it } from 'vitest';
import {
  decodeListCursor,
  encodeListCursor,
  InvalidRequestError,
  type ListFilters,
} from '#lib/ingest/index.js';
import { thrown } from '#test/helpers/thrown.js';

const position = { createdAt: '2026-12-01T08:00:00.000Z', id: 'msg_01JH8X2Q4Z6V3K9M7N5P1R0S2T' };
const filters: ListFilters = {
  channel: { kind: 'app', name: 'ops' },
  statuses: ['failed'],
  touser: 'alice',
  msgtype: 'text',
  since: '2026-11-30T00:00:00.000Z',
  until: '2026-12-02T00:00:00.000Z',
};
/** The message of the 400 a cursor gets, which always names `cursor`. */
const refusal = (cursor: string, f: ListFilters = filters) => {
  const err = thrown(() => decodeListCursor(cursor, f), InvalidRequestError);
  expect(err.code).toBe('invalid_request');
  expect(err.details.map((d) => d.field)).toEqual(['cursor']);
  return err.details[0]?.message;
};
const forge = (body: unknown) => Buffer.from(JSON.stringify(body)).toString('base64url');

describe('the message list cursor', () => {
  it('gives back the position it was made from, for the filters it was made for', () => {
    expect(decodeListCursor(encodeListCursor(position, filters), filters)).toEqual(position);
    const entry = { ...position, entry: true };
    expect(decodeListCursor(encodeListCursor(entry, filters), filters)).toEqual(entry);
  });

  it('is opaque URL-safe text, no raw DynamoDB key in it', () => {
    const cursor = encodeListCursor(position, filters);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(cursor, 'base64url').toString()).not.toMatch(/MSGS#|MSG#|listKey|pk/);
  });

  it('is the same cursor for the same filters in another order, and ignores the page size', () => {
    const reordered: ListFilters = {
      until: filters.until as string,
      channel: { kind: 'app', name: 'ops' },
      msgtype: 'text',
      touser: 'alice',
      statuses: ['failed'],
      since: filters.since as string,
    };
    expect(encodeListCursor(position, reordered)).toBe(encodeListCursor(position, filters));
  });

  it.each([
    ['app', { channel: { kind: 'app', name: 'billing' } }],
    ['channel', { channel: { kind: 'robot', name: 'ops' } }],
    ['status', { statuses: ['failed', 'dead'] }],
    ['touser', { touser: 'bob' }],
    ['msgtype', { msgtype: 'markdown' }],
    ['since', { since: '2026-11-29T00:00:00.000Z' }],
    ['until', { until: undefined }],
  ] as const)('refuses a cursor made for another %s', (_what, change) => {
    const cursor = encodeListCursor(position, filters);
    const other = { ...filters, ...change } as ListFilters;
    if (other.until === undefined) delete other.until;
    expect(refusal(cursor, other)).toMatch(/belongs to another query/);
  });

  it.each([
    ['garbage', 'not a cursor!'],
    ['base64 of no JSON', Buffer.from('{{').toString('base64url')],
    ['JSON of a number', forge(7)],
    ['another version', forge({ v: 2, f: 'x', t: position.createdAt, i: position.id })],
    ['a time not as stored', forge({ v: 1, f: 'x', t: '2026-12-01T08:00:00Z', i: position.id })],
    ['an id with a #', forge({ v: 1, f: 'x', t: position.createdAt, i: 'msg_1#x' })],
    ['an odd entry flag', forge({ v: 1, f: 'x', t: position.createdAt, i: position.id, e: true })],
    ['far too long', 'A'.repeat(600)],
  ])('refuses %s as not one of its cursors', (_what, cursor) => {
    expect(refusal(cursor)).toBe('not a cursor this API handed out');
  });

  it('refuses an edited cursor that points outside since/until (DynamoDB would refuse the start key)', () => {
    const made = JSON.parse(Buffer.from(encodeListCursor(position, filters), 'base64url').toString());
    expect(refusal(forge({ ...made, t: '2026-12-03T00:00:00.000Z' }))).toBe('it points outside since/until');
    expect(refusal(forge({ ...made, t: '2026-12-02T00:00:00.000Z' }))).toBe('it points outside since/until');
    expect(refusal(forge({ ...made, t: '2026-11-29T23:59:59.999Z' }))).toBe('it points outside since/until');
  });

  it('refuses a recipient entry position without touser', () => {
    const byApp: ListFilters = { channel: { kind: 'app', name: 'ops' } };
    const made = JSON.parse(Buffer.from(encodeListCursor(position, byApp), 'base64url').toString());
    expect(refusal(forge({ ...made, e: 1 }), byApp)).toBe('not a cursor this API handed out');
  });

  it('tells an app’s list from a robot’s of the same name (a robot is another channel)', () => {
    const ofApp: ListFilters = { channel: { kind: 'app', name: 'ops' } };
    const ofRobot: ListFilters = { channel: { kind: 'robot', name: 'ops' } };
    expect(refusal(encodeListCursor(position, ofApp), ofRobot)).toMatch(/belongs to another query/);
    expect(decodeListCursor(encodeListCursor(position, ofRobot), ofRobot)).toEqual(position);
  });
});

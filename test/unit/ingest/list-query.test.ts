import { describe, expect, it } from 'vitest';
import { InvalidRequestError, parseListQuery, parseRfc3339 } from '#lib/ingest/index.js';
import { thrown } from '#test/helpers/thrown.js';

/** The parameters a 400 names, in order. */
const namedFields = (query: Record<string, string>, apps = ['ops']) =>
  thrown(() => parseListQuery(query, { apps }), InvalidRequestError).details.map((d) => d.field);

const ops = { kind: 'app', name: 'ops' } as const;

describe('parseListQuery (GET /v1/messages)', () => {
  it('lists a robot by name, or by default for a key with one robot and no app', () => {
    const oncall = { kind: 'robot', name: 'oncall' } as const;
    expect(parseListQuery({ robot: 'oncall' }, { apps: ['ops'], robots: ['oncall'] }).filters).toEqual({
      channel: oncall,
    });
    expect(parseListQuery({}, { apps: [], robots: ['oncall'] }).filters).toEqual({ channel: oncall });
    expect(parseListQuery({ robot: 'oncall', msgtype: 'markdown_v2' }, { apps: [] }).filters.msgtype).toBe(
      'markdown_v2',
    );
    // A key's only app stays its default when it may use robots too (queries from before robots still work).
    expect(parseListQuery({}, { apps: ['ops'], robots: ['oncall'] }).filters).toEqual({ channel: ops });
    const several = thrown(
      () => parseListQuery({}, { apps: [], robots: ['oncall', 'infra'] }),
      InvalidRequestError,
    );
    expect(several.details).toEqual([
      { field: 'app', message: 'required (or robot): this key may read robots oncall, infra; name one' },
    ]);
  });

  it('defaults to the key’s only app, 50 per page and no filters', () => {
    expect(parseListQuery({}, { apps: ['ops'] })).toEqual({ filters: { channel: ops }, limit: 50 });
  });

  it('needs app from a key for several apps (a page is one Query on one app)', () => {
    const err = thrown(() => parseListQuery({}, { apps: ['ops', 'billing'] }), InvalidRequestError);

    expect(err.code).toBe('invalid_request');
    expect(err.details).toEqual([
      { field: 'app', message: 'required (or robot): this key may read apps ops, billing; name one' },
    ]);
    expect(parseListQuery({ app: 'billing' }, { apps: ['ops', 'billing'] }).filters.channel).toEqual({
      kind: 'app',
      name: 'billing',
    });
  });

  it('normalizes every filter: statuses in a fixed order, the userid case-folded, times in UTC ms', () => {
    const parsed = parseListQuery(
      {
        app: 'ops',
        status: 'failed, queued,failed',
        touser: 'ZhangSan',
        msgtype: 'markdown',
        since: '2026-12-01T16:00:00+08:00',
        until: '2026-12-01T09:30:00.5Z',
        limit: '100',
        cursor: 'abc',
      },
      { apps: ['ops'] },
    );

    expect(parsed).toEqual({
      filters: {
        channel: ops,
        statuses: ['queued', 'failed'],
        touser: 'zhangsan',
        msgtype: 'markdown',
        since: '2026-12-01T08:00:00.000Z',
        until: '2026-12-01T09:30:00.500Z',
      },
      limit: 100,
      cursor: 'abc',
    });
  });

  it('takes an empty value as no value (a form’s blank field)', () => {
    expect(
      parseListQuery({ app: '', status: '', touser: ' ', limit: '', cursor: '' }, { apps: ['ops'] }),
    ).toEqual({
      filters: { channel: ops },
      limit: 50,
    });
  });

  it.each([
    [{ status: 'delivered' }, ['status']],
    [{ status: 'sent,bogus' }, ['status']],
    [{ msgtype: 'sms' }, ['msgtype']],
    [{ touser: 'a|b' }, ['touser']],
    [{ touser: 'x'.repeat(65) }, ['touser']],
    [{ since: 'yesterday' }, ['since']],
    [{ until: '2026-02-30T00:00:00Z' }, ['until']],
    [{ since: '2026-12-01' }, ['since']],
    [{ since: '2026-12-01T10:00:00Z', until: '2026-12-01T09:00:00Z' }, ['since']],
    [{ limit: '0' }, ['limit']],
    [{ limit: '101' }, ['limit']],
    [{ limit: '2.5' }, ['limit']],
    [{ limit: '-1' }, ['limit']],
    [{ user: 'alice' }, ['user']],
    [{ status: 'x', limit: 'many', sort: 'asc' }, ['sort', 'status', 'limit']],
    [{ app: 'ops', robot: 'oncall' }, ['robot']],
    [{ robot: 'oncall', touser: 'alice' }, ['touser']],
    [{ robot: 'oncall', msgtype: 'textcard' }, ['msgtype']],
    [{ msgtype: 'markdown_v2' }, ['msgtype']],
  ])('answers %j with a 400 naming %j', (query, fields) => {
    expect(namedFields(query)).toEqual(fields);
  });

  it('says which statuses exist', () => {
    const err = thrown(() => parseListQuery({ status: 'delivered' }, { apps: ['ops'] }), InvalidRequestError);
    expect(err.details[0]?.message).toBe(
      'unknown status "delivered"; one or more (comma-separated) of scheduled, queued, deferred, sent, failed, dead, expired, recalled, canceled',
    );
  });

  it('accepts since equal to until (an empty range, not an error)', () => {
    const at = '2026-12-01T08:00:00Z';
    expect(parseListQuery({ since: at, until: at }, { apps: ['ops'] }).filters).toMatchObject({
      since: '2026-12-01T08:00:00.000Z',
      until: '2026-12-01T08:00:00.000Z',
    });
  });
});

describe('parseRfc3339', () => {
  it.each([
    ['2026-12-01T08:00:00Z', '2026-12-01T08:00:00.000Z'],
    ['2026-12-01t08:00:00z', '2026-12-01T08:00:00.000Z'],
    ['2026-12-01T16:00:00+08:00', '2026-12-01T08:00:00.000Z'],
    // An unencoded `+` in a query string arrives as a space.
    ['2026-12-01T16:00:00 08:00', '2026-12-01T08:00:00.000Z'],
    ['2026-12-01T03:00:00-05:00', '2026-12-01T08:00:00.000Z'],
    ['2026-12-01T08:00:00.123456789Z', '2026-12-01T08:00:00.123Z'],
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(new Date(parseRfc3339(text) as number).toISOString()).toBe(iso);
  });

  it.each([
    '2026-12-01',
    '2026-12-01T08:00Z',
    '2026-12-01T08:00:00',
    '2026-02-29T00:00:00Z',
    '2026-12-01T24:00:00Z',
    '2026-12-01T08:60:00Z',
    '2026-13-01T00:00:00Z',
    '1764576000',
    '2026-12-01T08:00:00+0800',
  ])('refuses %s', (text) => {
    expect(parseRfc3339(text)).toBeUndefined();
  });
});

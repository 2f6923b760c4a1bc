import { describe, expect, it } from 'vitest';
import {
  parseVisibleRange,
  type RecipientIds,
  rangeCoverage,
  type VisibleRange,
  VisibleRangeCache,
} from '#lib/wecom/index.js';

const ids = (over: Partial<RecipientIds>): RecipientIds => ({ touser: [], toparty: [], totag: [], ...over });
const range = (over: Partial<VisibleRange>): VisibleRange => ({ users: [], parties: [], tags: [], ...over });
const NONE = ids({});

describe('rangeCoverage', () => {
  it('puts nobody outside a range that holds the root department', () => {
    const coverage = rangeCoverage(
      range({ parties: ['1'] }),
      ids({ touser: ['zhangsan'], toparty: ['9'], totag: ['4'] }),
    );

    expect(coverage).toEqual({ outside: NONE, unknown: NONE });
  });

  it('puts users, parties and tags outside a range of users only, keeping the caller spelling', () => {
    const coverage = rangeCoverage(
      range({ users: ['lisi'] }),
      ids({ touser: ['LiSi', 'ZhangSan'], toparty: ['2'], totag: ['4'] }),
    );

    expect(coverage.outside).toEqual(ids({ touser: ['ZhangSan'], toparty: ['2'], totag: ['4'] }));
    expect(coverage.unknown).toEqual(NONE);
  });

  it('calls an unlisted user or party unknown when a party or tag of the range may hold it', () => {
    const byParty = rangeCoverage(
      range({ parties: ['2'], tags: ['7'] }),
      ids({ touser: ['zhangsan'], toparty: ['2', '3'], totag: ['7', '8'] }),
    );
    const byTag = rangeCoverage(range({ tags: ['7'] }), ids({ touser: ['zhangsan'] }));

    expect(byParty).toEqual({
      outside: ids({ totag: ['8'] }),
      unknown: ids({ touser: ['zhangsan'], toparty: ['3'] }),
    });
    expect(byTag.unknown.touser).toEqual(['zhangsan']);
  });

  it('counts @all as inside: it means everyone in the range', () => {
    expect(rangeCoverage(range({ users: ['lisi'] }), ids({ touser: ['@all'] }))).toEqual({
      outside: NONE,
      unknown: NONE,
    });
  });
});

describe('parseVisibleRange', () => {
  it("reads agent/get's allow_userinfos, allow_partys and allow_tags as strings", () => {
    expect(
      parseVisibleRange({
        allow_userinfos: { user: [{ userid: 'zhangsan' }, {}] },
        allow_partys: { partyid: [2, 3] },
        allow_tags: { tagid: [4] },
      }),
    ).toEqual({ users: ['zhangsan'], parties: ['2', '3'], tags: ['4'] });
    expect(parseVisibleRange({})).toEqual({ users: [], parties: [], tags: [] });
  });
});

describe('VisibleRangeCache', () => {
  const APP = { corpId: 'ww1', agentId: 1000002, secret: 's' };
  const tokens = { withToken: <T>(_app: unknown, call: (token: string) => Promise<T>) => call('t') };

  it('asks agent/get once per minute per app, sharing one call between concurrent readers', async () => {
    let now = 0;
    const calls: Record<string, string>[] = [];
    const wecom = {
      contacts: async (_token: string, _api: string, query: Record<string, string>) => {
        calls.push(query);
        return { allow_userinfos: { user: [{ userid: 'zhangsan' }] } };
      },
    };
    const cache = new VisibleRangeCache(tokens, wecom, { now: () => now });

    const [a, b] = await Promise.all([cache.get(APP), cache.get(APP)]);
    now = 59_999;
    await cache.get(APP);
    now = 60_000;
    const fresh = await cache.get(APP);

    expect(a).toBe(b);
    expect(a.range.users).toEqual(['zhangsan']);
    expect(calls).toEqual([{ agentid: '1000002' }, { agentid: '1000002' }]);
    expect(fresh.fetchedAtMs).toBe(60_000);
  });

  it('does not remember a failure: the next reader asks WeCom again', async () => {
    let fail = true;
    const wecom = {
      contacts: async () => {
        if (fail) throw new Error('60020');
        return { allow_partys: { partyid: [1] } };
      },
    };
    const cache = new VisibleRangeCache(tokens, wecom);

    await expect(cache.get(APP)).rejects.toThrow('60020');
    fail = false;

    expect((await cache.get(APP)).range.parties).toEqual(['1']);
  });
});

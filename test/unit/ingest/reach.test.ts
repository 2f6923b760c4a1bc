import { describe, expect, it } from 'vitest';
import type { ApiKeyConfig } from '#lib/config/index.js';
import { checkReach, MAX_REACH_IDS } from '#lib/ingest/index.js';
import { WecomApiError, WecomTransportError } from '#lib/wecom/index.js';
import { fakeIngest, ingestError, opsApiKey } from '#test/helpers/ingest-fakes.js';

const NOW = Date.parse('2026-12-02T06:00:00Z');

const withRange = (answer: () => Promise<Record<string, unknown>>) =>
  fakeIngest({ now: () => NOW, wecomAgentGet: answer });

describe('GET /v1/apps/{app}/reach', () => {
  it('lists only the named ids outside the range, never the range itself', async () => {
    const f = withRange(async () => ({
      allow_userinfos: { user: [{ userid: 'lisi' }, { userid: 'secret-member' }] },
      allow_partys: { partyid: [] },
      allow_tags: { tagid: [44] },
    }));

    const view = await checkReach(f.deps, opsApiKey(), 'ops', { touser: 'lisi|zhangsan', totag: '44|45' });

    expect(view).toEqual({
      app: 'ops',
      outside: { touser: [], toparty: [], totag: ['45'] },
      unknown: { touser: ['zhangsan'], toparty: [], totag: [] },
      checked_at: '2026-12-02T06:00:00.000Z',
    });
    expect(JSON.stringify(view)).not.toContain('secret-member');
  });

  it("answers 404 for an app outside the key's apps, without asking WeCom", async () => {
    let asked = 0;
    const f = withRange(async () => {
      asked++;
      return {};
    });
    const other: ApiKeyConfig = { ...opsApiKey(), apps: ['billing'] };

    const err = await ingestError(checkReach(f.deps, other, 'ops', { touser: 'zhangsan' }));

    expect(err.code).toBe('not_found');
    expect(asked).toBe(0);
  });

  it.each([
    [{}, 'touser'],
    [{ touser: '' }, 'touser'],
    [{ toparty: '2|x' }, 'toparty[1]'],
    [{ totag: 'a' }, 'totag[0]'],
    [{ touser: 'a||b' }, 'touser[1]'],
    [{ touser: 'x'.repeat(65) }, 'touser[0]'],
    [{ touser: Array.from({ length: MAX_REACH_IDS + 1 }, (_, i) => `u${i}`).join('|') }, 'touser'],
    [{ touser: 'a', to: 'b' }, 'to'],
    [{ touser: 'a,b' }, 'touser[0]'],
  ])('answers 400 naming the field for %j', async (query, field) => {
    const f = withRange(async () => ({}));

    const err = await ingestError(checkReach(f.deps, opsApiKey(), 'ops', query));

    expect(err.code).toBe('invalid_request');
    expect(err.details.map((d) => d.field)).toContain(field);
  });

  it('turns 60020 into a 409 that says to add the IP to 企业可信IP', async () => {
    const f = withRange(async () => {
      throw new WecomApiError(60020, 'not allow to access from your ip, from ip: 203.0.113.7', 'agent/get');
    });

    const err = await ingestError(checkReach(f.deps, opsApiKey(), 'ops', { touser: 'zhangsan' }));

    expect(err.code).toBe('wecom_ip_not_trusted');
    expect(err.message).toContain('203.0.113.7');
    expect(err.message).toContain('企业可信IP');
  });

  it('turns another refusal into wecom_reach_failed, and no answer into a retryable 503', async () => {
    const refused = withRange(async () => {
      throw new WecomApiError(48002, 'api forbidden', 'agent/get');
    });
    const silent = withRange(async () => {
      throw new WecomTransportError('WeCom agent/get: HTTP 502', 'HTTP_502', { inDoubt: true });
    });

    const a = await ingestError(checkReach(refused.deps, opsApiKey(), 'ops', { touser: 'zhangsan' }));
    const b = await ingestError(checkReach(silent.deps, opsApiKey(), 'ops', { touser: 'zhangsan' }));

    expect([a.code, a.message]).toEqual(['wecom_reach_failed', expect.stringContaining('errcode 48002')]);
    expect(b.code).toBe('unavailable');
  });
});

import { describe, expect, it } from 'vitest';
import { getAppState, listApps } from '#lib/ingest/index.js';
import type { AppPause } from '#lib/store/index.js';
import { fakeIngest, ingestError, opsApiKey } from '#test/helpers/ingest-fakes.js';

const NOW = Date.parse('2026-12-01T08:00:00Z');

function withPause(pause: AppPause | undefined) {
  const f = fakeIngest({ now: () => NOW });
  f.deps.pauses = { get: async (app) => (app === 'ops' ? pause : undefined) };
  f.deps.quotaUsage = {
    usage: async () => [
      { window: 'app-minute', limit: 10_000, allowed: 8_000, used: 25, resetsAtMs: NOW + 60_000 },
    ],
  };
  return f;
}

describe('GET /v1/apps/{app}', () => {
  it('shows an active app with its quota use and token age, never the token', async () => {
    const f = withPause(undefined);
    await f.deps.tokens.withToken(f.deps.config.apps.ops as never, async () => undefined);

    const view = await getAppState(f.deps, opsApiKey(), 'ops');

    expect(view).toMatchObject({
      app: 'ops',
      state: 'active',
      pause: null,
      quota: [
        {
          window: 'app-minute',
          limit: 10_000,
          allowed: 8_000,
          used: 25,
          resets_at: '2026-12-01T08:01:00.000Z',
        },
      ],
      token: { age_seconds: expect.any(Number), expires_in_seconds: expect.any(Number), last_error: null },
    });
    expect(JSON.stringify(view)).not.toMatch(/"t0"|secret-ops/);
  });

  it('shows an open circuit with the errcode, the operator hint and when waiting messages start to fail', async () => {
    const f = withPause({
      kind: 'config_error',
      untilMs: NOW + 120_000,
      sinceMs: NOW - 60_000,
      level: 1,
      errcode: 40001,
      reason: 'the app secret is wrong',
    });

    const view = await getAppState(f.deps, opsApiKey(), 'ops');

    expect(view.state).toBe('circuit_open');
    expect(view.pause).toMatchObject({
      kind: 'config_error',
      errcode: 40001,
      hint: expect.stringContaining('secret is wrong'),
      since: '2026-12-01T07:59:00.000Z',
      until: '2026-12-01T08:02:00.000Z',
      fails_messages_at: '2026-12-01T08:59:00.000Z',
    });
  });

  it('says probing once a pause ended and paused while a 45009 pause holds', async () => {
    const ended = withPause({
      kind: 'rate_limited',
      untilMs: NOW - 1,
      sinceMs: NOW - 61_000,
      level: 0,
      reason: '45009',
    });
    const holding = withPause({
      kind: 'rate_limited',
      untilMs: NOW + 1,
      sinceMs: NOW,
      level: 0,
      reason: '45009',
    });

    expect((await getAppState(ended.deps, opsApiKey(), 'ops')).state).toBe('probing');
    expect((await getAppState(holding.deps, opsApiKey(), 'ops')).state).toBe('paused');
  });

  it('answers 404 for an app the key may not use, as for one that does not exist', async () => {
    const f = withPause(undefined);

    expect((await ingestError(getAppState(f.deps, opsApiKey(), 'billing'))).code).toBe('not_found');
    expect((await ingestError(getAppState(f.deps, opsApiKey(), 'nope'))).code).toBe('not_found');
  });

  it('lists the apps the key may use with their state, and the key with its scopes', async () => {
    const f = withPause({ kind: 'rate_limited', untilMs: NOW + 1, sinceMs: NOW, level: 0, reason: '45009' });
    const key = opsApiKey();

    expect(await listApps(f.deps, key)).toEqual({
      key: { name: key.name, scopes: key.scopes },
      apps: [{ app: 'ops', state: 'paused' }],
    });
    expect(JSON.stringify(await listApps(f.deps, key))).not.toContain(key.sha256);
  });

  it("adds the lanes' depths for an admin key only: the lanes are shared by every app", async () => {
    const f = withPause(undefined);
    f.deps.queueDepths = {
      depths: async () => [
        { lane: 'high', waiting: 0, inFlight: 0, delayed: 0, dead: 0 },
        { lane: 'normal', waiting: 3, inFlight: 1, delayed: 2 },
      ],
    };
    const admin = { ...opsApiKey(), scopes: [...opsApiKey().scopes, 'admin' as const] };

    expect((await listApps(f.deps, opsApiKey())).queues).toBeUndefined();
    expect((await listApps(f.deps, admin)).queues).toEqual([
      { lane: 'high', waiting: 0, in_flight: 0, delayed: 0, dead: 0 },
      { lane: 'normal', waiting: 3, in_flight: 1, delayed: 2, dead: null },
    ]);
  });
});

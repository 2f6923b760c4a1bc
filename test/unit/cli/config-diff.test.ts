import { describe, expect, it } from 'vitest';
import { describeDiff, diffConfigs, isEmptyDiff } from '#cli/config-diff.js';
import { parseConfig } from '#lib/config/index.js';

const plain = { green: (s: string) => s, red: (s: string) => s, yellow: (s: string) => s };

const app = (secret: string, extra: Record<string, unknown> = {}) => ({
  corpId: 'ww0123456789',
  agentId: 1000002,
  secret,
  ...extra,
});
const key = (name: string, sha: string, apps = ['ops']) => ({ name, sha256: sha.repeat(64), apps });

const before = parseConfig({
  apps: { ops: app('ops-secret-OLD'), legacy: app('legacy-secret') },
  apiKeys: [key('ci', 'a'), key('old-bot', 'b')],
});

describe('diffConfigs', () => {
  it('names apps and keys added, removed and changed, with the fields that changed', () => {
    const after = parseConfig({
      apps: { ops: app('ops-secret-NEW', { quota: { perMinute: 5000 } }), alerts: app('alerts-secret') },
      apiKeys: [key('ci', 'c', ['ops', 'alerts']), key('deploy', 'd')],
      retentionDays: 60,
    });

    const diff = diffConfigs(before, after);

    expect(diff).toEqual({
      apps: {
        added: ['alerts'],
        removed: ['legacy'],
        changed: [{ name: 'ops', fields: ['quota.perMinute', 'secret'] }],
      },
      apiKeys: {
        added: ['deploy'],
        removed: ['old-bot'],
        changed: [{ name: 'ci', fields: ['apps', 'sha256'] }],
      },
      hooks: { added: [], removed: [], changed: [] },
      pushKeys: { added: [], removed: [], changed: [] },
      settings: ['retentionDays'],
    });
    expect(describeDiff(diff, plain)).toEqual([
      '+ app alerts',
      '- app legacy',
      '~ app ops: quota.perMinute, secret',
      '+ key deploy',
      '- key old-bot',
      '~ key ci: apps, sha256',
      '~ settings: retentionDays',
    ]);
  });

  it('never carries a value: no secret, key hash or quota number appears in the diff or its description', () => {
    const after = parseConfig({
      apps: {
        ops: app('ops-secret-NEW', { callback: { token: 'cb-token-xyz', encodingAESKey: 'k'.repeat(43) } }),
      },
      apiKeys: [key('ci', 'e')],
    });

    const diff = diffConfigs(before, after);
    const shown = JSON.stringify(diff) + describeDiff(diff, plain).join('\n');

    for (const value of ['ops-secret', 'legacy-secret', 'cb-token-xyz', 'kkkk', 'aaaa', 'eeee']) {
      expect(shown).not.toContain(value);
    }
    expect(diff.apps.changed).toEqual([
      { name: 'ops', fields: ['callback.encodingAESKey', 'callback.token', 'secret'] },
    ]);
  });

  it('sees no change when only defaults were written out or keys reordered', () => {
    const after = parseConfig({
      apps: { legacy: app('legacy-secret'), ops: app('ops-secret-OLD', { quota: { perMinute: 10_000 } }) },
      apiKeys: [key('old-bot', 'b'), key('ci', 'a')],
      retentionDays: 30,
    });

    expect(isEmptyDiff(diffConfigs(before, after))).toBe(true);
  });

  it('keeps keys that share a name apart instead of letting one hide the other', () => {
    const after = parseConfig({
      apps: before.apps,
      apiKeys: [key('ci', 'a'), key('old-bot', 'b'), key('ci', 'f')],
    });

    expect(diffConfigs(before, after).apiKeys.added).toEqual(['ci (2)']);
  });

  it('treats a missing or non-config current value as empty: everything is added', () => {
    const diff = diffConfigs(undefined, before);

    expect(diff.apps.added).toEqual(['ops', 'legacy']);
    expect(diff.apiKeys.added).toEqual(['ci', 'old-bot']);
    expect(diff.apps.removed).toEqual([]);
  });
});

describe('diffConfigs on hooks and push keys', () => {
  it('names hooks and push keys added, removed and changed, never their token hashes', () => {
    const sha = (c: string) => c.repeat(64);
    const hook = (t: string) => ({
      source: 'alertmanager',
      app: 'ops',
      to: { touser: 'a' },
      tokenSha256: sha(t),
    });
    const push = (name: string, t: string) => ({ name, sha256: sha(t), app: 'ops', to: { touser: 'a' } });
    const base = { apps: { ops: app('s') }, apiKeys: [] };
    const before = parseConfig({
      ...base,
      hooks: { am: hook('a'), old: hook('b') },
      pushKeys: [push('cron', 'c')],
    });
    const after = parseConfig({
      ...base,
      hooks: { am: hook('d'), gh: hook('e') },
      pushKeys: [push('cron', 'c'), push('backup', 'f')],
    });

    const diff = diffConfigs(before, after);

    expect(describeDiff(diff, plain)).toEqual([
      '+ hook gh',
      '- hook old',
      '~ hook am: tokenSha256',
      '+ push key backup',
    ]);
    expect(JSON.stringify(diff)).not.toContain(sha('d'));
    expect(isEmptyDiff(diffConfigs(after, after))).toBe(true);
  });
});

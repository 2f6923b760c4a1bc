import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '#lib/config/index.js';
import { closestKey } from '#lib/config/issues.js';

const issuesOf = (doc: unknown) => {
  try {
    parseConfig(doc);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  return [];
};

const app = { corpId: 'ww1', agentId: 1000002, secret: 's' };

describe('config issues in plain words', () => {
  it('names an unknown field with the field meant, at any depth (records, arrays, pipes)', () => {
    expect(
      issuesOf({
        apps: { ops: { ...app, quota: { perMinut: 1 }, webhook: { secretz: [] } } },
        apiKeys: [{ name: 'ci', sha256: 'a'.repeat(64), apps: ['ops'], scope: [] }],
        pushKeys: [{ name: 'p', sha256: 'b'.repeat(64), app: 'ops', to: { tousr: 'a' } }],
        hookz: {},
      }),
    ).toEqual([
      { field: 'apps.ops.quota.perMinut', message: 'unknown field `perMinut` (did you mean perMinute?)' },
      { field: 'apps.ops.webhook.secretz', message: 'unknown field `secretz` (did you mean secrets?)' },
      { field: 'apiKeys.0.scope', message: 'unknown field `scope` (did you mean scopes?)' },
      { field: 'pushKeys.0.to.tousr', message: 'unknown field `tousr` (did you mean touser?)' },
      { field: 'hookz', message: 'unknown field `hookz` (did you mean hooks?)' },
    ]);
  });

  it('says "required" for a missing field and suggests nothing for a word far from every field', () => {
    expect(issuesOf({ apps: { ops: { corpId: 'ww1', secret: 's', colour: 'red' } }, apiKeys: [] })).toEqual([
      { field: 'apps.ops.agentId', message: 'required' },
      { field: 'apps.ops.colour', message: 'unknown field `colour`' },
    ]);
  });

  it('keeps the schema’s own messages for wrong values', () => {
    expect(issuesOf({ apps: { ops: { ...app, agentId: 1.5 } }, apiKeys: [] })).toEqual([
      { field: 'apps.ops.agentId', message: 'agentId must be an integer' },
    ]);
  });

  it('accepts a top-level $comment (string or strings) and nothing else under that name', () => {
    expect(issuesOf({ $comment: ['a', 'b'], apps: {}, apiKeys: [] })).toEqual([]);
    expect(issuesOf({ apps: { ops: { ...app, $comment: 'x' } }, apiKeys: [] })).toEqual([
      { field: 'apps.ops.$comment', message: 'unknown field `$comment`' },
    ]);
  });

  it('matches case slips and small typos only', () => {
    expect(closestKey('PERMINUTE', ['perMinute', 'perHour'])).toBe('perMinute');
    expect(closestKey('xyz', ['perMinute', 'perHour'])).toBeUndefined();
  });
});

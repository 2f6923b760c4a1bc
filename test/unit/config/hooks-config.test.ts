import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '#lib/config/index.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

const TOKEN_SHA = 'b'.repeat(64);

function withHooks(hooks: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { ...minimalConfig(), hooks, ...extra };
}

function blamed(input: unknown): { field: string; message: string }[] {
  try {
    parseConfig(input);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.issues];
    throw err;
  }
  throw new Error('parseConfig accepted the input');
}

const amHook = (over: Record<string, unknown> = {}) => ({
  source: 'alertmanager',
  app: 'ops',
  to: { totag: '1' },
  tokenSha256: TOKEN_SHA,
  ...over,
});

describe('parseConfig: hooks, pushKeys and markdownFallback', () => {
  it('still accepts the minimal config, with no hooks, push keys or fallback', () => {
    const config = parseConfig(minimalConfig());

    expect(config.hooks).toBeUndefined();
    expect(config.pushKeys).toBeUndefined();
    expect(config.apps.ops?.markdownFallback).toBeUndefined();
  });

  it('fills hook defaults: UTC times and a 300 s dedup window', () => {
    const config = parseConfig(withHooks({ prom: amHook() }));

    expect(config.hooks?.prom).toMatchObject({ source: 'alertmanager', timeZone: 'UTC', dedupSeconds: 300 });
  });

  it('accepts every documented field', () => {
    const hook = amHook({
      msgtype: 'textcard',
      template: '{{#alerts}}{{labels.alertname}}{{/alerts}}',
      priority: 'high',
      rules: [
        { match: { 'commonLabels.team': 'db' }, to: { totag: [7] } },
        { match: { 'commonLabels.severity': ['critical', 'page'] }, priority: 'high', stop: true },
        { match: { $event: { regex: 'firing|resolved' } }, ignore: false },
      ],
      timeZone: 'Asia/Shanghai',
      dedupSeconds: 60,
    });
    const input = withHooks(
      {
        prom: hook,
        gh: {
          source: 'github',
          app: 'ops',
          to: { touser: 'alice|bob' },
          secret: 's3',
          tokenSha256: TOKEN_SHA,
        },
      },
      { pushKeys: [{ name: 'cron', sha256: 'c'.repeat(64), app: 'ops', to: { touser: ['alice'] } }] },
    );
    input.apps.ops = { ...input.apps.ops, markdownFallback: 'textcard' } as typeof input.apps.ops;

    const config = parseConfig(input);

    expect(config.pushKeys?.[0]).toMatchObject({ msgtype: 'markdown', priority: 'normal' });
    expect(config.apps.ops?.markdownFallback).toBe('textcard');
  });

  it('names hooks.<name>.app when the app is not configured', () => {
    expect(blamed(withHooks({ prom: amHook({ app: 'billing' }) }))).toEqual([
      { field: 'hooks.prom.app', message: 'app "billing" is not configured under apps' },
    ]);
  });

  it('names pushKeys.<i>.app and a duplicate push key digest', () => {
    const key = { name: 'a', sha256: 'c'.repeat(64), app: 'ops', to: { touser: 'x' } };
    const fields = blamed({
      ...minimalConfig(),
      pushKeys: [key, { ...key, name: 'b' }, { ...key, name: 'c', sha256: 'd'.repeat(64), app: 'nope' }],
    }).map((i) => i.field);

    expect(fields).toEqual(['pushKeys.1.sha256', 'pushKeys.2.app']);
  });

  it('names the field of an unknown source, a bad token digest, and an unknown hook field', () => {
    const fields = blamed(
      withHooks({
        a: amHook({ source: 'pagerduty' }),
        b: amHook({ tokenSha256: 'not-hex' }),
        c: amHook({ secert: 'typo' }),
      }),
    ).map((i) => i.field);

    expect(fields).toEqual(['hooks.a.source', 'hooks.b.tokenSha256', 'hooks.c.secert']);
  });

  it('rejects recipients WeCom would reject, naming the hook', () => {
    const issues = blamed(withHooks({ prom: amHook({ to: { totag: 'db' } }) }));

    expect(issues).toEqual([{ field: 'hooks.prom.to', message: 'totag[0]: must be a numeric tag id' }]);
  });

  it('requires at least one recipient', () => {
    expect(blamed(withHooks({ prom: amHook({ to: {} }) }))[0]?.field).toBe('hooks.prom.to');
  });

  it('rejects a template that does not parse, with the parser message', () => {
    const [issue] = blamed(withHooks({ g: amHook({ source: 'generic', template: '{{#alerts}}unclosed' }) }));

    expect(issue?.field).toBe('hooks.g.template');
    expect(issue?.message).toMatch(/^does not parse: Unclosed section "alerts"/);
  });

  it('rejects a secret for a source that cannot send one, and a template with template_card', () => {
    const fields = blamed(
      withHooks({ a: amHook({ secret: 'x' }), b: amHook({ template: 'hi', msgtype: 'template_card' }) }),
    ).map((i) => i.field);

    expect(fields).toEqual(['hooks.a.secret', 'hooks.b.msgtype']);
  });

  it('rejects an invalid regex, an empty match, an unknown time zone and a bad hook name', () => {
    const fields = blamed(
      withHooks({
        a: amHook({ rules: [{ match: { x: { regex: '(' } } }] }),
        b: amHook({ rules: [{ match: {} }] }),
        c: amHook({ timeZone: 'Mars/Olympus' }),
        'bad name': amHook(),
      }),
    ).map((i) => i.field);

    expect(fields).toEqual([
      'hooks.a.rules.0.match.x.regex',
      'hooks.b.rules.0.match',
      'hooks.c.timeZone',
      'hooks.bad name',
    ]);
  });

  it('rejects an unknown markdownFallback mode', () => {
    const input = minimalConfig();
    (input.apps.ops as Record<string, unknown>).markdownFallback = 'html';

    expect(blamed(input)).toEqual([
      { field: 'apps.ops.markdownFallback', message: 'must be text or textcard' },
    ]);
  });
});

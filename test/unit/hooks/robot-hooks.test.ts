import { describe, expect, it } from 'vitest';
import { ConfigError, type GatewayConfig, parseConfig } from '#lib/config/index.js';
import { handleHook, pushToMessage } from '#lib/hooks/index.js';
import { validateMessageRequest } from '#lib/messages/index.js';
import { fixture, hookInput } from '#test/helpers/hook-fixtures.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

const KEY = '693a91f6-7b2c-4bc4-97a0-0ec2f1fa5aaa';

function configWith(extra: Record<string, unknown>): GatewayConfig {
  return parseConfig({ ...minimalConfig(), robots: { oncall: { key: KEY } }, ...extra });
}

const robotHook = (over: Record<string, unknown> = {}) => {
  const hook = configWith({
    hooks: { h: { source: 'alertmanager', robot: 'oncall', tokenSha256: 'b'.repeat(64), ...over } },
  }).hooks?.h;
  if (!hook) throw new Error('no hook');
  return hook;
};

function issuesOf(extra: Record<string, unknown>): string[] {
  try {
    configWith(extra);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => `${i.field}: ${i.message}`);
    throw err;
  }
  return [];
}

/** The one message of a hook outcome, checked against what POST /v1/messages accepts. */
function bodyOf(outcome: ReturnType<typeof handleHook>): Record<string, unknown> {
  if (outcome.kind !== 'messages') throw new Error(`ignored: ${outcome.reason}`);
  const body = outcome.messages[0]?.body ?? {};
  const result = validateMessageRequest(body);
  expect(result.ok ? [] : result.issues).toEqual([]);
  return body;
}

describe('a hook to a group robot', () => {
  it('renders an Alertmanager group as markdown_v2 with the alerts in a table, to the robot and nobody else', () => {
    const body = bodyOf(handleHook('prom', robotHook(), hookInput(fixture('alertmanager', 'firing'))));

    expect(body).toMatchObject({ robot: 'oncall', msgtype: 'markdown_v2', priority: 'high' });
    expect(body.app).toBeUndefined();
    expect(body.touser).toBeUndefined();
    const content = (body.markdown_v2 as { content: string }).content;
    expect(content).toMatch(/^## \[FIRING:2\] /);
    expect(content).toContain('| alerts | |\n| :-- | :-- |\n| [firing]');
    expect(content).not.toContain('<font');
  });

  it('falls back to markdown (with colour) when the robot mentions people by default, which markdown_v2 cannot', () => {
    const body = bodyOf(
      handleHook('prom', robotHook(), hookInput(fixture('alertmanager', 'firing')), { mentions: true }),
    );

    expect(body.msgtype).toBe('markdown');
    expect((body.markdown as { content: string }).content).toContain('<font color="warning">');
  });

  it('keeps the message type the hook asks for', () => {
    const body = bodyOf(
      handleHook('prom', robotHook({ msgtype: 'text' }), hookInput(fixture('alertmanager', 'firing'))),
    );

    expect(body.msgtype).toBe('text');
  });

  it('refuses recipients, an app next to the robot, a textcard and rules that route to people', () => {
    const hook = { source: 'alertmanager', robot: 'oncall', tokenSha256: 'b'.repeat(64) };

    expect(issuesOf({ hooks: { h: { ...hook, to: { touser: 'a' } } } })).toEqual([
      'hooks.h.to: a robot posts to its group chat: it takes no recipients',
    ]);
    expect(issuesOf({ hooks: { h: { ...hook, app: 'ops', to: { touser: 'a' } } } })).toEqual([
      'hooks.h.app: give app (with to) or robot, one of them',
    ]);
    expect(issuesOf({ hooks: { h: { ...hook, msgtype: 'textcard' } } })).toEqual([
      'hooks.h.msgtype: textcard is for apps; a robot takes markdown, markdown_v2, text, template_card',
    ]);
    expect(
      issuesOf({ hooks: { h: { ...hook, rules: [{ match: { status: 'firing' }, to: { touser: 'a' } }] } } }),
    ).toEqual([
      'hooks.h.rules.0.to: a robot posts to its group chat: a rule can change its priority, not recipients',
    ]);
    expect(issuesOf({ hooks: { h: { ...hook, robot: 'pager' } } })).toEqual([
      'hooks.h.robot: robot "pager" is not configured under robots',
    ]);
  });
});

describe('a push key to a group robot', () => {
  it('posts title and desp as the robot’s markdown, up to its 4,096 bytes', () => {
    const key = configWith({
      pushKeys: [{ name: 'cron', sha256: 'd'.repeat(64), robot: 'oncall' }],
    }).pushKeys?.[0];
    if (!key) throw new Error('no push key');

    const body = pushToMessage(key, { title: 'Backup done', desp: 'x'.repeat(3000) });

    expect(body).toMatchObject({ robot: 'oncall', msgtype: 'markdown', priority: 'normal' });
    expect(body.touser).toBeUndefined();
    expect((body.markdown as { content: string }).content.length).toBeGreaterThan(2048);
    expect(validateMessageRequest(body).ok).toBe(true);
  });
});

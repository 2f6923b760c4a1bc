import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliContext } from '#cli/command.js';
import { buildMessage } from '#cli/commands/send.js';
import { runCli } from '#cli/main.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

const ctx = (stdin = ''): CliContext => ({
  stdin: Readable.from([stdin]),
  stdout: { write: () => true },
  stderr: { write: () => true },
  env: {},
  cwd: '/nonexistent',
  exitCode: 0,
});

async function run(argv: string[], stdin = '') {
  const out: string[] = [];
  const err: string[] = [];
  const c = {
    ...ctx(stdin),
    stdout: { write: (s: string) => out.push(s) > 0 },
    stderr: { write: (s: string) => err.push(s) > 0 },
  };
  const code = await runCli(argv, c);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

describe('wecom-gateway send --template', () => {
  it('builds a template body from --template and repeated --var name=value (values may hold =)', async () => {
    const body = await buildMessage(ctx(), {
      app: 'ops',
      to: ['zhangsan'],
      template: 'deploy_done',
      var: { service: 'api', query: 'a=b' },
      interval: 1,
      timeout: 1,
    });
    expect(body).toEqual({
      app: 'ops',
      touser: ['zhangsan'],
      template: 'deploy_done',
      variables: { service: 'api', query: 'a=b' },
    });
  });

  it.each([
    [
      ['send', '--app', 'ops', '--to', 'u', '--template', 't', '--text', 'x'],
      'exactly one of --text, --markdown, --markdown-v2, --file or --template',
    ],
    [
      ['send', '--app', 'ops', '--to', 'u', '--text', 'x', '--var', 'a=b'],
      '--var fills the variables of a --template',
    ],
    [
      ['send', '--app', 'ops', '--to', 'u', '--template', 't', '--var', 'novalue'],
      '--var novalue: write it as name=value',
    ],
    [['send', '--app', 'ops', '--to', 'u', '--template', 't', '--var', '=x'], 'write it as name=value'],
  ])('%j is a usage error: %s', async (argv, message) => {
    const { code, stderr } = await run(argv);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });
});

describe('wecom-gateway config check with templates', () => {
  const config = (templates: Record<string, unknown>) => {
    const c = minimalConfig();
    return JSON.stringify({ ...c, apps: { ops: { ...c.apps.ops, templates } } });
  };

  it('lists the templates, and warns of one whose longest variables would exceed a WeCom limit', async () => {
    const { code, stdout } = await run(
      ['config', 'check', '--file', '-', '--json'],
      config({
        short: { msgtype: 'text', text: { content: '{{a}}' }, variables: { a: { maxBytes: 100 } } },
        long: { msgtype: 'text', text: { content: 'log: {{a}}' }, variables: { a: { maxBytes: 2048 } } },
      }),
    );

    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.templates).toEqual(['ops/short', 'ops/long']);
    expect(report.warnings).toEqual([
      'template ops/long may be refused: text.content: 2053 bytes, max 2048; send "split": true to have it delivered in parts (rendered with every variable at its maxBytes)',
    ]);
  });

  it('fails on a template that uses an undeclared variable, naming it', async () => {
    const { code, stdout } = await run(
      ['config', 'check', '--file', '-', '--json'],
      config({ t: { msgtype: 'text', text: { content: '{{who}}' } } }),
    );

    expect(code).toBe(1);
    expect(JSON.parse(stdout).issues).toEqual([
      {
        field: 'apps.ops.templates.t.text.content',
        message: "uses undeclared variable 'who' (declare it under variables)",
      },
    ]);
  });
});

describe('wecom-gateway send --robot', () => {
  it("builds a robot's body: the robot instead of an app, no recipients", async () => {
    const body = await buildMessage(ctx(), {
      robot: 'oncall',
      markdownV2: '| a | b |',
      priority: 'high',
      interval: 1,
      timeout: 1,
    });
    expect(body).toEqual({
      robot: 'oncall',
      msgtype: 'markdown_v2',
      markdown_v2: { content: '| a | b |' },
      priority: 'high',
    });
  });

  it.each([
    [['send', '--robot', 'oncall', '--to', 'u', '--text', 'x'], '--to, --party and --tag are for apps'],
    [
      ['send', '--robot', 'oncall', '--app', 'ops', '--text', 'x'],
      'give --app (a message to members) or --robot',
    ],
  ])('refuses %j: %s', async (argv, message) => {
    const { code, stderr } = await run(argv);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });
});

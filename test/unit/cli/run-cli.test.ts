import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import type { CliContext } from '#cli/command.js';
import { runCli } from '#cli/main.js';
import { buildProgram } from '#cli/program.js';
import { parseConfig } from '#lib/config/index.js';
import { minimalConfig } from '#test/helpers/unit-config.js';

/** The CLI in-process with captured streams: for the wide matrix; test/integration/operator-cli spawns it. */
async function run(argv: string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const ctx: CliContext = {
    stdin: Readable.from([opts.stdin ?? '']),
    stdout: { write: (s: string) => out.push(s) > 0 },
    stderr: { write: (s: string) => err.push(s) > 0 },
    env: opts.env ?? {},
    cwd: '/nonexistent',
    exitCode: 0,
  };
  const code = await runCli(argv, ctx);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

const leaves = (cmd: Command, path: string[] = []): string[][] =>
  cmd.commands.length === 0
    ? [path]
    : cmd.commands.filter((c) => c.name() !== 'help').flatMap((c) => leaves(c, [...path, c.name()]));

describe('runCli', () => {
  const ctx = {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: {},
    cwd: '/',
    exitCode: 0,
  };
  const commands = leaves(buildProgram(ctx));

  it('has the commands of this pass', () => {
    expect(commands.map((c) => c.join(' '))).toEqual([
      'keys create',
      'keys hash',
      'keys webhook-secret',
      'config init',
      'config check',
      'config push',
      'hooks create',
      'push-keys create',
      'doctor',
      'send',
      'status',
      'cancel',
      'messages list',
      'messages webhooks',
      'apps status',
      'dlq list',
      'dlq redrive',
      'sim',
    ]);
  });

  it.each(commands.map((c) => [c.join(' '), c]))(
    '%s --help prints its usage and exits 0',
    async (_, path) => {
      const { code, stdout } = await run([...(path as string[]), '--help']);

      expect(code).toBe(0);
      expect(stdout).toContain(`Usage: wecom-gateway ${(path as string[]).join(' ')}`);
      expect(stdout).toContain('--json');
    },
  );

  it.each([
    [['launch'], "unknown command 'launch'"],
    [['keys', 'create', '--app', 'ops', '--scopes', 'messages:delete'], '--scopes'],
    [['config', 'push', '--file', 'x.json'], "required option '--stage <stage>'"],
    [
      ['send', '--app', 'ops', '--to', 'u', '--text', 'x', '--priority', 'urgent'],
      'Allowed choices are high, normal',
    ],
    [['status', 'not-an-id'], 'is not a message id'],
    [['messages', 'webhooks', 'not-an-id'], 'not a message id'],
    [['keys', 'create', '--app', 'a b'], '--app: app names are 1-64 of [A-Za-z0-9_-]'],
    [['keys', 'create', '--app', 'ops', '--scopes', 'messages:write,nope'], '--scopes'],
    [['keys', 'hash', 'short'], '8-512 visible characters'],
    [['keys', 'hash', 'has space in it'], '8-512 visible characters'],
    [['config', 'push', '--stage', 'Prod', '--file', 'x.json', '--yes'], '--stage must match'],
    [['send', '--app', 'ops', '--to', 'u', '--text', 'a', '--markdown', 'b'], 'exactly one of --text'],
    [['send', '--app', 'ops', '--text', 'a'], 'no recipient'],
    [['send', '--to', 'u', '--text', 'a'], '--app'],
    [['send', '--app', 'ops', '--to', 'u', '--text', 'a', '--url', 'ftp://x'], 'http(s) URL'],
    [['send', '--app', 'ops', '--to', 'u', '--text', 'a', '--url', 'http://10.0.0.1'], 'no API key'],
    [['status', 'msg_01ABCDEFGHJKMNPQRSTVWXYZ01', '--interval', '0'], 'Expected a positive number'],
    [['sim', '--app', 'ww1:notanumber:s'], 'corpId:agentId:secret'],
    [['sim', '--latency', '-1'], 'Expected an integer'],
    [['--json', 'keys', 'create'], "required option '-a, --app <names>'"],
    [['apps', 'status', 'a b'], 'is not an app name'],
    [['apps', 'status', '--stage', 'x_y'], '--stage must match'],
    [['apps'], 'Usage: wecom-gateway apps'],
    [['messages'], 'Usage: wecom-gateway messages'],
    [['messages', 'list', '--limit', '0'], 'Expected an integer from 1 to 100'],
    [['messages', 'list', '--limit', '101'], 'Expected an integer from 1 to 100'],
    [['messages', 'list', '--url', 'http://10.0.0.1'], 'no API key'],
    [['dlq', 'list', '--lane', 'notify'], 'Allowed choices are high, normal'],
    [['dlq', 'list', '--max', '1.5'], 'Expected an integer'],
    [['dlq', 'list'], 'no local stack running in /nonexistent'],
    [['dlq', 'redrive', '--ids', 'msg_A,bad'], '--ids: not message ids (msg_…): bad'],
    [['dlq', 'redrive', '--max', '10001'], 'Expected an integer from 1 to 10000'],
    [['dlq', 'redrive', '--profile', 'ops'], '--region and --profile need --stage'],
  ])('%j is a usage error (exit 2): %s', async (argv, message) => {
    const { code, stdout, stderr } = await run(argv);

    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).toContain('--help');
    expect(stdout).toBe('');
  });

  it('keys hash reads a piped key and drops only its trailing newline', async () => {
    const { code, stdout } = await run(['keys', 'hash', '--json'], { stdin: 'wgw_abcdefgh\n' });

    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ sha256: createHash('sha256').update('wgw_abcdefgh').digest('hex') });
  });

  it('keys webhook-secret prints a fresh whsec_ secret the config accepts', async () => {
    const first = await run(['keys', 'webhook-secret', '--json']);
    const second = await run(['keys', 'webhook-secret', '--json']);

    const { secret } = JSON.parse(first.stdout);
    expect(first.code).toBe(0);
    expect(secret).not.toBe(JSON.parse(second.stdout).secret);
    const config = minimalConfig();
    (config.apps.ops as Record<string, unknown>).webhook = { secrets: [secret] };
    expect(parseConfig(config).apps.ops?.webhook?.secrets).toEqual([secret]);
  });
});

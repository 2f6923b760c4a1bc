import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { QUEUES } from '#lib/resources/index.js';
import { newDevKey } from '#local/dev-config.js';
import { testConfig } from '#local/harness/config.js';
import { startWecomSimulator, type WecomSimulator } from '#local/wecom-sim/index.js';
import { waitFor } from '#test/helpers/gateway.js';

const REPO = join(import.meta.dirname, '..', '..');

/** `npm start` without npm: the same command line as the package.json script. */
function startCli(env: Record<string, string>): {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number>;
} {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--disable-warning=ExperimentalWarning', 'local/main.ts'],
    { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (d) => {
    out += String(d);
  });
  child.stderr?.on('data', (d) => {
    out += String(d);
  });
  const exit = new Promise<number>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : 0))),
  );
  return { child, output: () => out, exit };
}

const field = (output: string, label: string) => new RegExp(`${label}\\s+(\\S+)`).exec(output)?.[1];

describe('npm start (local/main.ts)', () => {
  let sim: WecomSimulator | undefined;
  let running: ChildProcess | undefined;
  afterEach(async () => {
    running?.kill('SIGKILL');
    await sim?.stop();
    sim = undefined;
  });

  it('honours PORT and GATEWAY_CONFIG, delivers through the printed API URL and exits 0 on Ctrl-C', async () => {
    const key = newDevKey();
    const configFile = join(tmpdir(), `cli-config-${process.pid}-${Date.now()}.json`);
    await writeFile(configFile, JSON.stringify(testConfig(key)));
    const cli = startCli({ PORT: '0', GATEWAY_CONFIG: configFile });
    running = cli.child;

    await waitFor(
      () => cli.output().includes('ready in'),
      30_000,
      () => cli.output(),
    );
    const api = field(cli.output(), 'API');
    const simUrl = field(cli.output(), 'WeCom sim');
    expect(cli.output()).toContain(configFile);
    expect(field(cli.output(), 'sim inbox')).toBe(`${simUrl}/__sim/ui`);
    expect(field(cli.output(), 'console')).toBe(`${api}/console`);
    expect((await fetch(`${api}/console`)).headers.get('content-type')).toMatch(/^text\/html/);
    // What the operator CLI finds it by (apps status, dlq): its API and every queue of lib/resources.
    const info = JSON.parse(await readFile(join(REPO, '.local', 'stack.json'), 'utf8'));
    expect(info).toMatchObject({ pid: cli.child.pid, apiUrl: api, aws: { tableName: expect.any(String) } });
    expect(Object.keys(info.aws.queueUrls).sort()).toEqual(Object.keys(QUEUES).sort());
    const res = await fetch(`${api}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        app: 'ops',
        touser: 'cli-user',
        msgtype: 'text',
        text: { content: 'via the CLI' },
      }),
    });
    expect(res.status).toBe(202);
    await waitFor(
      async () => ((await (await fetch(`${simUrl}/__sim/inbox/cli-user`)).json()) as unknown[]).length === 1,
    );

    cli.child.kill('SIGINT');

    expect(await cli.exit).toBe(0);
    expect(cli.output()).toContain('stopped');
  });

  it('sends to the WeCom named by WECOM_API_BASE instead of starting its own simulator', async () => {
    const key = newDevKey();
    const config = testConfig(key);
    const app = config.apps.ops;
    if (!app) throw new Error('no app');
    sim = await startWecomSimulator({
      apps: [{ corpId: app.corpId, secret: app.secret, agentId: app.agentId }],
    });
    const configFile = join(tmpdir(), `cli-config-${process.pid}-${Date.now()}-b.json`);
    await writeFile(configFile, JSON.stringify(config));
    const cli = startCli({ PORT: '0', GATEWAY_CONFIG: configFile, WECOM_API_BASE: sim.url });
    running = cli.child;

    await waitFor(
      () => cli.output().includes('ready in'),
      30_000,
      () => cli.output(),
    );
    expect(cli.output()).toContain(`WeCom          ${sim.url}`);
    expect(cli.output()).not.toContain('WeCom sim');
    await fetch(`${field(cli.output(), 'API')}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        app: 'ops',
        touser: 'ext-user',
        msgtype: 'text',
        text: { content: 'to that WeCom' },
      }),
    });
    await waitFor(() => sim?.inbox('ext-user').length === 1);

    cli.child.kill('SIGINT');
    expect(await cli.exit).toBe(0);
  });

  it('refuses to start with an invalid config and names the bad field', async () => {
    const configFile = join(tmpdir(), `cli-config-${process.pid}-${Date.now()}-bad.json`);
    await writeFile(
      configFile,
      JSON.stringify({ apps: { ops: { corpId: 'ww1', agentId: 'x', secret: 's' } }, apiKeys: [] }),
    );
    const cli = startCli({ PORT: '0', GATEWAY_CONFIG: configFile });
    running = cli.child;

    expect(await cli.exit).toBe(1);
    expect(cli.output()).toMatch(/apps\.ops\.agentId/);
  });

  it('names a port that is taken and how to start anyway, instead of a stack trace', async () => {
    // The simulator (PORT + 1) listens first: holding its port fails the start there, whatever else PORT meets.
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as AddressInfo;
    try {
      const cli = startCli({ PORT: String(port - 1) });
      running = cli.child;

      expect(await cli.exit).toBe(1);
      expect(cli.output()).toContain(
        `port ${port} for the WeCom simulator (PORT + 1) is in use (127.0.0.1:${port})`,
      );
      expect(cli.output()).toContain(`PORT=${port + 1} npm start`);
      expect(cli.output()).not.toContain('setupListenHandle');
    } finally {
      taken.close();
    }
  });
});

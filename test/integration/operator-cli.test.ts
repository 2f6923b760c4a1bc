import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '#lib/config/index.js';
import { newDevKey } from '#local/dev-config.js';
import { testConfig } from '#local/harness/config.js';
import { cli, start } from '#test/helpers/cli.js';
import { startTestGateway, type TestGateway, text, waitFor } from '#test/helpers/gateway.js';

/** The operator CLI as a process (test/helpers/cli.ts), against a local stack started here. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for ANSI escape sequences is the point
const ANSI = /\x1b\[/;

/** A loopback URL nobody listens on: a port the OS just handed out, closed again. */
async function closedPortUrl(): Promise<string> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return `http://127.0.0.1:${port}`;
}

describe('wecom-gateway CLI (as a process, against the local stack)', () => {
  let gw: TestGateway;
  let dir: string;
  let created: { key: string; entry: { name: string; sha256: string; apps: string[] } };
  let goodFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'operator-cli-'));
    const made = await cli(['keys', 'create', '--app', 'ops', '--name', 'ci', '--json']);
    expect(made.code, made.stderr).toBe(0);
    created = JSON.parse(made.stdout);
    // The config an operator would now write: the gateway's apps plus the printed entry.
    const doc = testConfig(newDevKey());
    doc.apiKeys.push(created.entry as (typeof doc.apiKeys)[number]);
    goodFile = join(dir, 'good.json');
    await writeFile(goodFile, JSON.stringify(doc));
    const ci = parseConfig(doc).apiKeys.filter((k) => k.name === 'ci');
    gw = await startTestGateway({ extraApiKeys: ci });
  });

  afterAll(async () => {
    await gw?.stack.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keys create → config check (good and bad) → send with the new key → status --watch reaches sent', async () => {
    expect(created.key).toMatch(/^wgw_[A-Za-z0-9_-]{43}$/);
    expect(created.entry).toEqual({
      name: 'ci',
      sha256: createHash('sha256').update(created.key).digest('hex'),
      apps: ['ops'],
    });
    const badFile = join(dir, 'bad.json');
    await writeFile(
      badFile,
      JSON.stringify({
        apps: { ops: { corpId: 'ww1', agentId: 1.5, secret: 's' } },
        apiKeys: [{ name: 'ci', sha256: created.entry.sha256, apps: ['ops', 'ghost'] }],
      }),
    );

    const [hashed, good, bad] = await Promise.all([
      cli(['keys', 'hash'], { input: `${created.key}\n` }),
      cli(['config', 'check', '--file', goodFile]),
      cli(['config', 'check', '--file', badFile, '--json']),
    ]);

    expect(hashed).toMatchObject({ code: 0, stdout: `${created.entry.sha256}\n` });
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toContain('is a valid gateway config');
    expect(good.stdout).toMatch(/API keys\n(?: {4}.*\n)* {4}ci {2}for ops/);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ valid: false });
    expect(JSON.parse(bad.stdout).issues.map((i: { field: string }) => i.field)).toEqual([
      'apps.ops.agentId',
      'apiKeys',
    ]);

    const sent = await cli([
      'send',
      ...['--url', gw.stack.apiUrl, '--key', created.key],
      ...['--app', 'ops', '--to', 'cli-user', '--text', 'hello from the CLI'],
    ]);
    expect(sent.code, sent.stderr).toBe(0);
    const id = sent.stdout.trim();
    expect(id).toMatch(/^msg_[0-9A-Z]{26}$/);

    const watched = await cli(
      ['status', id, '--watch', '--interval', '0.2', '--json', '--url', gw.stack.apiUrl],
      {
        env: { WECOM_GATEWAY_KEY: created.key },
      },
    );
    expect(watched.code, watched.stderr).toBe(0);
    const status = JSON.parse(watched.stdout);
    expect(status).toMatchObject({ id, app: 'ops', status: 'sent' });
    expect(status.events.map((e: { type: string }) => e.type)).toEqual(['queued', 'sent']);
    const inbox = gw.stack.simulator?.inbox('cli-user') ?? [];
    expect(inbox.map((m) => m.payload)).toEqual([{ content: 'hello from the CLI' }]);

    // A message that ended undelivered: `status` without --watch exits 1 too, as the docs say.
    gw.stack.simulator?.faults.script([{ errcode: 40003 }]);
    const refused = await cli([
      'send',
      ...['--url', gw.stack.apiUrl, '--key', created.key, '--wait', '--interval', '0.2', '--json'],
      ...['--app', 'ops', '--to', 'cli-user', '--text', 'refused by WeCom'],
    ]);
    expect(refused.code).toBe(1);
    const refusedId = JSON.parse(refused.stdout).id as string;
    const looked = await cli(['status', refusedId, '--url', gw.stack.apiUrl, '--key', created.key, '--json']);
    expect(JSON.parse(looked.stdout)).toMatchObject({ status: 'failed' });
    expect(looked.code).toBe(1);
    const sentLook = await cli(['status', id, '--url', gw.stack.apiUrl, '--key', created.key]);
    expect(sentLook.code).toBe(0);
  });

  it("finds a running `npm start` through .local/ and shows the gateway's errors with code and details", async () => {
    const project = join(dir, 'project');
    await mkdir(join(project, '.local'), { recursive: true });
    await writeFile(
      join(project, '.local', 'stack.json'),
      JSON.stringify({ apiUrl: gw.stack.apiUrl, pid: process.pid }),
    );
    await writeFile(join(project, '.local', 'dev-api-key'), `${gw.key}\n`);

    const closed = await closedPortUrl();
    const [ok, invalid, forbidden, missing, unreachable] = await Promise.all([
      cli(['send', '--app', 'ops', '--to', 'dev-user', '--markdown', '**ok**', '--json'], { cwd: project }),
      cli(['send', '--app', 'ops', '--to', 'dev-user', '--text', ''], { cwd: project }),
      cli(['send', '--app', 'elsewhere', '--to', 'dev-user', '--text', 'x', '--json'], { cwd: project }),
      cli(['status', 'msg_01ABCDEFGHJKMNPQRSTVWXYZ01'], { cwd: project }),
      cli(['status', 'msg_01ABCDEFGHJKMNPQRSTVWXYZ01', '--url', closed, '--json'], { cwd: project }),
    ]);

    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ id: expect.stringMatching(/^msg_/), status: 'queued' });
    await gw.waitForStatus(JSON.parse(ok.stdout).id, ['sent']);
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toBe('');
    expect(invalid.stderr).toContain('400 invalid_message');
    expect(invalid.stderr).toContain('text.content');
    expect(forbidden.code).toBe(1);
    expect(JSON.parse(forbidden.stdout)).toMatchObject({ error: { code: 'forbidden' } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('404 not_found');
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(`cannot reach ${closed}: connection refused`);
    expect(JSON.parse(unreachable.stdout)).toMatchObject({ error: { code: 'unreachable' } });
    for (const run of [invalid, forbidden, missing, unreachable]) expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('messages list finds messages by recipient, newest first, a page at a time or --all', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await gw.post('/v1/messages', text(`list ${i}`, 'CLI-Lister'))).body.id);
    const target = ['--url', gw.stack.apiUrl, '--key', gw.key];

    const [page, all, bad] = await Promise.all([
      cli(['messages', 'list', '--to', 'cli-lister', '--limit', '2', ...target]),
      cli([
        'messages',
        'list',
        '--to',
        'CLI-LISTER',
        '--since',
        '1h',
        '--limit',
        '2',
        '--all',
        '--json',
        ...target,
      ]),
      cli(['messages', 'list', '--status', 'delivered', ...target]),
    ]);

    expect(page.code, page.stderr).toBe(0);
    expect(
      page.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[0]),
    ).toEqual([ids[2], ids[1]]);
    expect(page.stdout).toMatch(
      / {2}(queued|deferred|sent) {2}app ops · text · to CLI-Lister · \d+ attempts? · accepted 20/,
    );
    expect(page.stderr).toMatch(/more: add --cursor \S+ \(or --all\)/);
    expect(all.code, all.stderr).toBe(0);
    const listed = JSON.parse(all.stdout);
    expect(listed.messages.map((m: { id: string }) => m.id)).toEqual([...ids].reverse());
    expect(listed.next_cursor).toBeNull();
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('400 invalid_request');
    expect(bad.stderr).toContain('status');
  });

  it('answers bad arguments to every command with a usage message on stderr and exit code 2', async () => {
    // One mistake per command (the in-process unit test covers many more); each spawn costs about 0.5 s.
    const cases: string[][] = [
      [],
      ['keys'],
      ['keys', 'create'],
      ['keys', 'hash', 'one', 'two'],
      ['config', 'check', '--strict'],
      ['config', 'push', '--stage', 'prod', '--file', goodFile],
      ['send', '--app', 'ops', '--to', 'u1'],
      ['status'],
      ['sim', '--port', '70000'],
    ];
    const runs = await Promise.all(cases.map((args) => cli(args)));

    runs.forEach((run, i) => {
      const label = `wecom-gateway ${cases[i]?.join(' ')}`;
      expect(run.code, `${label}\n${run.stderr}`).toBe(2);
      expect(run.stdout, label).toBe('');
      expect(run.stderr, label).toMatch(/error: |Usage: wecom-gateway/);
      expect(run.stderr, label).not.toMatch(/\n\s+at /);
    });
    // Things only this CLI can know: `config push` refuses to guess a confirmation on a pipe.
    expect(runs[5]?.stderr).toContain('pass --yes');
  });

  it('colours only a terminal that wants them: piped, NO_COLOR and --no-color output has no ANSI codes', async () => {
    const args = ['keys', 'create', '--app', 'ops'];
    const [piped, forced, noColor, flag] = await Promise.all([
      cli(args),
      cli(args, { env: { FORCE_COLOR: '1' } }),
      cli(args, { env: { FORCE_COLOR: '1', NO_COLOR: '1' } }),
      cli([...args, '--no-color'], { env: { FORCE_COLOR: '1' } }),
    ]);

    expect(forced.stdout).toMatch(ANSI);
    for (const run of [piped, noColor, flag]) {
      expect(run.code).toBe(0);
      expect(run.stdout + run.stderr).not.toMatch(ANSI);
      expect(run.stdout).toMatch(/wgw_[A-Za-z0-9_-]{43}/);
    }
  });

  it('sim serves the WeCom API for any integration and stops on Ctrl-C', async () => {
    const sim = start([
      'sim',
      '--port',
      '0',
      '--latency',
      '0',
      '--app',
      'wwsimtest:1000009:s3cr:et',
      '--json',
    ]);
    let info: { url: string; apps: { corpid: string; agentid: number; corpsecret: string }[] } | undefined;
    await waitFor(
      () => {
        try {
          info = JSON.parse(sim.stdout());
          return true;
        } catch {
          return false;
        }
      },
      20_000,
      () => `sim printed: ${sim.stdout()}`,
    );
    const url = info?.url as string;
    expect(info?.apps).toEqual([{ corpid: 'wwsimtest', agentid: 1000009, corpsecret: 's3cr:et' }]);

    const token = (await (
      await fetch(`${url}/cgi-bin/gettoken?corpid=wwsimtest&corpsecret=s3cr:et`)
    ).json()) as {
      access_token: string;
    };
    expect(token).toMatchObject({ errcode: 0, access_token: expect.any(String) });
    const send = await fetch(`${url}/cgi-bin/message/send?access_token=${token.access_token}`, {
      method: 'POST',
      body: JSON.stringify({
        touser: 'sim-user',
        msgtype: 'text',
        agentid: 1000009,
        text: { content: 'hi' },
      }),
    });
    expect(await send.json()).toMatchObject({ errcode: 0 });
    expect(await (await fetch(`${url}/__sim/inbox/sim-user`)).json()).toHaveLength(1);

    sim.child.kill('SIGINT');
    expect((await sim.done).code).toBe(0);
  });

  it('is the package bin: `npm exec wecom-gateway` runs it (offline, from the project)', async () => {
    const run = await cli(['exec', '--offline', '--', 'wecom-gateway', 'keys', 'hash', '--json'], {
      command: ['npm'],
      input: 'abcdefgh',
    });

    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ sha256: createHash('sha256').update('abcdefgh').digest('hex') });
  });
});

import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigJson } from '#lib/config/index.js';
import { writeStackInfo } from '#local/local-dir.js';
import { cli } from '#test/helpers/cli.js';
import { type JsonBody, startTestGateway, type TestGateway, text, waitFor } from '#test/helpers/gateway.js';
import { fixture } from '#test/helpers/hook-fixtures.js';

/**
 * The commands that replace hand-editing (`hooks create`, `push-keys create`, `config check`, `doctor`), run as
 * processes against local stacks: what they print must work on the gateway that reads the file they wrote.
 */

/** Short, so that a running gateway reads the edited config file within a test (production: 60 s). */
const CONFIG_MAX_AGE_MS = 200;

/** POSTs until the gateway has re-read its config (a 401 until then), then returns the answer. */
async function postWhenKnown(url: string, body: string, headers: Record<string, string> = {}) {
  let res: Response | undefined;
  await waitFor(async () => {
    res = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...headers },
    });
    return res.status !== 401;
  }, 10_000);
  return { status: (res as Response).status, body: (await (res as Response).json()) as JsonBody };
}

describe('hooks create and push-keys create on a running local stack', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({ runtime: { configMaxAgeMs: CONFIG_MAX_AGE_MS } });
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  it('an Alertmanager payload POSTed to the printed URL reaches the members in the simulator', async () => {
    const file = gw.stack.env.configFile as string;
    const created = await cli([
      'hooks',
      'create',
      '--source',
      'alertmanager',
      '--app',
      'ops',
      '--to',
      'oncall1,oncall2',
      '--file',
      file,
      '--url',
      gw.stack.apiUrl,
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const { url } = JSON.parse(created.stdout);
    expect(url.startsWith(`${gw.stack.apiUrl}/v1/hooks/alertmanager/`)).toBe(true);
    expect(await readFile(file, 'utf8')).not.toContain(url.split('/').pop());

    const answer = await postWhenKnown(url, fixture('alertmanager', 'firing'));

    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    const id = answer.body.messages[0].id as string;
    expect((await gw.waitForStatus(id, ['sent', 'failed'])).status).toBe('sent');
    for (const member of ['oncall1', 'oncall2']) {
      expect(gw.stack.simulator?.inbox(member)).toHaveLength(1);
    }
    const wrong = await fetch(url.replace(/[^/]+$/, 'not-the-token-0123456789'), {
      method: 'POST',
      body: '{}',
    });
    expect(wrong.status).toBe(401);
  });

  it('a push to the printed push URL reaches the member; config check then lists both in plain words', async () => {
    const file = gw.stack.env.configFile as string;
    const created = await cli([
      'push-keys',
      'create',
      '--app',
      'ops',
      '--to',
      'backup-admin',
      '--name',
      'backup',
      '--file',
      file,
      '--url',
      gw.stack.apiUrl,
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const { url } = JSON.parse(created.stdout);

    const answer = await postWhenKnown(url, JSON.stringify({ title: 'Backup done', desp: '**3** files' }));

    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.code).toBe(0);
    await gw.waitForStatus(answer.body.id, ['sent']);
    expect(gw.stack.simulator?.inbox('backup-admin')).toHaveLength(1);
    const check = await cli(['config', 'check', '--file', file]);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toMatch(/alertmanager {2}alertmanager → app ops, to users oncall1, oncall2/);
    expect(check.stdout).toMatch(/backup {2}→ app ops, to users backup-admin/);
    expect(parseConfigJson(await readFile(file, 'utf8')).apiKeys.length).toBeGreaterThan(0);
  });
});

/** A directory where `npm start` would be running: `.local/stack.json` names the stack, as doctor expects. */
async function stackDir(gw: TestGateway): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cli-doctor-'));
  await mkdir(join(dir, '.local'));
  await writeStackInfo(join(dir, '.local'), {
    apiUrl: gw.stack.apiUrl,
    ...(gw.stack.simulator ? { simulatorUrl: gw.stack.simulator.url } : {}),
    pid: process.pid,
  });
  // The config as the operator's file: the stack's own, with a hook whose recipient doctor checks.
  const config = JSON.parse(await readFile(gw.stack.env.configFile as string, 'utf8'));
  config.hooks = {
    am: { source: 'alertmanager', app: 'ops', to: { touser: 'zhangsan' }, tokenSha256: 'a'.repeat(64) },
  };
  await writeFile(join(dir, '.local', 'gateway.json'), JSON.stringify(config));
  return dir;
}

describe('doctor against the local stack', () => {
  // One stack at a time: a stack points the SDK at its emulators through process-wide AWS_ENDPOINT_URL_* variables.
  let gw: TestGateway | undefined;
  const dirs: string[] = [];

  afterEach(async () => {
    await gw?.stack.stop();
    gw = undefined;
  });
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('reports every check ok or a warning on a healthy stack once a message went out, and exits 0', async () => {
    const healthy = await startTestGateway();
    gw = healthy;
    const sent = await healthy.post('/v1/messages', text('doctor warm-up'));
    await healthy.waitForStatus(sent.body.id, ['sent']);
    const dir = await stackDir(healthy);
    dirs.push(dir);

    const run = await cli(['doctor', '--json'], { cwd: dir, env: { WECOM_GATEWAY_KEY: healthy.key } });

    expect(run.code, run.stdout + run.stderr).toBe(0);
    const { checks } = JSON.parse(run.stdout);
    const status = Object.fromEntries(
      checks.map((c: { name: string; status: string }) => [c.name, c.status]),
    );
    expect(status).toEqual({
      config: 'ok',
      gateway: 'ok',
      'ops: state': 'ok',
      'ops: gettoken': 'ok',
      'ops: trusted IP': 'ok',
      'ops: callback': 'ok',
      'ops: visible range': 'ok',
      // The hook sends markdown and the app has no markdownFallback.
      'ops: WeChat plugin': 'warn',
    });
  });

  it('fails the app whose secret WeCom does not know, with the fix, and exits 1', async () => {
    const broken = await startTestGateway({
      // WeCom knows the app by another secret than the gateway's config: gettoken answers 40001.
      simulator: {
        apps: [{ corpId: 'wwtest00000000001', agentId: 1000002, secret: 'the-secret-in-the-console' }],
      },
    });
    gw = broken;
    const sent = await broken.post('/v1/messages', text('never delivered'));
    expect(sent.status).toBe(202);
    await waitFor(async () => (await broken.get('/v1/apps/ops')).body.state === 'circuit_open', 20_000);
    const dir = await stackDir(broken);
    dirs.push(dir);

    const run = await cli(['doctor'], { cwd: dir, env: { WECOM_GATEWAY_KEY: broken.key } });

    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toMatch(/^fail {2}ops: state .*errcode 40001/m);
    expect(run.stdout).toMatch(/^fail {2}ops: gettoken .*errcode 40001/m);
    expect(run.stdout).toContain('fix: the app secret is wrong: copy it again from the WeCom admin console');
    expect(run.stdout).toMatch(
      /^warn {2}ops: visible range {2}could not read it \(WeCom refused gettoken: errcode 40001: the app secret is wrong/m,
    );
    expect(run.stdout).toMatch(/\d+ ok, \d+ warnings?, 2 failed/);
    expect(run.stdout).not.toContain('secret-ops');
  });
});

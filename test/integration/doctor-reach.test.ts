import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newDevKey } from '#local/dev-config.js';
import { writeStackInfo } from '#local/local-dir.js';
import { cli } from '#test/helpers/cli.js';
import { startTestGateway, type TestGateway } from '#test/helpers/gateway.js';

/**
 * GET /v1/apps/{app}/reach and the doctor line built on it, on the local stack: the simulator plays WeCom's agent/get
 * with a visible range of users only (ops, agentid 1000002: zhangsan), so a recipient outside it is known to be.
 */
describe('the visible range through GET /v1/apps/{app}/reach', () => {
  let gw: TestGateway;
  const billingKey = newDevKey();
  const noReadKey = newDevKey();
  const dirs: string[] = [];

  beforeAll(async () => {
    gw = await startTestGateway({
      apps: ['ops', 'billing'],
      extraApiKeys: [
        { name: 'billing-only', sha256: billingKey.sha256, apps: ['billing'], scopes: ['messages:read'] },
        { name: 'write-only', sha256: noReadKey.sha256, apps: ['ops'], scopes: ['messages:write'] },
      ],
      simulator: {
        directory: {
          users: ['zhangsan', 'lisi', 'hidden-member'],
          apps: { '1000002': { users: ['zhangsan', 'hidden-member'] } },
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.stack.stop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  const agentGets = () =>
    (gw.stack.simulator?.requests() ?? []).filter((r) => r.path === '/cgi-bin/agent/get');

  /** A directory where `npm start` would run, whose config has a hook of ops sending to `touser`. */
  async function stackDir(touser: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'doctor-reach-'));
    dirs.push(dir);
    await mkdir(join(dir, '.local'));
    await writeStackInfo(join(dir, '.local'), { apiUrl: gw.stack.apiUrl, pid: process.pid });
    const config = JSON.parse(await readFile(gw.stack.env.configFile as string, 'utf8'));
    config.hooks = {
      am: { source: 'alertmanager', app: 'ops', to: { touser }, tokenSha256: 'a'.repeat(64) },
    };
    await writeFile(join(dir, '.local', 'gateway.json'), JSON.stringify(config));
    return dir;
  }

  it('names only the asked ids outside the range, never the range itself', async () => {
    const answer = await gw.get('/v1/apps/ops/reach?touser=ZhangSan|lisi&totag=4');

    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toEqual({
      app: 'ops',
      outside: { touser: ['lisi'], toparty: [], totag: ['4'] },
      unknown: { touser: [], toparty: [], totag: [] },
      checked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(JSON.stringify(answer.body)).not.toContain('hidden-member');
  });

  it('doctor fails the visible range naming the recipient outside it, with the fix, and exits 1', async () => {
    const dir = await stackDir('lisi');

    const run = await cli(['doctor'], { cwd: dir, env: { WECOM_GATEWAY_KEY: gw.key } });

    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toMatch(/^fail {2}ops: visible range +user lisi outside the range$/m);
    expect(run.stdout).toContain(
      'fix: add them to 可见范围 in the WeCom admin console (应用管理 > the app > 可见范围)',
    );
  });

  it('doctor says ok when every recipient is inside, and exits 0', async () => {
    const dir = await stackDir('zhangsan');

    const run = await cli(['doctor', '--json'], { cwd: dir, env: { WECOM_GATEWAY_KEY: gw.key } });

    expect(run.code, run.stdout + run.stderr).toBe(0);
    const { checks } = JSON.parse(run.stdout);
    expect(checks.find((c: { name: string }) => c.name === 'ops: visible range')).toMatchObject({
      status: 'ok',
      detail: 'covers user zhangsan',
    });
  });

  it('answers 404 to a key for another app and 403 to one without messages:read, and asks WeCom for neither', async () => {
    const before = agentGets().length;
    const ask = (key: string) =>
      gw.get('/v1/apps/ops/reach?touser=zhangsan', { authorization: `Bearer ${key}` });

    const other = await ask(billingKey.key);
    const writeOnly = await ask(noReadKey.key);

    expect([other.status, other.body.error.code]).toEqual([404, 'not_found']);
    expect([writeOnly.status, writeOnly.body.error.code]).toEqual([403, 'forbidden']);
    expect(agentGets().length).toBe(before);
  });

  it('answers 400 naming the field to a bad query, and asks WeCom nothing', async () => {
    const before = agentGets().length;

    const none = await gw.get('/v1/apps/ops/reach');
    const party = await gw.get('/v1/apps/ops/reach?toparty=2|two');
    const typo = await gw.get('/v1/apps/ops/reach?tousers=zhangsan');

    expect([none.status, none.body.error.details]).toEqual([
      400,
      [expect.objectContaining({ field: 'touser' })],
    ]);
    expect([party.status, party.body.error.details]).toEqual([
      400,
      [expect.objectContaining({ field: 'toparty[1]' })],
    ]);
    expect([typo.status, typo.body.error.details[0].field]).toEqual([400, 'tousers']);
    expect(agentGets().length).toBe(before);
  });

  it('asks agent/get once for a minute of doctor runs', () => {
    // The answer and both doctor runs above: one container, one read.
    expect(agentGets()).toHaveLength(1);
  });
});

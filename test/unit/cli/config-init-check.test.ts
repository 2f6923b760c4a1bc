import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfigJson } from '#lib/config/index.js';
import { runInProcess as run } from '#test/helpers/cli-inprocess.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-init-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('config init', () => {
  it.each(['local', 'dev', 'prod'])(
    'writes a %s config the gateway loads, with its guidance in $comment',
    async (stage) => {
      const { code, stdout } = await run(['config', 'init', '--stage', stage], { cwd: dir });

      expect(code).toBe(0);
      const text = await readFile(join(dir, `config.${stage}.json`), 'utf8');
      const config = parseConfigJson(text);
      expect(config.$comment?.length).toBeGreaterThan(3);
      expect(config.allowLoopbackWebhooks).toBe(stage === 'local');
      expect(stdout).toContain('Next:');
      expect(stdout).toContain(`config check --file config.${stage}.json`);
      expect((await stat(join(dir, `config.${stage}.json`))).mode & 0o777).toBe(0o600);
    },
  );

  it('names what is left to fill in for a deployed stage, and config check warns about it', async () => {
    const init = await run(['config', 'init', '--json'], { cwd: dir });
    const check = await run(['config', 'check', '--file', 'config.prod.json'], { cwd: dir });

    expect(JSON.parse(init.stdout)).toMatchObject({
      file: 'config.prod.json',
      stage: 'prod',
      fillIn: ['apps.ops.corpId', 'apps.ops.secret'],
    });
    expect(check.code).toBe(0);
    expect(check.stderr).toContain(
      'still to fill in (placeholders from config init): apps.ops.corpId, apps.ops.secret',
    );
  });

  it('refuses to overwrite an existing file without --force, and replaces it with --force', async () => {
    const file = join(dir, 'mine.json');
    await writeFile(file, '{"keep":"me"}');

    const refused = await run(['config', 'init', '--file', 'mine.json'], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('mine.json already exists: pass --force');
    expect(await readFile(file, 'utf8')).toBe('{"keep":"me"}');

    const forced = await run(['config', 'init', '--file', 'mine.json', '--force'], { cwd: dir });
    expect(forced.code).toBe(0);
    expect(() => parseConfigJson(readFileSync(file, 'utf8'))).not.toThrow();
  });

  it('is a usage error (exit 2) for an unknown stage', async () => {
    const { code, stderr } = await run(['config', 'init', '--stage', 'staging'], { cwd: dir });

    expect(code).toBe(2);
    expect(stderr).toContain('Allowed choices are local, dev, prod');
    expect(stderr).toContain('--help');
  });
});

describe('config check', () => {
  it('lists apps, API keys, hooks and push keys in plain words', async () => {
    const file = join(dir, 'c.json');
    await writeFile(
      file,
      JSON.stringify({
        apps: { ops: { corpId: 'ww1', agentId: 1000002, secret: 's', markdownFallback: 'text' } },
        apiKeys: [{ name: 'ci', sha256: 'a'.repeat(64), apps: ['ops'], scopes: ['messages:write'] }],
        hooks: {
          am: {
            source: 'alertmanager',
            app: 'ops',
            to: { touser: 'zhangsan|lisi' },
            tokenSha256: 'b'.repeat(64),
          },
          gh: {
            source: 'github',
            app: 'ops',
            to: { toparty: '5' },
            tokenSha256: 'c'.repeat(64),
            secret: 'x',
          },
        },
        pushKeys: [{ name: 'cron', sha256: 'd'.repeat(64), app: 'ops', to: { touser: 'admin' } }],
      }),
    );

    const { code, stdout } = await run(['config', 'check', '--file', file]);

    expect(code).toBe(0);
    expect(stdout).toMatch(/^✓ .*c\.json is a valid gateway config\n {2}apps\n {4}ops {2}corp ww1/);
    expect(stdout).toContain('ops  corp ww1, agent 1000002 (no callback, markdown sent as text)');
    expect(stdout).toContain('ci  for ops (messages:write)');
    expect(stdout).toContain(
      'am  alertmanager → app ops, to users zhangsan, lisi (POST /v1/hooks/am/<token>)',
    );
    expect(stdout).toContain(
      'gh  github → app ops, to parties 5 (POST /v1/hooks/gh/<token>, signature checked)',
    );
    expect(stdout).toContain('cron  → app ops, to users admin (/v1/push/<sendkey>, markdown)');
    expect(stdout).not.toContain('a'.repeat(64));
  });

  it('says "unknown field … (did you mean …?)" and "required" instead of the validator wording', async () => {
    const file = join(dir, 'bad.json');
    await writeFile(
      file,
      JSON.stringify({
        apps: { ops: { corpId: 'ww1', agentId: 1000002, secret: 's', quota: { perMinut: 10 } } },
        // `apps` may be left out now (a key for robots only), so the missing field is the key's hash.
        apiKeys: [{ name: 'ci', apps: ['ops'] }],
        hooks: {
          am: {
            source: 'alertmanager',
            app: 'ops',
            to: { touser: 'a' },
            tokenSha256: 'b'.repeat(64),
            rulez: [],
          },
        },
      }),
    );

    const { code, stdout } = await run(['config', 'check', '--file', file, '--json']);

    expect(code).toBe(1);
    expect(JSON.parse(stdout).issues).toEqual([
      { field: 'apps.ops.quota.perMinut', message: 'unknown field `perMinut` (did you mean perMinute?)' },
      { field: 'apiKeys.0.sha256', message: 'required' },
      { field: 'hooks.am.rulez', message: 'unknown field `rulez` (did you mean rules?)' },
    ]);
    expect(stdout).not.toMatch(/Expected never|Invalid key/);
  });
});

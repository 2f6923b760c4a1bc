/**
 * `npm run pack:cli`, then the tarball run with `npx --offline` from a folder outside the checkout, as a user
 * without the repository runs it: a clean HOME and npm cache, no node_modules on PATH (so the shell's Node, not
 * the project's), and a registry address where nothing listens, so a fetch would fail the test instead of
 * reaching the network.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedEndpoint } from '#test/helpers/closed-port.js';
import { waitFor } from '#test/helpers/gateway.js';
import { type IngestGateway, startIngestGateway } from '#test/helpers/ingest-gateway.js';
import pkg from '../../package.json' with { type: 'json' };

const REPO = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const TARBALL = `wecom-gateway-${pkg.version}.tgz`;

let dir: string;
let work: string;
let env: NodeJS.ProcessEnv;
let gw: IngestGateway;

/** `npx --offline <args>` in the work folder: exit code, stdout, stderr. */
async function npx(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('npx', ['--offline', '--yes', ...args], {
      cwd: work,
      env,
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wgw-cli-pack-'));
  work = join(dir, 'work');
  await mkdir(join(dir, 'home'), { recursive: true });
  await mkdir(work);
  await run(
    process.execPath,
    [
      '--import',
      'tsx',
      join(REPO, 'scripts', 'pack-cli.ts'),
      '--out',
      join(dir, 'build'),
      '--pack-destination',
      work,
    ],
    { cwd: REPO, timeout: 60_000 },
  );
  env = {
    PATH: (process.env.PATH ?? '')
      .split(delimiter)
      .filter((p) => !p.includes('node_modules'))
      .join(delimiter),
    HOME: join(dir, 'home'),
    npm_config_cache: join(dir, 'npm-cache'),
    npm_config_registry: await closedEndpoint(),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    NO_COLOR: '1',
  };
  gw = await startIngestGateway();
}, 90_000);

afterAll(async () => {
  await gw?.stack.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the packed CLI, run with npx outside the checkout', () => {
  it('is one bundled file with nothing to install', async () => {
    const manifest = JSON.parse(await readFile(join(dir, 'build', 'package.json'), 'utf8'));

    expect(manifest).toMatchObject({ name: 'wecom-gateway', version: pkg.version, dependencies: {} });
    expect(manifest.bin).toEqual({ 'wecom-gateway': 'wecom-gateway.mjs' });
  });

  it('prints its version and help', async () => {
    const version = await npx([`./${TARBALL}`, '--version']);
    const help = await npx([`./${TARBALL}`, '--help']);

    expect(version).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage: wecom-gateway [options] [command]');
    expect(help.stdout).toContain('hooks');
  });

  it('reads a message status from a gateway', async () => {
    const sent = await gw.post('/v1/messages', {
      app: 'ops',
      touser: 'zhangsan',
      msgtype: 'text',
      text: { content: 'from the packed CLI test' },
    });
    const id = sent.body.id as string;
    await waitFor(async () => (await gw.get(`/v1/messages/${id}`)).body?.status === 'sent', 20_000);

    const res = await npx([
      '-p',
      `./${TARBALL}`,
      'wecom-gateway',
      'status',
      id,
      '--url',
      gw.stack.apiUrl,
      '--key',
      gw.keys.ops,
      '--json',
    ]);

    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ id, app: 'ops', status: 'sent' });
  });

  it('says where a local stack runs when asked for one outside a checkout', async () => {
    const res = await npx([`./${TARBALL}`, 'dlq', 'list']);

    expect(res.code).toBe(2);
    expect(res.stderr).toContain('run this in a wecom-gateway checkout where `npm start` runs');
  });
});

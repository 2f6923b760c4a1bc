/**
 * A real Alertmanager (Debian's prometheus-alertmanager) configured with the webhook snippet of docs/integrations/alertmanager.md fires an
 * alert and then its resolution at the local stack; both must reach the WeCom simulator as readable messages.
 * Skipped with a notice when the binary is not installed (`.ci/run` installs it).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '#test/helpers/gateway.js';
import { hookToken, inboxOf, shown, startHookGateway } from '#test/helpers/hook-gateway.js';
import type { IngestGateway } from '#test/helpers/ingest-gateway.js';

/** Debian names the binary prometheus-alertmanager; upstream release tarballs name it alertmanager. */
const BINARY = ['prometheus-alertmanager', 'alertmanager'].find(
  (bin) => spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0,
);
if (!BINARY) {
  process.stderr.write(
    'Alertmanager test: prometheus-alertmanager is not installed, skipped ' +
      '(apt-get install prometheus-alertmanager to run it)\n',
  );
}

const GUIDE = join(import.meta.dirname, '..', '..', '..', 'docs', 'integrations', 'alertmanager.md');
const HOOK = 'alertmanager';

/**
 * The snippet of docs/integrations/alertmanager.md (the yaml block with `webhook_configs`), pointed at the local stack, with the
 * group timings shortened so the test takes seconds: what a user pastes is what runs here.
 */
async function readmeConfig(apiUrl: string): Promise<string> {
  const readme = await readFile(GUIDE, 'utf8');
  const block = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? '')
    .find((b) => b.includes('webhook_configs'));
  if (!block) throw new Error('docs/integrations/alertmanager.md has no yaml block with webhook_configs');
  if (!block.includes('https://GATEWAY/v1/hooks/alertmanager/HOOK_TOKEN')) {
    throw new Error(
      'the page’s snippet no longer uses the URL https://GATEWAY/v1/hooks/alertmanager/HOOK_TOKEN',
    );
  }
  return block
    .replace('https://GATEWAY', apiUrl)
    .replace('HOOK_TOKEN', hookToken(HOOK))
    .replace(/^route:\n/m, 'route:\n  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n');
}

/** A loopback port that was free a moment ago (Alertmanager cannot report a port 0 it bound). */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let gw: IngestGateway;
let am: ChildProcess | undefined;
let amUrl: string;
let dir: string;
let amLog = '';

beforeAll(async () => {
  if (!BINARY) return;
  gw = await startHookGateway({
    hooks: { [HOOK]: { source: 'alertmanager', app: 'ops', to: { touser: 'am-oncall' } } },
  });
  dir = await mkdtemp(join(tmpdir(), 'wgw-alertmanager-'));
  const configFile = join(dir, 'alertmanager.yml');
  await writeFile(configFile, await readmeConfig(gw.stack.apiUrl));
  const port = await freePort();
  amUrl = `http://127.0.0.1:${port}`;
  am = spawn(
    BINARY,
    [
      `--config.file=${configFile}`,
      `--storage.path=${dir}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // No HA cluster: it would listen on 0.0.0.0:9094 and gossip.
      '--cluster.listen-address=',
      '--log.level=debug',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  am.stdout?.on('data', (c: Buffer) => {
    amLog += c.toString('utf8');
  });
  am.stderr?.on('data', (c: Buffer) => {
    amLog += c.toString('utf8');
  });
  await waitFor(
    async () => (await fetch(`${amUrl}/-/ready`).catch(() => undefined))?.ok === true,
    10_000,
    () => `Alertmanager did not become ready:\n${amLog.slice(-2000)}`,
  );
}, 60_000);

afterAll(async () => {
  if (am && am.exitCode === null) {
    am.kill('SIGTERM');
    await once(am, 'exit');
  }
  await gw?.stack.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** POST /api/v2/alerts, as Prometheus does: the alert is firing until `endsAt` has passed. */
async function postAlert(endsAt?: Date): Promise<void> {
  const alert = {
    labels: { alertname: 'DiskAlmostFull', severity: 'critical', instance: 'db-1:9100', team: 'db' },
    annotations: {
      summary: 'Disk /var on db-1 is 93% full',
      runbook_url: 'https://runbooks.example.com/disk',
    },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
    ...(endsAt ? { endsAt: endsAt.toISOString() } : {}),
    generatorURL: 'http://prometheus.example.com/graph?g0.expr=disk_used_ratio',
  };
  const res = await fetch(`${amUrl}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([alert]),
  });
  expect(res.status, await res.text()).toBe(200);
}

describe.runIf(BINARY)('a real Alertmanager with the page’s snippet', () => {
  it('delivers an alert and its resolution to the simulator as readable messages', async () => {
    await postAlert();
    const [firing] = await inboxOf(gw, 'am-oncall', 1);

    await postAlert(new Date());
    const inbox = await inboxOf(gw, 'am-oncall', 2);

    const text = inbox.map(shown);
    expect(firing?.msgtype).toBe('markdown');
    expect(text[0]).toMatch(/\[FIRING:1\].*DiskAlmostFull/);
    expect(text[0]).toContain('Disk /var on db-1 is 93% full');
    expect(text[1]).toMatch(/\[RESOLVED\].*DiskAlmostFull/);
    expect(inbox).toHaveLength(2);
  }, 30_000);
});

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FunctionProcess,
  startIngestProcess,
  startSenderProcess,
} from '../../../bench/lib/functions.js';
import { type IsolatedStack, startIsolatedStack } from '../../../bench/lib/isolated.js';

/**
 * The functions as Lambda runs them: each bundled exactly as `cdk synth` bundles it (an entry module and chunks), in a
 * process of its own on bare Node, against the emulators and the simulator in theirs. The rest of the suite runs the
 * source; this catches what only bundling can break — a chunk that does not resolve, a port built on first use whose
 * code did not make it into the artifact.
 */
describe('the bundled ingest and sender functions', () => {
  let iso: IsolatedStack;
  let dir: string;
  let ingest: FunctionProcess & { origin: string };
  let sender: Awaited<ReturnType<typeof startSenderProcess>>;

  beforeAll(async () => {
    iso = await startIsolatedStack({ simLatencyMs: 0 });
    dir = await mkdtemp(join(tmpdir(), 'wgw-bundled-'));
    [ingest, sender] = await Promise.all([startIngestProcess(iso, dir), startSenderProcess(iso, dir)]);
    sender.startPolling();
  }, 120_000);

  afterAll(async () => {
    await Promise.all([ingest?.stop(), sender?.stop()]);
    await iso?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${ingest.origin}${path}`, {
      method,
      headers: { authorization: `Bearer ${iso.key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('accepts a message, delivers it, and serves the routes whose code loads on first use', async () => {
    const accepted = await call('POST', '/v1/messages', {
      app: 'ops',
      touser: ['zhangsan'],
      msgtype: 'text',
      text: { content: 'from the bundles' },
    });
    expect(accepted.status).toBe(202);
    const id = accepted.body.id as string;

    // A message's status: its route, the event and webhook reads, built on the first request.
    let status: string | undefined;
    for (let i = 0; i < 100 && status !== 'sent'; i++) {
      const read = await call('GET', `/v1/messages/${id}`);
      expect(read.status).toBe(200);
      status = read.body.status as string;
      if (status !== 'sent') await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe('sent');

    const list = await call('GET', '/v1/messages?app=ops&limit=5');
    expect(list.status).toBe(200);
    expect((list.body.messages as { id: string }[]).map((m) => m.id)).toContain(id);

    // The app's state: the quota reader, the pause store and the token cache (its WeCom client) of the lazy ports.
    const app = await call('GET', '/v1/apps/ops');
    expect(app.status).toBe(200);
    expect(app.body).toMatchObject({
      app: 'ops',
      state: 'active',
      token: { age_seconds: expect.any(Number) },
    });
    expect((app.body.quota as { used: number }[]).some((w) => w.used > 0)).toBe(true);
    // An admin key's list of apps adds the lanes' depths (SQS, through the lazy ports).
    const apps = await call('GET', '/v1/apps');
    expect(apps.status).toBe(200);
    expect(JSON.stringify(apps.body)).toContain('"lane"');
    // These processes get no DLQ URLs (DLQ_URL_HIGH/_NORMAL): the DLQ routes answer 503 saying so, not a 5xx crash.
    const dlq = await call('GET', '/v1/dlq');
    expect(dlq.status).toBe(503);
    expect(JSON.stringify(dlq.body)).toContain('DLQ_URL_HIGH');

    // The SSRF guard, loaded by the first message with a callback_url: a private address is a 400, not a 5xx.
    const guarded = await call('POST', '/v1/messages', {
      app: 'ops',
      touser: ['zhangsan'],
      msgtype: 'text',
      text: { content: 'x' },
      callback_url: 'https://10.0.0.1/hook',
    });
    expect(guarded.status).toBe(400);
    expect(JSON.stringify(guarded.body)).toContain('callback_url');
  }, 60_000);
});

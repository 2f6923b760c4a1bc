/**
 * One-URL push (ServerChan style) from the real curl binary, as a cron job or shell script would send it, through
 * the local HTTP API to the WeCom simulator; and the per-app Markdown fallback on the API's own routes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxOf, settledState, shown, startHookGateway } from '#test/helpers/hook-gateway.js';
import { type IngestGateway, storedState } from '#test/helpers/ingest-gateway.js';
import { openApiValidators, schemaErrors } from '#test/helpers/openapi.js';

const CRON_KEY = 'SCT-cron-0123456789abcdef';
const WECHAT_KEY = 'SCT-wechat-0123456789abcdef';

const CURL = spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0;
if (!CURL) {
  process.stderr.write(
    'push tests with curl: no curl binary on this machine, skipped (install curl to run them)\n',
  );
}

/** Runs curl with `args` (`-sS`, 10 s bound); its stdout parsed as JSON, and the HTTP status it reports. */
function curl(args: string[]): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-sS', '--max-time', '10', '-w', '\n%{http_code}', ...args]);
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`curl exited ${code}: ${err}`));
      const cut = out.lastIndexOf('\n');
      resolve({ status: Number(out.slice(cut + 1)), body: JSON.parse(out.slice(0, cut)) });
    });
  });
}

let gw: IngestGateway;
let base: string;

beforeAll(async () => {
  gw = await startHookGateway({
    apps: { billing: { markdownFallback: 'textcard' } },
    hooks: {},
    pushKeys: {
      [CRON_KEY]: { name: 'cron', app: 'ops', to: { touser: 'cron-admin' } },
      [WECHAT_KEY]: { name: 'wechat', app: 'billing', to: { touser: 'wechat-admin' } },
    },
  });
  base = `${gw.stack.apiUrl}/v1/push`;
}, 60_000);

afterAll(() => gw?.stack.stop());

describe.runIf(CURL)('one-URL push from curl', () => {
  it('sends title and desp from the query string, answering in our shape and ServerChan’s', async () => {
    const res = await curl([
      '-G',
      `${base}/${CRON_KEY}`,
      '--data-urlencode',
      'title=Backup done',
      '--data-urlencode',
      'desp=**3** files, 1.2 GB',
    ]);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^msg_/),
      status: 'queued',
      code: 0,
      message: '',
      data: { pushid: res.body.id, errno: 0, error: 'SUCCESS' },
    });
    // As docs/openapi.json describes it, for clients generated from the document.
    expect(schemaErrors(openApiValidators()('PushReceipt'), res.body)).toEqual([]);
    const [received] = await inboxOf(gw, 'cron-admin');
    expect(shown(received)).toBe('markdown\n---\n## Backup done\n**3** files, 1.2 GB');
  });

  it('sends a form body (curl -d), at the ServerChan-style URL ending in .send', async () => {
    const res = await curl([
      `${base}/${CRON_KEY}.send`,
      '--data-urlencode',
      'title=磁盘告警 disk 91%',
      '--data-urlencode',
      'desp=/var on db-1\n[Dashboard](https://grafana.example.com/d/disk)',
    ]);

    expect(res.status).toBe(200);
    const inbox = await inboxOf(gw, 'cron-admin', 2);
    expect(shown(inbox[1])).toBe(
      'markdown\n---\n## 磁盘告警 disk 91%\n/var on db-1\n[Dashboard](https://grafana.example.com/d/disk)',
    );
  });

  it('sends a JSON body', async () => {
    const res = await curl([
      `${base}/${CRON_KEY}`,
      '-H',
      'content-type: application/json',
      '-d',
      JSON.stringify({ title: 'Deploy finished', desp: 'api v1.4.0 is live' }),
    ]);

    expect(res.status).toBe(200);
    const inbox = await inboxOf(gw, 'cron-admin', 3);
    expect(shown(inbox[2])).toBe('markdown\n---\n## Deploy finished\napi v1.4.0 is live');
  });

  it('answers an unknown sendkey 401 and a push without a title 400, storing and queueing nothing', async () => {
    const before = await settledState(gw);

    const unknown = await curl(['-G', `${base}/SCT-not-a-key-000000`, '--data-urlencode', 'title=x']);
    const untitled = await curl(['-G', `${base}/${CRON_KEY}`, '--data-urlencode', 'desp=no title']);

    expect([unknown.status, (unknown.body.error as { code: string }).code]).toEqual([401, 'unauthorized']);
    expect(untitled.status).toBe(400);
    expect(untitled.body.error).toMatchObject({
      code: 'hook_payload_invalid',
      details: [{ field: 'title', message: 'required (query, form or JSON)' }],
    });
    expect(await storedState(gw.stack)).toEqual(before);
  });

  it("converts a push for an app with markdownFallback 'textcard' into a card whose link opens the desp's link", async () => {
    const res = await curl([
      `${base}/${WECHAT_KEY}`,
      '--data-urlencode',
      'title=Nightly report',
      '--data-urlencode',
      'desp=**12** orders failed\n[Open the report](https://reports.example.com/nightly)',
    ]);

    expect(res.status).toBe(200);
    const [received] = await inboxOf(gw, 'wechat-admin');
    expect(received?.msgtype).toBe('textcard');
    expect(received?.payload).toMatchObject({
      title: 'Nightly report',
      url: 'https://reports.example.com/nightly',
    });
    expect(JSON.stringify(received?.payload)).not.toMatch(/\*\*|##/);
  });
});

describe('markdown fallback on POST /v1/messages', () => {
  const markdown = (touser: string, extra: Record<string, unknown> = {}) => ({
    app: 'billing',
    touser,
    msgtype: 'markdown',
    markdown: {
      content: '## Invoice run\n**42** invoices sent · [details](https://billing.example.com/runs/7)',
    },
    ...extra,
  });

  it("sends an app's markdown as its fallback, and as markdown when the message says markdown_fallback none", async () => {
    const converted = await gw.post('/v1/messages', markdown('fallback-reader'), { key: gw.keys.billing });
    const kept = await gw.post('/v1/messages', markdown('markdown-reader', { markdown_fallback: 'none' }), {
      key: gw.keys.billing,
    });
    const asText = await gw.post(
      '/v1/messages/batch',
      { messages: [markdown('text-reader', { markdown_fallback: 'text' })] },
      {
        key: gw.keys.billing,
      },
    );

    expect([converted.status, kept.status, asText.status]).toEqual([202, 202, 207]);
    const [card] = await inboxOf(gw, 'fallback-reader');
    const [md] = await inboxOf(gw, 'markdown-reader');
    const [text] = await inboxOf(gw, 'text-reader');
    expect(card?.msgtype).toBe('textcard');
    expect(card?.payload).toMatchObject({ title: 'Invoice run', url: 'https://billing.example.com/runs/7' });
    expect(md?.msgtype).toBe('markdown');
    expect(shown(text)).toBe(
      'text\n---\nInvoice run\n42 invoices sent · <a href="https://billing.example.com/runs/7">details</a>',
    );
  });
});

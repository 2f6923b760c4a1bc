/**
 * Each vendor's documented payload (test/fixtures/hooks) POSTed to its hook URL on the local HTTP API, through the
 * queue and the sender, to the WeCom simulator: what members receive, signatures, retries, foreign payloads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '#test/helpers/gateway.js';
import { fixture, hmacHex } from '#test/helpers/hook-fixtures.js';
import {
  hookToken,
  inboxOf,
  postHook,
  settledState,
  shown,
  startHookGateway,
} from '#test/helpers/hook-gateway.js';
import { type IngestGateway, storedState, tableItemCount } from '#test/helpers/ingest-gateway.js';
import { openApiValidators, schemaErrors } from '#test/helpers/openapi.js';

const GITHUB_SECRET = 'gh-webhook-secret';
const GITLAB_SECRET = 'gl-secret-token';
const SENTRY_SECRET = 'sentry-client-secret';

const githubHeaders = (event: string, delivery: string, body: string, secret = GITHUB_SECRET) => ({
  'x-github-event': event,
  'x-github-delivery': delivery,
  'x-hub-signature-256': `sha256=${hmacHex(secret, body)}`,
  'user-agent': 'GitHub-Hookshot/044aadd',
});

let gw: IngestGateway;
/** The answer as docs/openapi.json describes it, for clients generated from the document. */
const schema = openApiValidators();
const documented = (name: string, body: unknown) => expect(schemaErrors(schema(name), body)).toEqual([]);

beforeAll(async () => {
  gw = await startHookGateway({
    apps: { billing: { markdownFallback: 'text' } },
    hooks: {
      prom: {
        source: 'alertmanager',
        app: 'ops',
        to: { touser: 'am-oncall' },
        rules: [{ match: { 'commonLabels.team': 'db' }, to: { touser: 'dba' } }],
      },
      graf: { source: 'grafana', app: 'ops', to: { touser: 'grafana-oncall' } },
      gh: { source: 'github', app: 'ops', to: { touser: 'gh-dev' }, secret: GITHUB_SECRET },
      gl: { source: 'gitlab', app: 'ops', to: { touser: 'gl-dev' }, secret: GITLAB_SECRET },
      sentry: { source: 'sentry', app: 'ops', to: { touser: 'sentry-dev' }, secret: SENTRY_SECRET },
      uptime: { source: 'generic', app: 'ops', to: { touser: 'uptime-oncall' } },
      // The same Alertmanager payload for members who read in WeChat: app billing converts markdown to text.
      wechat: { source: 'alertmanager', app: 'billing', to: { touser: 'wechat-reader' } },
    },
  });
}, 60_000);

afterAll(() => gw?.stack.stop());

/** Polls the message's status with the ops key until the sender has delivered it. */
async function waitForSent(id: string): Promise<void> {
  await waitFor(
    async () => (await gw.get(`/v1/messages/${id}`)).body?.status === 'sent',
    20_000,
    () => `message ${id} was not sent`,
  );
}

describe('each source, from its documented payload to the simulator inbox', () => {
  const sources = [
    { hook: 'prom', user: 'dba', body: () => fixture('alertmanager', 'firing'), headers: () => ({}) },
    { hook: 'graf', user: 'grafana-oncall', body: () => fixture('grafana', 'firing'), headers: () => ({}) },
    {
      hook: 'gh',
      user: 'gh-dev',
      body: () => fixture('github', 'pull_request.closed'),
      headers: (body: string) => githubHeaders('pull_request', 'a0c4b8e2-1d4f-11ef-9b6b-0f3c2a1d5e01', body),
    },
    {
      hook: 'gl',
      user: 'gl-dev',
      body: () => fixture('gitlab', 'pipeline.failed'),
      headers: () => ({
        'x-gitlab-event': 'Pipeline Hook',
        'x-gitlab-token': GITLAB_SECRET,
        'x-gitlab-event-uuid': '7a1e1f3a-55d2-4c8e-9d1c-3b1f0b9a2c10',
      }),
    },
    {
      hook: 'sentry',
      user: 'sentry-dev',
      body: () => fixture('sentry', 'event_alert'),
      headers: (body: string) => ({
        'sentry-hook-resource': 'event_alert',
        'sentry-hook-timestamp': '1796025977',
        'sentry-hook-signature': hmacHex(SENTRY_SECRET, body),
        'request-id': '1b0e5f3a-6c53-4ac8-b5b2-4c1d6d0e3a11',
      }),
    },
    { hook: 'uptime', user: 'uptime-oncall', body: () => fixture('generic', 'uptime'), headers: () => ({}) },
  ];

  it.each(sources)('$hook: 202 with the message id, and $user receives the rendered message', async (s) => {
    const body = s.body();

    const res = await postHook(gw, s.hook, body, s.headers(body));

    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'queued', messages: [{ status: 'queued' }] });
    documented('HookQueued', res.body);
    const [id] = res.body.messages.map((m: { id: string }) => m.id);
    const status = await gw.get(`/v1/messages/${id}`);
    expect(status.body.metadata).toMatchObject({ hook: s.hook });
    const [received] = await inboxOf(gw, s.user);
    expect(`priority ${status.body.priority}, ${shown(received)}`).toMatchSnapshot();
  });

  it('sends the markdown of an app with markdownFallback "text" as text: the WeChat reader sees no markup', async () => {
    const res = await postHook(gw, 'wechat', fixture('alertmanager', 'firing'));

    expect(res.status).toBe(202);
    const [received] = await inboxOf(gw, 'wechat-reader');
    expect(received?.msgtype).toBe('text');
    const content = (received?.payload as { content?: string } | undefined)?.content;
    expect(content).not.toMatch(/\*\*|^#+ |<font/m);
    expect(shown(received)).toMatchSnapshot();
  });
});

describe('authentication', () => {
  it('answers a wrong token and an unknown hook with the same 401, and queues nothing', async () => {
    const before = await settledState(gw);
    const body = fixture('alertmanager', 'firing');

    const wrongToken = await postHook(gw, 'prom', body, {}, hookToken('graf'));
    const unknownHook = await postHook(gw, 'nope', body, {}, hookToken('prom'));

    expect(wrongToken.status).toBe(401);
    expect(wrongToken.body).toEqual(unknownHook.body);
    expect(wrongToken.body.error).toMatchObject({ code: 'unauthorized' });
    documented('Error', wrongToken.body);
    expect(await storedState(gw.stack)).toEqual(before);
  });

  it('answers another method on a hook URL with the catch-all 404, without a key, and queues nothing', async () => {
    const before = await settledState(gw);

    const res = await gw.get(`/v1/hooks/prom/${hookToken('prom')}`, { key: null });

    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'not_found' });
    expect(await storedState(gw.stack)).toEqual(before);
  });

  it('takes no API key instead of the token', async () => {
    const res = await postHook(
      gw,
      'prom',
      fixture('alertmanager', 'firing'),
      {
        authorization: `Bearer ${gw.keys.ops}`,
      },
      'not-the-token',
    );
    expect(res.status).toBe(401);
  });

  const GITHUB_PUSH = 'b1d5c9f3-1d4f-11ef-9b6b-0f3c2a1d5e02';
  const sentryHeaders = (b: string, secret = SENTRY_SECRET) => ({
    'sentry-hook-resource': 'issue',
    'sentry-hook-signature': hmacHex(secret, b),
    'request-id': '9f0c8e1a-2b3c-4d5e-8f90-a1b2c3d4e5f6',
  });
  const gitlabHeaders = (token: string) => ({ 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': token });

  describe.each([
    {
      hook: 'gh',
      header: 'x-hub-signature-256',
      body: fixture('github', 'push'),
      good: (b: string) => githubHeaders('push', GITHUB_PUSH, b),
      bad: (b: string) => githubHeaders('push', GITHUB_PUSH, b, 'another-secret'),
      signsBody: true,
    },
    {
      hook: 'gl',
      header: 'x-gitlab-token',
      body: fixture('gitlab', 'push'),
      good: () => gitlabHeaders(GITLAB_SECRET),
      bad: () => gitlabHeaders(`${GITLAB_SECRET}x`),
      // GitLab sends the shared token itself, not a signature over the body.
      signsBody: false,
    },
    {
      hook: 'sentry',
      header: 'sentry-hook-signature',
      body: fixture('sentry', 'issue.created'),
      good: (b: string) => sentryHeaders(b),
      bad: (b: string) => sentryHeaders(b, 'another-secret'),
      signsBody: true,
    },
  ])('$hook ($header)', ({ hook, header, body, good, bad, signsBody }) => {
    it('answers 401 for a wrong or missing signature with nothing queued, and 202 for the right one', async () => {
      const { [header]: _dropped, ...missing } = good(body) as Record<string, string>;
      const before = await settledState(gw);

      const wrong = await postHook(gw, hook, body, bad(body));
      const absent = await postHook(gw, hook, body, missing);
      const afterRejected = await storedState(gw.stack);
      const accepted = await postHook(gw, hook, body, good(body));

      expect([wrong.status, wrong.body.error.code]).toEqual([401, 'hook_signature_invalid']);
      expect([absent.status, absent.body.error.code]).toEqual([401, 'hook_signature_missing']);
      expect(afterRejected).toEqual(before);
      expect(accepted.status).toBe(202);
    });

    it.runIf(signsBody)(
      'rejects a body changed after signing: the signature covers the exact bytes',
      async () => {
        const res = await postHook(gw, hook, `${body}\n`, good(body));
        expect([res.status, res.body.error.code]).toEqual([401, 'hook_signature_invalid']);
      },
    );
  });
});

describe('vendor retries', () => {
  /** Message records in the table (not their first-delivery items): what "stored once" counts. */
  const records = () => tableItemCount(gw.stack, 'MSG#', 'MSG');

  it('stores a GitHub redelivery (same X-GitHub-Delivery) once, answers it with the first id and sends it once', async () => {
    const body = fixture('github', 'release.published');
    const headers = githubHeaders('release', 'c2e6d0a4-1d4f-11ef-9b6b-0f3c2a1d5e03', body);
    const before = await records();

    const first = await postHook(gw, 'gh', body, headers);
    const retries = await Promise.all([postHook(gw, 'gh', body, headers), postHook(gw, 'gh', body, headers)]);

    expect(first.status).toBe(202);
    for (const r of retries) expect([r.status, r.body.messages]).toEqual([202, first.body.messages]);
    expect((await records()) - before).toBe(1);
    const id = first.body.messages[0].id as string;
    await waitForSent(id);
    const release = (gw.stack.simulator?.inbox('gh-dev') ?? []).filter((m) => shown(m).includes('v1.4.0'));
    expect(release).toHaveLength(1);
  });

  it('takes another X-GitHub-Delivery of the same body as a new message', async () => {
    const body = fixture('github', 'workflow_run.completed');
    const a = await postHook(
      gw,
      'gh',
      body,
      githubHeaders('workflow_run', 'e4a8f2c6-1d4f-11ef-9b6b-0f3c2a1d5e06', body),
    );
    const b = await postHook(
      gw,
      'gh',
      body,
      githubHeaders('workflow_run', 'f5b9a3d7-1d4f-11ef-9b6b-0f3c2a1d5e07', body),
    );
    expect(a.body.messages[0].id).not.toBe(b.body.messages[0].id);
  });

  it('stores an Alertmanager retry (same group key, status and alerts within the dedup window) once', async () => {
    const body = fixture('alertmanager', 'resolved');
    // The window is the receipt time in steps of dedupSeconds (300 s for this hook): posts that straddle a step are
    // two deliveries by design, so start well inside one.
    const intoWindow = Date.now() % 300_000;
    if (intoWindow > 290_000) await new Promise((r) => setTimeout(r, 300_000 - intoWindow + 100));
    const before = await records();

    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await postHook(gw, 'prom', body));

    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    expect(answers[1]?.body.messages).toEqual(answers[0]?.body.messages);
    expect(answers[2]?.body.messages).toEqual(answers[0]?.body.messages);
    expect((await records()) - before).toBe(1);
  });
});

describe('payloads that are not the vendor’s', () => {
  it.each<{ hook: string; body: () => string; headers: Record<string, string> }>([
    { hook: 'prom', body: () => fixture('github', 'push'), headers: {} },
    { hook: 'graf', body: () => fixture('alertmanager', 'firing'), headers: {} },
    {
      hook: 'gl',
      body: () => fixture('sentry', 'event_alert'),
      headers: { 'x-gitlab-token': GITLAB_SECRET },
    },
    { hook: 'uptime', body: () => 'not json at all', headers: {} },
  ])(
    '$hook answers 400 naming the fields, and queues and stores nothing',
    async ({ hook, body, headers }) => {
      const before = await settledState(gw);

      const res = await postHook(gw, hook, body(), headers);

      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('hook_payload_invalid');
      expect(res.body.error.details.length).toBeGreaterThan(0);
      expect(await storedState(gw.stack)).toEqual(before);
    },
  );

  it('answers GitHub’s ping 200 ignored, with nothing queued', async () => {
    const before = await settledState(gw);
    const body = fixture('github', 'ping');

    const res = await postHook(
      gw,
      'gh',
      body,
      githubHeaders('ping', 'd3f7e1b5-1d4f-11ef-9b6b-0f3c2a1d5e05', body),
    );

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ignored', event: 'ping', messages: [] });
    documented('HookIgnored', res.body);
    expect(await storedState(gw.stack)).toEqual(before);
  });
});

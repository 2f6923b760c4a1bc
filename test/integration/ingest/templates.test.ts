import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '#lib/config/index.js';
import { cli } from '#test/helpers/cli.js';
import { waitFor } from '#test/helpers/gateway.js';
import { type IngestGateway, startIngestGateway, storedState } from '#test/helpers/ingest-gateway.js';

type Templates = NonNullable<GatewayConfig['apps'][string]['templates']>;

const OPS_TEMPLATES: Templates = {
  deploy_done: {
    msgtype: 'template_card',
    description: 'A deploy finished',
    template_card: {
      card_type: 'text_notice',
      main_title: { title: 'Deploy of {{service}} finished', desc: 'on {{env}}' },
      horizontal_content_list: [
        { keyname: 'service', value: '{{service}}' },
        { keyname: 'version', value: '{{version}}' },
      ],
      card_action: { type: 1, url: 'https://ci.example.com/{{service}}' },
    },
    variables: {
      service: { required: true, maxBytes: 64, pattern: '[a-z][a-z0-9-]*', example: 'api' },
      env: { required: true, enum: ['prod', 'staging'] },
      version: { example: '4711', description: 'build number' },
    },
  },
  log_excerpt: { msgtype: 'text', text: { content: '{{log}}' }, variables: { log: { required: true } } },
};
const BILLING_TEMPLATES: Templates = {
  invoice: {
    msgtype: 'markdown',
    markdown: { content: '## Invoice {{number}}\n**{{amount}}** due' },
    variables: { number: { required: true }, amount: { required: true } },
  },
};

const card = (vars: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  app: 'ops',
  touser: 'zhangsan',
  template: 'deploy_done',
  variables: vars,
  ...extra,
});
const HOOK_TOKEN = 'hook-token-for-templates-0123456789';
const SENDKEY = 'sendkey-for-templates-0123456789';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const PUSHED: Templates[string] = {
  msgtype: 'text',
  text: { content: '[{{title}}] {{desp}}' },
  variables: { title: { required: true, maxBytes: 64 }, desp: {} },
};

const GOOD = { service: 'payments', env: 'prod', version: 4711 };

describe('templates on the local stack: POST /v1/messages with template + variables, GET /v1/templates', () => {
  let gw: IngestGateway;
  beforeAll(async () => {
    gw = await startIngestGateway({
      configure: (config) => {
        const { ops, billing } = config.apps as Record<string, GatewayConfig['apps'][string]>;
        Object.assign(ops as object, { templates: { ...OPS_TEMPLATES, pushed: PUSHED } });
        config.hooks = {
          ci: {
            source: 'generic',
            app: 'ops',
            to: { touser: 'hook-user' },
            tokenSha256: sha256(HOOK_TOKEN),
            appTemplate: {
              id: 'deploy_done',
              variables: { service: '{{repo.name}}', env: '{{target}}', version: '{{build}}' },
            },
            timeZone: 'UTC',
            dedupSeconds: 300,
          },
        };
        config.pushKeys = [
          {
            name: 'cron',
            sha256: sha256(SENDKEY),
            app: 'ops',
            to: { touser: 'push-user' },
            msgtype: 'markdown',
            priority: 'normal',
            template: 'pushed',
          },
        ];
        Object.assign(billing as object, { templates: BILLING_TEMPLATES, markdownFallback: 'text' });
      },
    });
  });
  afterAll(() => gw?.stack.stop());

  const waitSent = async (id: string, key = gw.keys.ops) => {
    let last: { status?: string } | undefined;
    await waitFor(
      async () => {
        last = (await gw.get(`/v1/messages/${id}`, { key })).body;
        return last?.status === 'sent';
      },
      20_000,
      () => `message ${id} not sent; last: ${JSON.stringify(last)}`,
    );
  };
  const inbox = (user: string) => gw.stack.simulator?.inbox(user) ?? [];

  it('delivers a template card rendered with its variables to the WeCom simulator', async () => {
    const accepted = await gw.post('/v1/messages', card(GOOD, { touser: 'card-user' }));
    expect(accepted.status).toBe(202);

    await waitSent(accepted.body.id);

    expect(inbox('card-user')).toHaveLength(1);
    expect(inbox('card-user')[0]).toMatchObject({
      msgtype: 'template_card',
      payload: {
        card_type: 'text_notice',
        main_title: { title: 'Deploy of payments finished', desc: 'on prod' },
        horizontal_content_list: [
          { keyname: 'service', value: 'payments' },
          { keyname: 'version', value: '4711' },
        ],
        card_action: { type: 1, url: 'https://ci.example.com/payments' },
      },
    });
  });

  it.each([
    ['a missing required variable', card({ env: 'prod' }), 'variables.service', 'required'],
    [
      'a value over maxBytes',
      card({ ...GOOD, service: `a${'b'.repeat(64)}` }),
      'variables.service',
      'longer than 64 bytes (65 bytes)',
    ],
    ['a value outside enum', card({ ...GOOD, env: 'dev' }), 'variables.env', 'must be one of prod, staging'],
    [
      'a value the pattern refuses',
      card({ ...GOOD, service: 'Pay ments' }),
      'variables.service',
      'must match [a-z][a-z0-9-]*',
    ],
    [
      'an undeclared variable',
      card({ ...GOOD, region: 'eu' }),
      'variables.region',
      "not a variable of template 'deploy_done'",
    ],
    [
      'an object as a value',
      card({ ...GOOD, service: { name: 'x' } }),
      'variables.service',
      'must be a string (numbers and booleans are converted)',
    ],
    [
      'an unknown template',
      card(GOOD, { template: 'deploy_dne' }),
      'template',
      "unknown template 'deploy_dne' for app 'ops'",
    ],
    [
      'template with a msgtype',
      card(GOOD, { msgtype: 'text' }),
      'msgtype',
      'not allowed with template: the template sets the msgtype',
    ],
    [
      'a rendered body over a WeCom limit',
      { app: 'ops', touser: 'u', template: 'log_excerpt', variables: { log: 'x'.repeat(2049) } },
      'text.content',
      '2049 bytes, max 2048; send "split": true to have it delivered in parts',
    ],
  ])(
    'answers %s with a 400 naming the field, storing and queueing nothing',
    async (_what, body, field, message) => {
      const before = await storedState(gw.stack);

      const res = await gw.post('/v1/messages', body);

      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_message');
      expect(res.body.error.details).toContainEqual({ field, message });
      expect(await storedState(gw.stack)).toEqual(before);
    },
  );

  it('sends a template from the CLI: send --template … --var k=v', async () => {
    const target = ['--url', gw.stack.apiUrl, '--key', gw.keys.ops];
    const sent = await cli([
      'send',
      '--app',
      'ops',
      '--to',
      'cli-user',
      '--template',
      'deploy_done',
      '--var',
      'service=web',
      '--var',
      'env=staging',
      ...target,
    ]);
    expect(sent.code, sent.stderr).toBe(0);
    await waitSent(sent.stdout.trim());
    expect(inbox('cli-user')[0]?.payload).toMatchObject({
      main_title: { title: 'Deploy of web finished', desc: 'on staging' },
    });

    const refused = await cli([
      'send',
      '--app',
      'ops',
      '--to',
      'cli-user',
      '--template',
      'deploy_done',
      '--var',
      'env=prod',
      ...target,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('variables.service: required');
  });

  it("sends a hook's delivery as the app template it names, its variables taken from the payload", async () => {
    const res = await gw.post(
      `/v1/hooks/ci/${HOOK_TOKEN}`,
      { repo: { name: 'billing-api' }, target: 'staging', build: 88 },
      { key: null },
    );
    expect(res.status).toBe(202);

    await waitSent(res.body.messages[0].id);

    expect(inbox('hook-user')[0]).toMatchObject({
      msgtype: 'template_card',
      payload: { main_title: { title: 'Deploy of billing-api finished', desc: 'on staging' } },
    });
    const bad = await gw.post(
      `/v1/hooks/ci/${HOOK_TOKEN}`,
      { repo: { name: 'x' }, target: 'dev' },
      { key: null },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([
      { field: 'variables.env', message: 'must be one of prod, staging' },
    ]);
  });

  it("sends a push key's push as the app template it names (title, desp as variables)", async () => {
    const res = await gw.get(`/v1/push/${SENDKEY}?title=Backup%20done&desp=3%20files`, { key: null });
    expect(res.status).toBe(200);

    await waitSent(res.body.id);

    expect(inbox('push-user')[0]?.payload).toEqual({ content: '[Backup done] 3 files' });
  });

  it('accepts template items in a batch, each checked on its own', async () => {
    const res = await gw.post('/v1/messages/batch', {
      messages: [
        card(GOOD, { touser: 'batch-user' }),
        card({ env: 'prod' }, { touser: 'batch-user' }),
        { app: 'ops', touser: 'batch-user', msgtype: 'text', text: { content: 'by hand' } },
      ],
    });

    expect(res.status).toBe(207);
    expect(res.body.results[0]).toEqual({ index: 0, id: expect.any(String), status: 'queued' });
    expect(res.body.results[1].error.details).toEqual([{ field: 'variables.service', message: 'required' }]);
    expect(res.body.results[2].status).toBe('queued');
    await waitSent(res.body.results[0].id);
    await waitSent(res.body.results[2].id);
    const received = inbox('batch-user').map((m) => m.msgtype);
    expect(received.sort()).toEqual(['template_card', 'text']);
  });

  it('answers an Idempotency-Key replay by the rendered message: same variables replay, others conflict', async () => {
    const key = { 'idempotency-key': 'tpl-replay-1' };
    const first = await gw.post('/v1/messages', card(GOOD, { touser: 'idem-user' }), { headers: key });
    const replay = await gw.post('/v1/messages', card(GOOD, { touser: 'idem-user' }), { headers: key });
    const other = await gw.post('/v1/messages', card({ ...GOOD, env: 'staging' }, { touser: 'idem-user' }), {
      headers: key,
    });

    expect(first.status).toBe(202);
    expect(replay.status).toBe(202);
    expect(replay.body.id).toBe(first.body.id);
    expect(other.status).toBe(409);
  });

  it("applies the app's markdownFallback to a rendered markdown template", async () => {
    const res = await gw.post(
      '/v1/messages',
      {
        app: 'billing',
        touser: 'fallback-user',
        template: 'invoice',
        variables: { number: 'F-17', amount: '12 €' },
      },
      { key: gw.keys.billing },
    );
    expect(res.status).toBe(202);

    await waitSent(res.body.id, gw.keys.billing);

    expect(inbox('fallback-user')[0]).toMatchObject({
      msgtype: 'text',
      payload: { content: expect.stringContaining('Invoice F-17') },
    });
    expect(JSON.stringify(inbox('fallback-user')[0]?.payload)).not.toContain('**');
  });

  it('refuses a template of an app the key may not use with 403, before looking it up', async () => {
    const before = await storedState(gw.stack);
    for (const template of ['invoice', 'no_such_template']) {
      const res = await gw.post('/v1/messages', { app: 'billing', touser: 'u', template, variables: {} });
      expect(res.status).toBe(403);
    }
    expect(await storedState(gw.stack)).toEqual(before);
  });

  it('lists the templates of the apps a key may use, with msgtype and variables, never the body', async () => {
    const ops = await gw.get('/v1/templates?app=ops');
    expect(ops.status).toBe(200);
    expect(ops.body).toEqual({
      templates: [
        {
          app: 'ops',
          id: 'deploy_done',
          msgtype: 'template_card',
          description: 'A deploy finished',
          variables: {
            service: { required: true, maxBytes: 64, pattern: '[a-z][a-z0-9-]*', example: 'api' },
            env: { required: true, enum: ['prod', 'staging'] },
            version: { required: false, example: '4711', description: 'build number' },
          },
        },
        {
          app: 'ops',
          id: 'log_excerpt',
          msgtype: 'text',
          description: null,
          variables: { log: { required: true } },
        },
        {
          app: 'ops',
          id: 'pushed',
          msgtype: 'text',
          description: null,
          variables: { title: { required: true, maxBytes: 64 }, desp: { required: false } },
        },
      ],
    });
    expect((await gw.get('/v1/templates')).body).toEqual(ops.body);
    expect((await gw.get('/v1/templates', { key: gw.keys.reader })).body).toEqual(ops.body);
    const billing = await gw.get('/v1/templates', { key: gw.keys.billing });
    expect(billing.body.templates.map((t: { app: string; id: string }) => `${t.app}/${t.id}`)).toEqual([
      'billing/invoice',
    ]);
  });

  it('answers GET /v1/templates for an app the key may not use (or that does not exist) with 403, without a key 401', async () => {
    expect((await gw.get('/v1/templates?app=billing')).status).toBe(403);
    expect((await gw.get('/v1/templates?app=nope')).status).toBe(403);
    expect((await gw.get('/v1/templates', { key: null })).status).toBe(401);
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newDevKey } from '#local/dev-config.js';
import { waitFor } from '#test/helpers/gateway.js';
import { type IngestGateway, startIngestGateway, storedState } from '#test/helpers/ingest-gateway.js';
import { openApiValidators, schemaErrors } from '#test/helpers/openapi.js';
import { ROBOT_KEY, robotMarkdown } from '#test/helpers/robots.js';

/** GET /v1/messages on the local stack: real HTTP, the real SDK, the emulated DynamoDB's indexes. */
describe('GET /v1/messages', () => {
  let gw: IngestGateway;
  const writer = newDevKey();
  /** May send through and read robot `oncall` only, as a team that started with a group robot would. */
  const robotOnly = newDevKey();
  const schema = openApiValidators();
  beforeAll(async () => {
    gw = await startIngestGateway({
      configure: (c) => {
        c.apiKeys.push({
          name: 'writer-key',
          sha256: writer.sha256,
          apps: ['ops'],
          scopes: ['messages:write'],
        });
        c.robots = {
          oncall: { key: ROBOT_KEY, quota: { perMinute: 20, safetyMargin: 0.2, normalShare: 0.8 } },
        };
        c.apiKeys.push({
          name: 'robot-key',
          sha256: robotOnly.sha256,
          apps: [],
          robots: ['oncall'],
          scopes: ['messages:write', 'messages:read'],
        });
      },
    });
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  /** Each test lists what it sent since it began (the tests share app `ops`), and its own recipients. */
  const startOfTest = () => new Date(Date.now() - 1).toISOString();
  const user = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;
  const text = (touser: string | string[], extra: Record<string, unknown> = {}) => ({
    app: 'ops',
    touser,
    msgtype: 'text',
    text: { content: 'disk full on db-1' },
    ...extra,
  });
  const list = async (query: Record<string, string>, key?: string) => {
    const res = await gw.get(`/v1/messages?${new URLSearchParams(query)}`, key ? { key } : {});
    if (res.status === 200) expect(schemaErrors(schema('MessagePage'), res.body)).toEqual([]);
    return res;
  };
  /** Every page of a query, through its cursors. */
  const allPages = async (query: Record<string, string>, key?: string) => {
    const pages: {
      messages: { id: string; created_at: string; status: string }[];
      next_cursor: string | null;
    }[] = [];
    let cursor: string | null = null;
    do {
      const res = await list({ ...query, ...(cursor ? { cursor } : {}) }, key);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      pages.push(res.body);
      cursor = res.body.next_cursor;
      expect(pages.length).toBeLessThan(50);
    } while (cursor);
    return { pages, messages: pages.flatMap((p) => p.messages) };
  };
  const waitStatus = (id: string, status: string) =>
    waitFor(
      async () => (await gw.get(`/v1/messages/${id}`)).body?.status === status,
      20_000,
      () => id,
    );
  /** Until the earlier tests' messages are delivered: their first deliveries would add items in the middle. */
  const settled = async () => {
    let last = '';
    await waitFor(async () => {
      const state = await storedState(gw.stack);
      const now = JSON.stringify(state);
      const still = now === last && state.high === 0 && state.normal === 0;
      last = now;
      return still;
    }, 30_000);
  };

  it('pages through more than a page, newest first, without duplicates or gaps', async () => {
    const since = startOfTest();
    const singles: string[] = [];
    for (let i = 0; i < 4; i++) singles.push((await gw.post('/v1/messages', text(user('pager')))).body.id);
    // A batch's records share one acceptance time: the id orders them.
    const batch = await gw.post('/v1/messages/batch', {
      messages: Array.from({ length: 8 }, () => text(user('pager'))),
    });
    const accepted = [...singles, ...batch.body.results.map((r: { id: string }) => r.id)];

    const { pages, messages } = await allPages({ since, limit: '5' });

    expect(pages.map((p) => p.messages.length)).toEqual([5, 5, 2]);
    expect(pages.at(-1)?.next_cursor).toBeNull();
    expect(messages.map((m) => m.id).sort()).toEqual([...accepted].sort());
    const order = messages.map((m) => `${m.created_at}#${m.id}`);
    expect(order).toEqual([...order].sort().reverse());
    // The singles were accepted one after another, before the batch.
    expect(messages.slice(-4).map((m) => m.id)).toEqual([...singles].reverse());
  });

  it('shows each message as it is now and filters by status: sent, failed, still queued', async () => {
    await settled();
    const since = startOfTest();
    // The next message/send the simulator gets (nothing else is being sent now) fails for good.
    gw.stack.simulator?.faults.script([{ errcode: 40003 }]);
    const refused = (await gw.post('/v1/messages', text(user('nobody')))).body.id;
    await waitStatus(refused, 'failed');
    const delivered = (await gw.post('/v1/messages', text(user('status')))).body.id;
    await waitStatus(delivered, 'sent');

    const page = (await list({ since })).body;
    const ids = async (status: string) => (await allPages({ since, status })).messages.map((m) => m.id);

    expect(page.messages.map((m: { id: string; status: string }) => [m.id, m.status])).toEqual([
      [delivered, 'sent'],
      [refused, 'failed'],
    ]);
    expect(page.messages[0]).toMatchObject({ app: 'ops', attempts: 1, sent_at: expect.any(String) });
    expect(await ids('sent')).toEqual([delivered]);
    expect(await ids('failed')).toEqual([refused]);
    expect(await ids('failed,sent')).toEqual([delivered, refused]);
    expect(await ids('queued')).toEqual([]);
  });

  it('filters by msgtype and by acceptance time (since inclusive, until exclusive)', async () => {
    const since = startOfTest();
    const first = (await gw.post('/v1/messages', text(user('types')))).body.id;
    const markdown = (
      await gw.post('/v1/messages', {
        app: 'ops',
        touser: user('types'),
        msgtype: 'markdown',
        markdown: { content: '**disk** full' },
      })
    ).body.id;
    const last = (await gw.post('/v1/messages', text(user('types')))).body.id;
    const all = (await allPages({ since })).messages;
    const at = (id: string) => all.find((m) => m.id === id)?.created_at as string;

    expect((await allPages({ since, msgtype: 'markdown' })).messages.map((m) => m.id)).toEqual([markdown]);
    expect((await allPages({ since: at(markdown), until: at(last) })).messages.map((m) => m.id)).toEqual([
      markdown,
    ]);
    expect((await allPages({ since, until: at(markdown) })).messages.map((m) => m.id)).toEqual([first]);
  });

  it('finds a message by any of its recipients, whatever the case of the userid', async () => {
    const [alice, bob] = [user('Alice'), user('BOB')];
    const both = (await gw.post('/v1/messages', text([alice, bob]))).body.id;
    const onlyBob = (await gw.post('/v1/messages', text(`${bob}|${user('carol')}`))).body.id;
    await waitStatus(onlyBob, 'sent');

    const byBob = (await allPages({ touser: bob.toLowerCase(), limit: '1' })).messages;
    const byAlice = (await allPages({ touser: alice.toUpperCase() })).messages;

    expect(byBob.map((m) => m.id)).toEqual([onlyBob, both]);
    expect(byBob[0]).toMatchObject({ status: 'sent', touser: [bob, expect.stringMatching(/^carol-/)] });
    expect(byAlice.map((m) => m.id)).toEqual([both]);
    expect((await allPages({ touser: bob, status: 'sent' })).messages.map((m) => m.id)).toContain(onlyBob);
    expect((await list({ touser: user('nobody') })).body).toEqual({ messages: [], next_cursor: null });
  });

  it('shows a key only its own apps: another app’s key sees none of them, and may not name them', async () => {
    const since = startOfTest();
    const ops = (await gw.post('/v1/messages', text(user('tenant')))).body.id;
    const billing = (
      await gw.post('/v1/messages', { ...text(user('tenant')), app: 'billing' }, { key: gw.keys.billing })
    ).body.id;

    const asBilling = (await allPages({ since }, gw.keys.billing)).messages.map((m) => m.id);
    const asOps = (await allPages({ since })).messages.map((m) => m.id);
    const namingOps = await list({ app: 'ops', since }, gw.keys.billing);

    expect(asBilling).toEqual([billing]);
    expect(asOps).toEqual([ops]);
    expect(namingOps.status).toBe(403);
    expect(namingOps.body.error.code).toBe('forbidden');
    expect((await list({ app: 'nosuchapp' })).status).toBe(403);
  });

  it('lists a group robot’s messages under robot=, apart from the apps, with the robot’s own filters', async () => {
    const since = startOfTest();
    const robot = robotOnly.key;
    const posted: string[] = [];
    for (const content of ['disk full', 'disk ok']) {
      const res = await gw.post('/v1/messages', robotMarkdown(content), { key: robot });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      posted.push(res.body.id);
    }
    const app = (await gw.post('/v1/messages', text(user('beside')))).body.id;

    // A key for one robot and no app lists it by default; named, it is the same list.
    const byDefault = (await allPages({ since, limit: '1' }, robot)).messages;
    const named = (await allPages({ robot: 'oncall', since, msgtype: 'markdown' }, robot)).messages;

    expect(byDefault.map((m) => m.id)).toEqual([...posted].reverse());
    expect(byDefault[0]).toMatchObject({ robot: 'oncall', msgtype: 'markdown', touser: [] });
    expect(byDefault[0]).not.toHaveProperty('app');
    expect(named.map((m) => m.id)).toEqual([...posted].reverse());
    // The app's list holds none of them, and the robot's none of the app's.
    const ops = (await allPages({ since })).messages.map((m) => m.id);
    expect(ops).toContain(app);
    expect(ops).not.toContain(posted[0]);
    // A key that does not list the robot may not read it; a cursor of the robot's list is no cursor of an app's.
    expect((await list({ robot: 'oncall' })).status).toBe(403);
    const cursor = (await list({ limit: '1', since }, robot)).body.next_cursor as string;
    expect((await list({ app: 'ops', cursor })).status).toBe(400);
    for (const [query, field] of [
      [{ robot: 'oncall', touser: 'alice' }, 'touser'],
      [{ robot: 'oncall', msgtype: 'textcard' }, 'msgtype'],
      [{ robot: 'oncall', app: 'ops' }, 'robot'],
    ] as const) {
      const res = await list(query, robot);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
    }
  });

  it('needs the messages:read scope, as reading one message does', async () => {
    expect((await list({}, gw.keys.reader)).status).toBe(200);
    const res = await list({}, writer.key);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toMatch(/messages:read/);
    expect((await gw.get('/v1/messages', { key: null })).status).toBe(401);
  });

  it.each([
    ['status', { status: 'delivered' }],
    ['msgtype', { msgtype: 'sms' }],
    ['since', { since: 'yesterday' }],
    ['until', { until: '2026-02-30T00:00:00Z' }],
    ['since', { since: '2026-12-02T00:00:00Z', until: '2026-12-01T00:00:00Z' }],
    ['limit', { limit: '0' }],
    ['limit', { limit: '101' }],
    ['touser', { touser: 'a|b' }],
    ['cursor', { cursor: 'not-a-cursor' }],
    ['user', { user: 'alice' }],
  ])('answers a bad %s with a 400 naming it, and changes nothing', async (field, query) => {
    await settled();
    const before = await storedState(gw.stack);

    const res = await list(query);

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
    expect(await storedState(gw.stack)).toEqual(before);
  });

  it('refuses a cursor of another query: another app’s, or other filters', async () => {
    for (let i = 0; i < 2; i++) {
      await gw.post('/v1/messages', { ...text(user('cursor')), app: 'billing' }, { key: gw.keys.billing });
      await gw.post('/v1/messages', text(user('cursor')));
    }
    const billingCursor = (await list({ limit: '1' }, gw.keys.billing)).body.next_cursor;
    const opsCursor = (await list({ limit: '1' })).body.next_cursor;
    expect([typeof billingCursor, typeof opsCursor]).toEqual(['string', 'string']);

    for (const query of [{ cursor: billingCursor }, { cursor: opsCursor, status: 'sent' }] as Record<
      string,
      string
    >[]) {
      const res = await list(query);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'cursor' })]);
    }
  });
});

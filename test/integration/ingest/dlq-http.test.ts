import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMessageId } from '#lib/ingest/ids.js';
import type { DynamoMessageStore } from '#lib/store/index.js';
import { newDevKey } from '#local/dev-config.js';
import { queueDepth } from '#local/harness/sender.js';
import { deadInQueue as deadLetter, messageStore } from '#test/helpers/dead-letters.js';
import { type JsonBody, startTestGateway, type TestGateway, waitFor } from '#test/helpers/gateway.js';
import { openApiValidators, schemaErrors } from '#test/helpers/openapi.js';

/**
 * The DLQ over HTTP (scope `admin`) on the local stack, with the real SDK against the emulators and the strict
 * simulator readings (WeCom's duplicate check compares only flagged, byte-identical requests). A message "dies"
 * the way a crashing sender leaves it: its body in the lane's DLQ, its record still `queued`.
 */
describe('GET /v1/dlq, GET /v1/dlq/{id}, POST /v1/dlq/{id}/redrive', () => {
  let gw: TestGateway;
  let store: DynamoMessageStore;
  const schema = openApiValidators();
  const opsAdmin = newDevKey();
  const otherAdmin = newDevKey();
  const as = (key: { key: string }) => ({ authorization: `Bearer ${key.key}` });
  const sim = () => {
    if (!gw.stack.simulator) throw new Error('no simulator');
    return gw.stack.simulator;
  };

  beforeAll(async () => {
    gw = await startTestGateway({
      apps: ['ops', 'other'],
      simulator: { readings: 'strict' },
      // The test's own key (gw.key) has the default scopes: everything but admin.
      extraApiKeys: [
        { name: 'ops-admin', sha256: opsAdmin.sha256, apps: ['ops'], scopes: ['admin', 'messages:read'] },
        { name: 'other-admin', sha256: otherAdmin.sha256, apps: ['other'], scopes: ['admin'] },
      ],
    });
    store = messageStore(gw);
  });
  afterAll(async () => {
    await gw?.stack.stop();
  });

  const deadInQueue = (app: string, user: string, content: string, lostAnswerAgoMs?: number) =>
    deadLetter(gw, store, {
      app,
      user,
      content,
      ...(lostAnswerAgoMs !== undefined ? { lostAnswerAgoMs } : {}),
    });

  const idsOf = (body: JsonBody): string[] => body.dead_letters.map((d: JsonBody) => d.id);

  it('lists and shows only the key’s apps’ dead letters, marking them dead; another app’s is left untouched', async () => {
    const mine = await deadInQueue('ops', 'dlq-http-mine', 'mine');
    const theirs = await deadInQueue('other', 'dlq-http-theirs', 'theirs');

    const listed = await gw.get('/v1/dlq', as(opsAdmin));

    expect(listed.status).toBe(200);
    expect(schemaErrors(schema('DeadLetterList'), listed.body)).toEqual([]);
    expect(idsOf(listed.body)).toContain(mine.id);
    expect(idsOf(listed.body)).not.toContain(theirs.id);
    expect(listed.body.dead_letters.find((d: JsonBody) => d.id === mine.id)).toEqual({
      id: mine.id,
      app: 'ops',
      lane: 'normal',
      state: 'dead',
      status: 'dead',
      attempts: 0,
      last_error: 'none recorded (the sender stopped without an answer)',
      age_seconds: expect.any(Number),
      receives: expect.any(Number),
      note: null,
      reconciled: true,
      redrivable: true,
    });
    expect((await store.get(mine.id))?.status).toBe('dead');
    // Read by the same pass, but neither changed nor shown.
    expect((await store.get(theirs.id))?.status).toBe('queued');
    expect(await queueDepth(gw.stack, 'normal-dlq')).toBeGreaterThanOrEqual(2);

    const shown = await gw.get(`/v1/dlq/${mine.id}`, as(opsAdmin));
    expect(shown).toMatchObject({ status: 200, body: { id: mine.id, state: 'dead', redrivable: true } });
    expect(schemaErrors(schema('DeadLetter'), shown.body)).toEqual([]);
    expect(await gw.get(`/v1/dlq/${theirs.id}`, as(opsAdmin))).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
    expect((await gw.get(`/v1/dlq/${newMessageId()}`, as(opsAdmin))).status).toBe(404);

    const theirList = await gw.get('/v1/dlq?lane=normal', as(otherAdmin));
    expect(idsOf(theirList.body)).toContain(theirs.id);
    expect(idsOf(theirList.body)).not.toContain(mine.id);
  });

  it('answers 403 naming the admin scope to a key without it, and changes nothing', async () => {
    const dead = await deadInQueue('ops', 'dlq-http-noadmin', 'no admin');
    const before = await queueDepth(gw.stack, 'normal-dlq');

    const list = await gw.get('/v1/dlq');
    const show = await gw.get(`/v1/dlq/${dead.id}`);
    const redrive = await gw.post(`/v1/dlq/${dead.id}/redrive`, {});

    for (const res of [list, show, redrive]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({
        code: 'forbidden',
        message: expect.stringContaining('admin scope'),
      });
    }
    expect((await store.get(dead.id))?.status).toBe('queued');
    expect(await queueDepth(gw.stack, 'normal-dlq')).toBe(before);
    expect(await queueDepth(gw.stack, 'normal')).toBe(0);
  });

  it('redrives a dead letter through the sender: delivered once, gone from the DLQ', async () => {
    const dead = await deadInQueue('ops', 'dlq-http-redrive', 'bring me back');

    const res = await gw.post(`/v1/dlq/${dead.id}/redrive`, undefined, as(opsAdmin));

    expect(res).toMatchObject({
      status: 200,
      body: {
        id: dead.id,
        lane: 'normal',
        outcome: 'redriven',
        status: 'queued',
        detail: expect.any(String),
      },
    });
    expect(schemaErrors(schema('RedriveResult'), res.body)).toEqual([]);
    const status = await gw.waitForStatus(dead.id, ['sent', 'failed', 'dead']);
    expect(status.status).toBe('sent');
    expect(status.events.map((e: JsonBody) => e.type)).toEqual(['queued', 'redriven', 'sent']);
    await waitFor(async () => (await queueDepth(gw.stack, 'normal')) === 0);
    expect(
      sim()
        .inbox('dlq-http-redrive')
        .map((m) => m.payload),
    ).toEqual([{ content: 'bring me back' }]);
    // Its DLQ copy was deleted: the next redrive finds nothing to redrive.
    expect((await gw.post(`/v1/dlq/${dead.id}/redrive`, undefined, as(opsAdmin))).status).toBe(404);
    // An app of another key: 404, as for an id that does not exist.
    const theirs = await deadInQueue('other', 'dlq-http-not-yours', 'not yours');
    expect((await gw.post(`/v1/dlq/${theirs.id}/redrive`, {}, as(opsAdmin))).status).toBe(404);
    expect((await store.get(theirs.id))?.status).toBe('queued');
  });

  it('refuses with 409 what WeCom’s duplicate check no longer covers, queues nothing, and sends it when forced', async () => {
    const old = await deadInQueue('ops', 'dlq-http-old', 'lost two hours ago', 2 * 3_600_000);

    const shown = await gw.get(`/v1/dlq/${old.id}`, as(opsAdmin));
    const refused = await gw.post(`/v1/dlq/${old.id}/redrive`, {}, as(opsAdmin));

    expect(shown.body).toMatchObject({
      id: old.id,
      state: 'dead',
      redrivable: false,
      not_redrivable_reason: expect.stringContaining('duplicate check (3600 s) no longer covers it'),
    });
    expect(refused).toMatchObject({
      status: 409,
      body: {
        error: { code: 'not_redrivable', message: expect.stringContaining('duplicate check'), details: [] },
      },
    });
    expect(schemaErrors(schema('DeadLetter'), shown.body)).toEqual([]);
    expect(schemaErrors(schema('Error'), refused.body)).toEqual([]);
    expect((await store.get(old.id))?.status).toBe('dead');
    expect(await queueDepth(gw.stack, 'normal')).toBe(0);
    expect(idsOf((await gw.get('/v1/dlq', as(opsAdmin))).body)).toContain(old.id);
    expect(sim().inbox('dlq-http-old')).toEqual([]);

    const forced = await gw.post(`/v1/dlq/${old.id}/redrive`, { force: true }, as(opsAdmin));

    expect(forced.body).toMatchObject({ outcome: 'redriven', detail: expect.stringContaining('forced') });
    expect((await gw.waitForStatus(old.id, ['sent', 'failed'])).status).toBe('sent');
    expect(sim().inbox('dlq-http-old')).toHaveLength(1);
  });

  it('answers 400 naming a bad parameter or body field, and 403 for an app the key may not use', async () => {
    const bad = await gw.get('/v1/dlq?lane=low&limit=0&max=3', as(opsAdmin));
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: JsonBody) => d.field).sort()).toEqual(['lane', 'limit', 'max']);
    expect((await gw.get('/v1/dlq?app=other', as(opsAdmin))).status).toBe(403);
    const body = await gw.post(`/v1/dlq/${newMessageId()}/redrive`, { force: 'yes' }, as(opsAdmin));
    expect(body).toMatchObject({ status: 400, body: { error: { details: [{ field: 'force' }] } } });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallbackEvent } from '#lib/callback/index.js';
import { changes } from '#lib/model/index.js';
import {
  DynamoCardCodeStore,
  DynamoEventStore,
  DynamoMessageStore,
  DynamoWebhookLog,
  InvalidCursorError,
  type StoredEvent,
} from '#lib/store/index.js';
import { messageRecord, startUnitTable, type UnitTable, uniqueId } from '#test/helpers/unit-dynamo.js';

const NOW = Date.parse('2026-12-01T08:00:00Z');
const FAR = 4_102_444_800; // 2100: never expired in these tests

const click = (taskId = 'task-1'): CallbackEvent => ({
  kind: 'template_card_event',
  corpId: 'ww1',
  from: 'alice',
  createTime: 1_790_000_000,
  eventKey: 'approve',
  taskId,
  cardType: 'button_interaction',
  responseCode: '',
  selectedItems: [],
});

const event = (overrides: Partial<StoredEvent> = {}): StoredEvent => ({
  id: uniqueId('evt'),
  app: 'ops',
  receivedAt: '2026-12-01T07:59:00.000Z',
  event: click(),
  ...overrides,
});

describe('DynamoEventStore (dynalite)', () => {
  let table: UnitTable;
  let events: DynamoEventStore;
  let messages: DynamoMessageStore;
  beforeAll(async () => {
    table = await startUnitTable();
    events = new DynamoEventStore(table.db, table.tableName, () => NOW);
    messages = new DynamoMessageStore(table.db, table.tableName, () => NOW);
  });
  afterAll(() => table.stop());

  it('stores an event once: a retry gets the first copy back, with whether its webhook was queued', async () => {
    const app = uniqueId('app');
    const first = event({ app, messageId: 'msg_1' });

    expect(await events.record(first, FAR)).toEqual({ outcome: 'stored' });
    const retry = await events.record({ ...first, receivedAt: '2026-12-01T07:59:09.000Z' }, FAR);
    await events.markNotified(app, first.id);
    const third = await events.record(first, FAR);

    expect(retry).toEqual({ outcome: 'duplicate', first, notified: false });
    expect(third).toMatchObject({ outcome: 'duplicate', notified: true });
    const listed = await events.listByApp(app, '2026-11-01T00:00:00Z', { limit: 10, now: NOW });
    expect(listed.events).toEqual([first]);
    expect(await events.listByMessage('msg_1', 10)).toEqual([first]);
  });

  it('pages an app feed across months, oldest first, and continues from the cursor', async () => {
    const app = uniqueId('app');
    const times = ['2026-10-31T23:59:59.000Z', '2026-11-01T00:00:00.000Z', '2026-11-15T12:00:00.000Z'];
    const stored = times.map((receivedAt, i) => event({ app, id: `evt:${i}`, receivedAt }));
    for (const e of stored) await events.record(e, FAR);

    const first = await events.listByApp(app, '2026-10-01T00:00:00Z', { limit: 2, now: NOW });
    const rest = await events.listByApp(app, 'ignored', {
      limit: 2,
      now: NOW,
      ...(first.cursor ? { cursor: first.cursor } : {}),
    });
    const later = await events.listByApp(app, 'ignored', {
      limit: 2,
      now: NOW,
      ...(rest.cursor ? { cursor: rest.cursor } : {}),
    });
    const since = await events.listByApp(app, '2026-11-01T00:00:00.000Z', { limit: 10, now: NOW });

    expect(first.events).toEqual(stored.slice(0, 2));
    expect(rest.events).toEqual(stored.slice(2));
    expect(later.events).toEqual([]);
    expect(since.events.map((e) => e.id)).toEqual(['evt:1', 'evt:2']);
  });

  it('refuses a cursor it did not hand out', async () => {
    await expect(
      events.listByApp('ops', '', { limit: 1, now: NOW, cursor: 'bm9wZQ' }),
    ).rejects.toBeInstanceOf(InvalidCursorError);
    // Well-formed but with an empty position: DynamoDB would refuse the query (a 500), so it is a bad cursor.
    const empty = Buffer.from(JSON.stringify({ m: '2026-11', a: '' })).toString('base64url');
    await expect(events.listByApp('ops', '', { limit: 1, now: NOW, cursor: empty })).rejects.toBeInstanceOf(
      InvalidCursorError,
    );
  });

  it("finds a card's message by app and task_id through the card index, and no other app's", async () => {
    const taskId = uniqueId('task');
    const record = messageRecord({ taskKey: `ops#${taskId}` });
    await messages.create(record);

    expect(await events.findMessageByTask('ops', taskId)).toBe(record.id);
    expect(await events.findMessageByTask('billing', taskId)).toBeUndefined();
  });
});

describe('DynamoCardCodeStore (dynalite)', () => {
  let table: UnitTable;
  let cards: DynamoCardCodeStore;
  let messages: DynamoMessageStore;
  beforeAll(async () => {
    table = await startUnitTable();
    cards = new DynamoCardCodeStore(table.db, table.tableName);
    messages = new DynamoMessageStore(table.db, table.tableName);
  });
  afterAll(() => table.stop());

  it('keeps the newest click code, hands each code to one taker, and takes a restored one again', async () => {
    const record = messageRecord({ status: 'sent', wecom: { msgid: 'm', response_code: 'send-rc' } });
    await messages.create(record);

    await cards.save(record.id, 'new', '2026-12-01T08:00:02.000Z');
    await cards.save(record.id, 'old', '2026-12-01T08:00:01.000Z');
    const takers = await Promise.all([1, 2, 3].map(() => cards.take(record.id, 'event', 'new')));
    const sendTakers = await Promise.all([1, 2].map(() => cards.take(record.id, 'send', 'send-rc')));
    await cards.restore(record.id, 'send', 'send-rc', '2026-12-01T08:00:00.000Z');

    expect(takers.filter(Boolean)).toHaveLength(1);
    expect(sendTakers.filter(Boolean)).toHaveLength(1);
    expect(await cards.take(record.id, 'send', 'send-rc')).toBe(true);
    expect(await cards.take(record.id, 'event', 'old')).toBe(false);
  });
});

describe('DynamoWebhookLog (dynalite)', () => {
  let table: UnitTable;
  let log: DynamoWebhookLog;
  let messages: DynamoMessageStore;
  beforeAll(async () => {
    table = await startUnitTable();
    log = new DynamoWebhookLog(table.db, table.tableName);
    messages = new DynamoMessageStore(table.db, table.tableName);
  });
  afterAll(() => table.stop());

  it('lists attempts newest first and keeps `dead` once set', async () => {
    const record = messageRecord({ status: 'sent' });
    await messages.create(record);
    const attempt = (n: number, at: string) => ({
      at,
      webhookId: 'wh_1',
      type: 'message.sent',
      attempt: n,
      target: 'https://hooks.example.com/x',
      outcome: 'retry' as const,
      statusCode: 503,
      latencyMs: 12,
    });

    await log.recordAttempt(record.id, attempt(1, '2026-12-01T08:00:00.000Z'), FAR);
    await log.recordAttempt(record.id, attempt(2, '2026-12-01T08:00:05.000Z'), FAR);
    await log.setStatus(record.id, 'dead');
    await log.setStatus(record.id, 'delivered');

    expect((await log.listAttempts(record.id, 10)).map((a) => a.attempt)).toEqual([2, 1]);
    expect((await messages.get(record.id))?.webhookStatus).toBe('dead');
  });
});

describe('DynamoMessageStore status listener (dynalite)', () => {
  let table: UnitTable;
  beforeAll(async () => {
    table = await startUnitTable();
  });
  afterAll(() => table.stop());

  it('tells the listener each written status with the record as written (a first delivery as sent), and survives its failure', async () => {
    const told: [string, string, string][] = [];
    const store = new DynamoMessageStore(table.db, table.tableName, Date.now, async (record, transition) => {
      told.push([record.id, transition, record.status]);
      throw new Error('listener broke');
    });
    const queued = messageRecord();
    const first = messageRecord();
    const unannounced = messageRecord();
    await store.create(queued);

    const moved = await store.transition(
      queued.id,
      changes.fail('2026-12-01T08:00:01.000Z', { code: 'x', message: 'y' }),
    );
    const refused = await store.transition(queued.id, changes.recall('2026-12-01T08:00:02.000Z'));
    const delivery = { at: '2026-12-01T08:00:03.000Z', receipt: { msgid: 'M1' } };
    await store.putFirstDeliveries([
      { id: first.id, delivery, expiresAt: first.expiresAt, origin: first },
      // Without its origin the store cannot say what was sent: not told.
      { id: unannounced.id, delivery, expiresAt: unannounced.expiresAt },
    ]);

    expect([moved, refused]).toEqual([true, false]);
    expect(told).toEqual([
      [queued.id, 'fail', 'failed'],
      [first.id, 'send', 'sent'],
    ]);
  });
});

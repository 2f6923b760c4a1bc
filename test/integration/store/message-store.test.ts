import { BatchWriteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyChange,
  changes,
  type FailedAttempt,
  FRESH_CANCEL_AFTER_MS,
  type MessageRecord,
  type StatusChange,
} from '#lib/model/index.js';
import { DynamoMessageStore, keys, recentEvents, StoreRejectedError } from '#lib/store/index.js';
import { messageRecord, startUnitTable, type UnitTable } from '#test/helpers/unit-dynamo.js';

describe('DynamoMessageStore (dynalite)', () => {
  let table: UnitTable;
  let store: DynamoMessageStore;
  const nowMs = Date.parse('2026-12-01T08:00:00Z');

  beforeAll(async () => {
    table = await startUnitTable();
    store = new DynamoMessageStore(table.db, table.tableName, () => nowMs);
  });
  afterAll(async () => {
    await table.stop();
  });

  const rawItem = async (id: string) =>
    (await table.db.send(new GetCommand({ TableName: table.tableName, Key: keys.message(id) }))).Item;

  it('creates a record that get returns without its keys', async () => {
    const record = messageRecord();

    await store.create(record);

    expect(await store.get(record.id)).toEqual(record);
  });

  it('stores the in-doubt and missed markers under the attribute names older versions read, and reads them back', async () => {
    const since = '2026-12-01T07:59:00.000Z';
    const record = messageRecord({ inDoubt: { since }, missed: { receive: 2 } });
    const batched = messageRecord({ inDoubt: { since } });
    const proved = messageRecord({ missed: { receive: 0 } });

    await store.create(record);
    await store.createBatch([batched, proved]);

    expect(await rawItem(record.id)).toMatchObject({
      mayHaveReachedWecom: true,
      mayHaveReachedAt: since,
      lastAttemptReachedWecom: false,
      notReachedAtReceive: 2,
    });
    expect(await rawItem(batched.id)).toMatchObject({ mayHaveReachedWecom: true, mayHaveReachedAt: since });
    expect(await rawItem(proved.id)).toMatchObject({
      lastAttemptReachedWecom: false,
      notReachedAtReceive: 0,
    });
    for (const r of [record, batched, proved]) {
      expect(await rawItem(r.id)).not.toHaveProperty('inDoubt');
      expect(await rawItem(r.id)).not.toHaveProperty('missed');
      expect(await store.get(r.id)).toEqual(r);
    }
  });

  it('reads a record item with a missed proof as older versions write it', async () => {
    const record = messageRecord();
    await table.db.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          ...keys.message(record.id),
          ...record,
          lastAttemptReachedWecom: false,
          notReachedAtReceive: 3,
        },
      }),
    );

    expect(await store.get(record.id)).toEqual({ ...record, missed: { receive: 3 } });
  });

  it('reads a record item in doubt as older versions write it: flag and time, or the flag alone', async () => {
    const record = messageRecord();
    const { id, createdAt } = record;
    const legacy = messageRecord();
    await table.db.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          ...keys.message(id),
          ...record,
          mayHaveReachedWecom: true,
          mayHaveReachedAt: '2026-12-01T08:00:05.000Z',
        },
      }),
    );
    await table.db.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { ...keys.message(legacy.id), ...legacy, mayHaveReachedWecom: true },
      }),
    );

    expect(await store.get(id)).toEqual({ ...record, inDoubt: { since: '2026-12-01T08:00:05.000Z' } });
    expect(await store.get(legacy.id)).toEqual({ ...legacy, inDoubt: { since: createdAt } });
  });

  it('writes the markers of a change under the stored names, and tells the listener the record', async () => {
    const heard: MessageRecord[] = [];
    const listening = new DynamoMessageStore(
      table.db,
      table.tableName,
      () => nowMs,
      async (r) => {
        heard.push(r);
      },
    );
    const record = messageRecord();
    await listening.create(record);

    await listening.transition(record.id, changes.retry(at, noProof));

    await listening.transition(record.id, changes.defer(at, 1, { since: at }, 'paused'));

    expect(await rawItem(record.id)).toMatchObject({
      mayHaveReachedWecom: true,
      mayHaveReachedAt: at,
      lastAttemptReachedWecom: false,
      notReachedAtReceive: 0,
    });
    expect(await rawItem(record.id)).not.toHaveProperty('inDoubt');
    expect(await rawItem(record.id)).not.toHaveProperty('missed');
    expect(heard[0]?.inDoubt).toEqual({ since: at });
    expect(heard[0]).not.toHaveProperty('mayHaveReachedWecom');
    expect(heard[1]?.missed).toEqual({ receive: 0 });
    expect(heard[1]).not.toHaveProperty('lastAttemptReachedWecom');
  });

  it('answers a second create of the same id with exists, and writes nothing', async () => {
    const record = messageRecord();
    expect(await store.create(record)).toBe('created');

    expect(await store.create({ ...record, status: 'sent' })).toBe('exists');
    expect((await store.get(record.id))?.status).toBe('queued');
  });

  it('returns undefined for an unknown id', async () => {
    expect(await store.get('msg_missing')).toBeUndefined();
  });

  it('treats a record past its expiresAt as absent', async () => {
    const record = messageRecord({ expiresAt: Math.floor(nowMs / 1000) - 1 });
    await store.create(record);

    expect(await store.get(record.id)).toBeUndefined();
    expect(await rawItem(record.id)).toBeDefined();
  });

  const at = '2026-12-01T08:00:01.000Z';
  const noProof: FailedAttempt = {
    receive: 2,
    number: 2,
    startedAt: at,
    inDoubt: true,
    earlierInDoubt: undefined,
    detail: 'ETIMEDOUT',
  };
  const missed: FailedAttempt = { ...noProof, receive: 1, number: 1, inDoubt: false, detail: 'errcode -1' };
  const namedChanges: [string, StatusChange][] = [
    ['withdraw', changes.withdraw(at, 'enqueue_failed')],
    ['send', changes.send(at, { msgid: 'MSGID1', invaliduser: 'ghost' })],
    ['retry (missed WeCom)', changes.retry(at, missed)],
    ['retry (unknown)', changes.retry(at, noProof)],
    ['retry (counted, as a fresh copy)', changes.retry(at, { ...noProof, number: 30 }, 4)],
    ['die', changes.die(at, noProof, { code: 'budget_exhausted', message: 'gave up' })],
    ['expire', changes.expire(at, { code: 'ttl_expired', message: 'too late' })],
    ['defer', changes.defer(at, 3, { since: '2026-12-01T07:00:00.000Z' }, 'quota app-minute; retry in 40s')],
    ['defer (counted)', changes.defer(at, 30, undefined, 'quota app-minute; retry in 40s')],
    ['fail', changes.fail(at, { code: 'wecom_rejected', message: 'invalid user', wecom_errcode: 81013 })],
    ['recall', changes.recall(at)],
    ['sendPart', changes.sendPart(at, { msgid: 'MSGID2' }, { touser: ['alice'], waiting: 3, generation: 2 })],
    [
      'sendPart (counted: a fan-out deferred past the listed generations)',
      changes.sendPart(at, { msgid: 'MSGID3' }, { touser: ['bob'], waiting: 1, generation: 25 }),
    ],
    ['send (the last part)', changes.send(at, { msgid: 'MSGID4' }, { touser: ['carol'] })],
  ];

  it.each(namedChanges)('applies %s exactly as the in-memory reference does', async (_, change) => {
    // A record with an older proof and attempts, so clearing, setting and adding are all visible.
    const record = messageRecord({
      status: change.from[0],
      attempts: 1,
      missed: { receive: 1 },
    });
    await store.create(record);

    const moved = await store.transition(record.id, change);

    expect(moved).toBe(true);
    expect(await store.get(record.id)).toEqual(applyChange(record, change));
  });

  it('returns false and changes nothing when the current status is not in `from`', async () => {
    const record = messageRecord({ status: 'sent' });
    await store.create(record);

    const moved = await store.transition(record.id, changes.withdraw('later', 'store_failed'));

    expect(moved).toBe(false);
    expect(await store.get(record.id)).toEqual(record);
  });

  it('applies an operator change only at the generation it names, as applyChange does', async () => {
    const record = messageRecord({
      status: 'dead',
      generation: 2,
      inDoubt: { since: 'early' },
      error: { code: 'dead_lettered', message: 'in the DLQ' },
    });
    await store.create(record);
    const redrive = (from: number, forced: boolean) =>
      changes.redrive('t1', {
        from,
        to: from + 1,
        inDoubt: { since: 'late' },
        forced,
        detail: 'from the DLQ',
      });

    const stale = await store.transition(record.id, redrive(1, true));
    const moved = await store.transition(record.id, redrive(2, true));

    expect(stale).toBe(false);
    expect(moved).toBe(true);
    const stored = await store.get(record.id);
    expect(stored).toEqual(applyChange(record, redrive(2, true)));
    expect(stored).toMatchObject({ status: 'queued', generation: 3, inDoubt: { since: 'late' } });
    expect(stored).not.toHaveProperty('error');
  });

  it('settles the doubt of a part of split content once its next part is queued, as applyChange does', async () => {
    const record = messageRecord({ status: 'deferred', generation: 1, inDoubt: { since: 'early' } });
    await store.create(record);
    const done = changes.sendSegment(
      't1',
      { msgid: 'M1' },
      { segment: 0, count: 2, touser: ['a'], generation: 2 },
    );

    expect(await store.transition(record.id, done)).toBe(true);

    const stored = await store.get(record.id);
    expect(stored).toEqual(applyChange(record, done));
    expect(stored).not.toHaveProperty('inDoubt');
    expect(await rawItem(record.id)).not.toHaveProperty('mayHaveReachedWecom');
    expect(stored?.parts).toEqual([
      { touser: ['a'], sentAt: 't1', wecom: { msgid: 'M1' }, segment: 0, completes: true },
    ]);
  });

  it('notes an event without a status change, also on a first-delivered record, in time order', async () => {
    const record = messageRecord({ status: 'queued' });
    await store.create(record);
    await store.putFirstDeliveries([
      {
        id: record.id,
        delivery: { at: '2026-12-01T08:00:02.000Z', receipt: { msgid: 'M' } },
        expiresAt: record.expiresAt,
      },
    ]);
    const noted = { at: '2026-12-01T08:00:09.000Z', type: 'card_updated', detail: 'buttons replaced' };

    expect(await store.noteEvent(record.id, noted)).toBe(true);
    expect(await store.noteEvent('msg_01JNOSUCHRECORD0000000000X', noted)).toBe(false);

    const stored = await store.get(record.id);
    expect(stored?.status).toBe('sent');
    // Stored: card_updated; folded in on read, after it: the first delivery's sent, which came first.
    expect(recentEvents(stored ?? {}).map((e) => e.type)).toEqual(['sent', 'card_updated']);
  });

  it('returns false for a record that does not exist, without creating it', async () => {
    const moved = await store.transition('msg_nobody', changes.fail('now', { code: 'x', message: 'y' }));

    expect(moved).toBe(false);
    expect(await rawItem('msg_nobody')).toBeUndefined();
  });

  it('appends events in order, starting from a record without events, and adds up attempts', async () => {
    const record = messageRecord({ attempts: 1 });
    await store.create(record);

    await store.transition(record.id, changes.defer('t1', 1, undefined, 'member-minute'));
    await store.transition(record.id, changes.retry('t2', { ...noProof, receive: 1 }));
    await store.transition(record.id, changes.retry('t3', { ...noProof, receive: 2 }));

    const stored = await store.get(record.id);
    expect(stored?.events).toEqual([
      { at: 't1', type: 'deferred', detail: 'member-minute' },
      { at: 't2', type: 'retry', detail: 'ETIMEDOUT' },
      { at: 't3', type: 'retry', detail: 'ETIMEDOUT' },
    ]);
    expect(stored?.attempts).toBe(3);
  });

  it('keeps the proof that an attempt missed WeCom, with its receive, and drops it after an unknown outcome', async () => {
    const record = messageRecord();
    await store.create(record);

    await store.transition(record.id, changes.retry('t1', missed));
    const afterMissed = await store.get(record.id);
    await store.transition(record.id, changes.retry('t2', noProof));
    const afterUnknown = await store.get(record.id);

    expect(afterMissed).toMatchObject({ missed: { receive: 1 } });
    expect(afterMissed).not.toHaveProperty('inDoubt');
    expect(afterUnknown).not.toHaveProperty('missed');
    expect(afterUnknown?.inDoubt).toBeDefined();
  });

  it('creates a batch of 60 records in three BatchWriteItem requests', async () => {
    const requests: string[] = [];
    const counting = {
      send: (command: { constructor: { name: string } }) => {
        requests.push(command.constructor.name);
        return table.db.send(command as never);
      },
    };
    const batchStore = new DynamoMessageStore(counting as never, table.tableName, () => nowMs);
    const records = Array.from({ length: 60 }, () => messageRecord());

    expect(await batchStore.createBatch(records)).toEqual({ unwritten: [], tooLarge: [] });

    expect(requests).toEqual(['BatchWriteCommand', 'BatchWriteCommand', 'BatchWriteCommand']);
    expect(await Promise.all(records.map((r) => store.get(r.id)))).toEqual(records);
  });

  it('retries unprocessed items and reports a failed chunk as not written, the rest as written', async () => {
    let calls = 0;
    const flaky = {
      send: async (command: BatchWriteCommand) => {
        calls++;
        const items = command.input.RequestItems?.[table.tableName] ?? [];
        const first = items[0]?.PutRequest?.Item as { id: string } | undefined;
        if (first?.id === 'fails') throw new Error('throttled for good');
        // The first answer leaves one item unprocessed, as DynamoDB does under throttling.
        if (calls === 1) {
          await table.db.send(new BatchWriteCommand({ RequestItems: { [table.tableName]: items.slice(1) } }));
          return { UnprocessedItems: { [table.tableName]: items.slice(0, 1) } };
        }
        return table.db.send(command);
      },
    };
    const batchStore = new DynamoMessageStore(flaky as never, table.tableName, () => nowMs);
    const good = Array.from({ length: 25 }, () => messageRecord());
    const bad = [{ ...messageRecord(), id: 'fails' }, messageRecord()];

    const { unwritten: notWritten } = await batchStore.createBatch([...good, ...bad]);

    expect(notWritten.sort()).toEqual(bad.map((r) => r.id).sort());
    expect(await Promise.all(good.map((r) => store.get(r.id)))).toEqual(good);
    await expect(batchStore.createBatch(bad)).rejects.toThrow('throttled for good');
  });

  const delivery = (id: string, msgid: string) => ({
    id,
    delivery: { at: 't1', receipt: { msgid } },
    expiresAt: Math.floor(nowMs / 1000) + 3600,
  });

  it('records first deliveries over several BatchWriteItem chunks, read back as sent records', async () => {
    const records = Array.from({ length: 30 }, () => messageRecord());
    await store.createBatch(records);

    const failed = await store.putFirstDeliveries(records.map((r, i) => delivery(r.id, `M${i}`)));

    expect(failed).toEqual([]);
    const stored = await Promise.all(records.map((r) => store.get(r.id)));
    for (const [i, r] of stored.entries()) {
      expect(r).toMatchObject({ status: 'sent', sentAt: 't1', attempts: 1, wecom: { msgid: `M${i}` } });
    }
  });

  it('never overwrites the record: one failed or recalled meanwhile stays so (review M5)', async () => {
    const failed = messageRecord();
    const recalled = messageRecord({ status: 'sent', sentAt: 't0', wecom: { msgid: 'FIRST' } });
    await store.create(failed);
    await store.create(recalled);
    await store.transition(failed.id, changes.withdraw('t0', 'enqueue_failed'));
    await store.transition(recalled.id, changes.recall('t0'));

    await store.putFirstDeliveries([delivery(failed.id, 'M1'), delivery(recalled.id, 'M2')]);

    expect(await store.get(failed.id)).toMatchObject({ status: 'failed', error: { code: 'enqueue_failed' } });
    expect(await store.get(recalled.id)).toMatchObject({ status: 'recalled', wecom: { msgid: 'FIRST' } });
    expect(await rawItem(failed.id)).toMatchObject({ status: 'failed' });
  });

  it('keeps a first delivery apart from the record item, in the same partition', async () => {
    const record = messageRecord();
    await store.create(record);

    await store.putFirstDeliveries([delivery(record.id, 'M1')]);

    expect(await rawItem(record.id)).toMatchObject({ status: 'queued' });
    expect(await store.get(record.id)).toMatchObject({
      status: 'sent',
      firstDelivery: { at: 't1', receipt: { msgid: 'M1' } },
    });
  });

  it('reports an item over 400 KB as rejected, not as unavailable', async () => {
    const record = messageRecord({ metadata: { big: 'x'.repeat(420_000) } });

    const err = await store.create(record).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(StoreRejectedError);
    expect((err as StoreRejectedError).tooLarge).toBe(true);
  });

  it('writes a batch chunk DynamoDB refused for one oversized item item by item, refusing only that one', async () => {
    const good = Array.from({ length: 4 }, () => messageRecord());
    const big = messageRecord({ metadata: { big: 'x'.repeat(420_000) } });

    const result = await store.createBatch([...good, big]);

    expect(result).toEqual({ unwritten: [big.id], tooLarge: [big.id] });
    expect(await Promise.all(good.map((r) => store.get(r.id)))).toEqual(good);
  });

  it('shows the newest counted event after the listed ones', () => {
    const events = [
      { at: 't1', type: 'queued' },
      { at: 't3', type: 'sent' },
    ];
    expect(recentEvents({ events, lastEvent: { at: 't2', type: 'deferred' } }).map((e) => e.at)).toEqual([
      't1',
      't2',
      't3',
    ]);
    expect(recentEvents({ events })).toEqual(events);
  });

  describe('the claim and the cancel (the fence of docs/scheduling.md)', () => {
    const at = '2026-12-01T08:00:00.000Z';
    const longAgo = new Date(Date.parse(at) - FRESH_CANCEL_AFTER_MS - 1).toISOString();

    it('lets one first receive claim a generation, a redelivery claim it again, and nothing claim a canceled message', async () => {
      const record = messageRecord({ status: 'deferred', generation: 2 });
      await store.create(record);
      expect(await store.claimCopy(record.id, 2)).toBe(true);
      expect(await store.claimCopy(record.id, 2)).toBe(false);
      expect(await store.claimCopy(record.id, 2, { redelivery: true })).toBe(true);
      expect(await store.claimCopy(record.id, 1, { redelivery: true })).toBe(false);

      const canceled = messageRecord({ status: 'scheduled', generation: 1 });
      await store.create(canceled);
      expect(await store.transition(canceled.id, changes.cancel(at, 'ci'))).toBe(true);
      expect(await store.claimCopy(canceled.id, 1)).toBe(false);
      expect((await store.get(canceled.id))?.status).toBe('canceled');
    });

    it('writes a cancel exactly when lib/model says it may be: unclaimed, not in doubt, none sent, past a fresh window', async () => {
      const part = { touser: ['a'], sentAt: at, wecom: { msgid: 'M' } };
      const cases: [string, Partial<MessageRecord>][] = [
        ['scheduled, unclaimed', { status: 'scheduled', generation: 1 }],
        ['scheduled, claimed', { status: 'scheduled', generation: 1, claimedGeneration: 1 }],
        ['deferred, claimed by the older copy', { status: 'deferred', generation: 3, claimedGeneration: 2 }],
        ['deferred, in doubt', { status: 'deferred', generation: 3, inDoubt: { since: at } }],
        ['deferred, sent in part', { status: 'deferred', generation: 3, parts: [part] }],
        ['queued at once, fresh', { status: 'queued', generation: 0, createdAt: at }],
        ['queued at once, long ago', { status: 'queued', generation: 0, createdAt: longAgo }],
        [
          'queued at once, long ago, claimed',
          { status: 'queued', generation: 0, createdAt: longAgo, claimedGeneration: 0 },
        ],
        ['sent', { status: 'sent', generation: 1 }],
      ];
      for (const [name, fields] of cases) {
        const record = messageRecord(fields);
        await store.create(record);
        const change = changes.cancel(at, 'ci');
        const expected = applyChange(record, change) !== undefined;
        expect(await store.transition(record.id, change), name).toBe(expected);
        expect((await store.get(record.id))?.status, name).toBe(expected ? 'canceled' : record.status);
      }
    });
  });
});
